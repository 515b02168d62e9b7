// lazytrain's C++ errors as the Python exceptions PyTorch raises for the same mistakes, their
// messages naming the Python caller's line in place of the bindings' call site.
#include <string>

#include "python/src/bind.h"

namespace lt::py {
namespace {

/// The message with the bindings' call site replaced by the user's Python file:line, which
/// lazytrain._location finds on the Python stack (the translator runs with the GIL held).
std::string located(const char* what) {
  std::string msg = what;
  const std::string& site = call_site_text();
  if (msg.find(site) == std::string::npos) return msg;
  const std::string user = python_caller();
  if (user.empty()) return msg;  // no Python location to give: keep the message as it is
  for (size_t at = msg.find(site); at != std::string::npos; at = msg.find(site, at + user.size()))
    msg.replace(at, site.size(), user);
  return msg;
}

/// PyTorch raises IndexError for a dim out of range ("Dimension out of range"), where the C++
/// API says "<op>: axis 5 out of range for rank 2".
PyObject* error_type(const std::string& msg) {
  return msg.find(" out of range for rank ") != std::string::npos ? PyExc_IndexError
                                                                  : PyExc_RuntimeError;
}

}  // namespace

void bind_errors(pb::module_& m) {
  // lt::Error's base is std::runtime_error: the more specific types are caught first.
  pb::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const TypeError& e) {
      PyErr_SetString(PyExc_TypeError, located(e.what()).c_str());
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, located(e.what()).c_str());
    } catch (const Error& e) {
      const std::string msg = located(e.what());
      PyErr_SetString(error_type(msg), msg.c_str());
    } catch (const InternalError& e) {
      PyErr_SetString(PyExc_RuntimeError, located(e.what()).c_str());
    }
  });
  m.attr("call_site") = call_site_text();
}

}  // namespace lt::py
