// Creation kernels: constant fill, iota, and Philox random draws.
#include "ir/error.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/storage_types.h"
#include "runtime/philox.h"
#include "runtime/thread_pool.h"

namespace lt::rt {

void run_creation(ir::CreationOp op, const ir::Attrs& attrs, Ins in, Outs out) {
  const TensorRef& o = out[0];
  const int64_t n = o.numel();
  switch (op) {
    case ir::CreationOp::Full: {
      const double v = std::get<ir::FullAttrs>(attrs).value;
      return dispatch_storage(o.dtype(), [&](auto t) {
        using T = decltype(t);
        const T x = convert_value<T>(v);
        T* p = o.as<T>();
        parallel_for(n, 65536, [&](int64_t b, int64_t e) { std::fill(p + b, p + e, x); });
      });
    }
    case ir::CreationOp::Iota: {
      const auto& a = std::get<ir::IotaAttrs>(attrs);
      return dispatch_dtype(o.dtype(), [&](auto t) {
        using T = decltype(t);
        T* p = o.as<T>();
        for (int64_t i = 0; i < n; ++i)
          p[i] = static_cast<T>(a.start + static_cast<double>(i) * a.step);
      });
    }
    case ir::CreationOp::RandUniform:
    case ir::CreationOp::RandNormal: {
      const auto key = static_cast<uint64_t>(*in[0].as<int64_t>());
      const auto counter = static_cast<uint64_t>(*in[1].as<int64_t>());
      const bool normal = op == ir::CreationOp::RandNormal;
      return dispatch_float(o.dtype(), [&](auto t) {
        using T = decltype(t);
        if (normal) philox_normal(key, counter, o.as<T>(), n);
        else philox_uniform(key, counter, o.as<T>(), n);
      });
    }
  }
  LT_UNREACHABLE();
}

}  // namespace lt::rt
