// Creation family.
#include <fmt/format.h>

#include "ir/type_rules.h"

namespace lt::ir {

TypeList infer_creation(CreationOp op, std::span<const TensorType> in, const Attrs& a) {
  auto check_shape = [](const Shape& s) {
    for (int64_t d : s)
      if (d < 0) type_fail(fmt::format("negative size in shape {}", shape_str(s)));
  };
  switch (op) {
    case CreationOp::Full: {
      const auto& fa = std::get<FullAttrs>(a);
      check_shape(fa.shape);
      if (!holds_value(fa.dtype, fa.value))
        type_fail(fmt::format("value {} does not fit {}", fa.value, dtype_name(fa.dtype)));
      return {{fa.dtype, fa.shape}};
    }
    case CreationOp::Iota: {
      const auto& ia = std::get<IotaAttrs>(a);
      if (ia.size < 0) type_fail(fmt::format("negative size {}", ia.size));
      if (!is_compute_type(ia.dtype) || ia.dtype == DType::Bool) type_fail("dtype must be numeric");
      // The values are start + i * step, monotonic in i: both ends must fit.
      const double last = ia.start + static_cast<double>(ia.size - 1) * ia.step;
      if (ia.size > 0 && !(holds_value(ia.dtype, ia.start) && holds_value(ia.dtype, last)))
        type_fail(fmt::format("values {} to {} do not fit {}", ia.start, last,
                              dtype_name(ia.dtype)));
      return {{ia.dtype, {ia.size}}};
    }
    case CreationOp::RandUniform:
    case CreationOp::RandNormal: {
      const auto& ra = std::get<RandomAttrs>(a);
      check_shape(ra.shape);
      const TensorType scalar{DType::I64, {}};
      for (const TensorType& t : in)
        if (t != scalar)
          type_fail(fmt::format("key and counter must be {}, got {}", type_str(scalar),
                                type_str(t)));
      if (ra.dtype != DType::F32 && ra.dtype != DType::F64) type_fail("dtype must be f32 or f64");
      return {{ra.dtype, ra.shape}};
    }
  }
  type_fail("unknown creation op");
}

}  // namespace lt::ir
