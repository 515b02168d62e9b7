#include "python/src/call_site.h"

#include <pybind11/pybind11.h>

#include <atomic>
#include <string_view>

#include "ir/location_namer.h"

namespace lt::py {
namespace {

namespace pb = pybind11;

thread_local std::string t_caller;  // the CallerNamed scope's, or empty
std::atomic<bool> g_every_call{false};

}  // namespace

const Loc& call_site() {
  static const Loc loc = Loc::current();
  return loc;
}

const std::string& call_site_text() {
  static const std::string text = [] {
    std::string_view f = call_site().file_name();
    if (auto pos = f.find_last_of('/'); pos != std::string_view::npos) f = f.substr(pos + 1);
    return std::string(f) + ":" + std::to_string(call_site().line());
  }();
  return text;
}

std::string python_caller() {
  try {
    return pb::module_::import("lazytrain._location").attr("user_location")().cast<std::string>();
  } catch (const pb::error_already_set&) {
    return {};
  }
}

void register_caller_namer() {
  set_location_namer(call_site(), []() -> std::string {
    if (!t_caller.empty()) return t_caller;
    if (!g_every_call.load(std::memory_order_relaxed) || !Py_IsInitialized()) return {};
    pb::gil_scoped_acquire gil;  // a C++ call made with the GIL released (backward) names too
    return python_caller();
  });
}

void name_every_call(bool on) { g_every_call.store(on); }

CallerNamed::CallerNamed() : previous_(t_caller) { t_caller = python_caller(); }
CallerNamed::~CallerNamed() { t_caller = previous_; }

}  // namespace lt::py
