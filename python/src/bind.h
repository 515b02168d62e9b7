// What the binding files share: pybind11, the C++ API and one registration function per file.
#pragma once
#include <optional>
#include <variant>

#include "lt/lt.h"
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "python/src/call_site.h"

namespace lt::py {

namespace pb = pybind11;

void bind_errors(pb::module_& m);
void bind_tensor(pb::module_& m);
void bind_ops(pb::module_& m);
void bind_ops_nn(pb::module_& m);
void bind_modes(pb::module_& m);
void bind_optim(pb::module_& m);
void bind_amp(pb::module_& m);
void bind_io(pb::module_& m);
void bind_dist(pb::module_& m);
void bind_vision(pb::module_& m);
void bind_function(pb::module_& m);

/// The dtype codes the Python side names (lazytrain/_dtype.py keeps the same order).
inline DType dtype_of(int code) { return static_cast<DType>(code); }

/// A Python number that keeps its category: an int binds as int64_t (pybind11 does not take a
/// float for it), a float as double, so lt::Scalar promotes as torch's wrapped numbers do.
using Number = std::variant<int64_t, double>;
inline std::optional<Scalar> scalar_of(const std::optional<Number>& n) {
  if (!n) return std::nullopt;
  return std::visit([](auto v) { return Scalar(v); }, *n);
}

}  // namespace lt::py
