// lt::Tensor as _C.Tensor: its handle, autograd state, in-place ops and host values. The Python
// class lazytrain.Tensor is this type with PyTorch's methods added (lazytrain/_tensor.py).
#include <pybind11/numpy.h>

#include <vector>

#include "python/src/bind.h"

namespace lt::py {
namespace {

template <class T>
pb::array host_array(const Tensor& t) {
  std::vector<T> v;
  {
    CallerNamed named;
    pb::gil_scoped_release release;  // in lazy mode reading values runs the pending graph
    v = t.to_vector<T>(call_site());
  }
  std::vector<pb::ssize_t> shape(t.shape().begin(), t.shape().end());
  pb::array_t<T> out(shape);
  T* dst = out.mutable_data();
  for (size_t i = 0; i < v.size(); ++i) dst[i] = v[i];  // element-wise: vector<bool> has no data()
  return out;
}

/// A numpy array over the external memory of t (a tensor from numpy or DLPack, which numpy()
/// gives back as PyTorch does), keeping t alive; None when t's values are lazytrain's.
pb::object external_array(const Tensor& t) {
  void* data = nullptr;
  {
    CallerNamed named;
    pb::gil_scoped_release release;  // in lazy mode its pending in-place results run first
    data = t.external_data(call_site());
  }
  if (!data) return pb::none();
  pb::dtype dtype;
  switch (t.dtype()) {
    case DType::Bool: dtype = pb::dtype::of<bool>(); break;
    case DType::I32: dtype = pb::dtype::of<int32_t>(); break;
    case DType::I64: dtype = pb::dtype::of<int64_t>(); break;
    case DType::F16: dtype = pb::dtype("float16"); break;
    case DType::F32: dtype = pb::dtype::of<float>(); break;
    case DType::F64: dtype = pb::dtype::of<double>(); break;
    case DType::BF16: return pb::none();  // numpy has no bfloat16
  }
  std::vector<pb::ssize_t> shape(t.shape().begin(), t.shape().end());
  return pb::array(dtype, shape, data, pb::cast(t));
}

/// The values; f16 and bf16 come as float32 (the Python side narrows f16, numpy has no bf16).
pb::array to_numpy(const Tensor& t) {
  if (pb::object shared = external_array(t); !shared.is_none()) return shared;
  switch (t.dtype()) {
    case DType::Bool: return host_array<bool>(t);
    case DType::I32: return host_array<int32_t>(t);
    case DType::I64: return host_array<int64_t>(t);
    case DType::F64: return host_array<double>(t);
    case DType::F16:
    case DType::BF16:
    case DType::F32: return host_array<float>(t);
  }
  LT_UNREACHABLE();
}

template <class T>
Tensor from_array(const pb::array& a, DType dtype) {
  auto c = pb::array_t<T, pb::array::c_style | pb::array::forcecast>::ensure(a);
  if (!c) throw pb::error_already_set();
  Shape shape;
  for (pb::ssize_t i = 0; i < c.ndim(); ++i) shape.push_back(c.shape(i));
  std::vector<T> v(c.data(), c.data() + c.size());
  Tensor t = from_vector<T>(v, shape, call_site());
  return t.dtype() == dtype ? t : cast(t, dtype, call_site());
}

/// A copy of a numpy array's values as a tensor of `dtype` (f16 and bf16 through float32).
Tensor from_numpy(const pb::array& a, int code) {
  const DType dtype = dtype_of(code);
  switch (dtype) {
    case DType::Bool: return from_array<bool>(a, dtype);
    case DType::I32: return from_array<int32_t>(a, dtype);
    case DType::I64: return from_array<int64_t>(a, dtype);
    case DType::F64: return from_array<double>(a, dtype);
    case DType::F16:
    case DType::BF16:
    case DType::F32: return from_array<float>(a, dtype);
  }
  LT_UNREACHABLE();
}

/// A tensor over a numpy array's memory (lt::from_blob), holding a reference to the array; None
/// where the array's layout does not allow it (the Python side then copies): not C-contiguous,
/// read-only (unless `read_only_ok`: DLPack's arrays are marked so, and torch.from_dlpack writes
/// to them all the same), or elements of another size than `code`'s.
pb::object share_numpy(const pb::array& a, int code, bool read_only_ok) {
  const DType dtype = dtype_of(code);
  if (!(a.flags() & pb::array::c_style) || (!a.writeable() && !read_only_ok) ||
      static_cast<size_t>(a.itemsize()) != dtype_size(dtype) ||
      reinterpret_cast<uintptr_t>(a.data()) % dtype_size(dtype) != 0)
    return pb::none();
  Shape shape(a.shape(), a.shape() + a.ndim());
  auto* array = new pb::object(a);
  auto release = [array](void*) {
    // The last tensor may go on any thread, or after the interpreter (whose memory it was).
    if (!Py_IsInitialized()) return;
    pb::gil_scoped_acquire gil;
    delete array;
  };
  return pb::cast(
      from_blob(const_cast<void*>(a.data()), std::move(shape), dtype, release, call_site()));
}

pb::tuple shape_of(const Tensor& t) {
  pb::tuple out(t.shape().size());
  for (size_t i = 0; i < t.shape().size(); ++i) out[i] = t.shape()[i];
  return out;
}

}  // namespace

void bind_tensor(pb::module_& m) {
  using T = Tensor;
  const Loc& at = call_site();
  pb::class_<T>(m, "Tensor")
      .def(pb::init<>())
      .def(pb::init([](const T& t) { return t; }), "Another handle to the same tensor")
      .def(pb::init([](const pb::object& array_like) {
             return pb::module_::import("lazytrain._convert").attr("array_like_tensor")(
                 array_like).cast<T>();
           }), "A copy of an object with __array__ (numpy, torch)")
      .def_property_readonly("_shape", &shape_of)
      .def_property_readonly("_dtype", [](const T& t) { return static_cast<int>(t.dtype()); })
      .def("_defined", &T::defined)
      .def("numel", &T::numel)
      .def("_impl_id", [](const T& t) { return reinterpret_cast<uintptr_t>(t.impl()); })
      .def_property_readonly("requires_grad", &T::requires_grad)
      .def_property_readonly("is_leaf", &T::is_leaf)
      .def("_grad_fn_name", &T::grad_fn_name)
      .def("_requires_grad_", [at](T& t, bool on) { t.requires_grad_(on, at); })
      .def("_grad", [](const T& t) -> std::optional<T> {
        T g = t.grad();
        return g.defined() ? std::optional<T>(g) : std::nullopt;
      })
      .def("_set_grad", [](T& t, std::optional<T> g) {
        if (g) t.set_grad(*g); else t.zero_grad();
      })
      .def("detach", &T::detach)
      // Points this Python object at another tensor (PyTorch's `p.data = t`): the object, a
      // module's Parameter, keeps its identity while its values, dtype and shape change.
      .def("_set_handle", [](T& t, const T& other) { t = other; })
      .def_property_readonly("_version", &T::version)
      .def("_backward", [at](const T& t, std::optional<T> grad) {
        CallerNamed named;
        pb::gil_scoped_release release;  // hooks written in Python take the GIL back
        if (grad) t.backward(*grad, at); else t.backward(at);
      })
      .def("register_hook", [at](const T& t, pb::function hook) {
        return t.register_hook([hook](const T& g) -> T {
          pb::gil_scoped_acquire gil;
          pb::object r = hook(g);
          return r.is_none() ? T() : r.cast<T>();
        }, at);
      })
      .def("remove_hook", &T::remove_hook)
      .def("_str", [at](const T& t) {
        CallerNamed named;
        pb::gil_scoped_release release;
        return t.str(at);
      })
      .def("_numpy", &to_numpy)
      .def("_item", [at](const T& t) -> pb::object {
        CallerNamed named;
        if (is_float(t.dtype())) {
          double v;
          {
            pb::gil_scoped_release release;
            v = t.item<double>(at);
          }
          return pb::float_(v);
        }
        int64_t v;
        {
          pb::gil_scoped_release release;
          v = t.item<int64_t>(at);
        }
        if (t.dtype() == DType::Bool) return pb::bool_(v != 0);
        return pb::int_(v);
      })
      // In place: each rebinds this handle's tensor, so every Python object holding it (and
      // every view of it) sees the new values.
      .def("_add_", [at](T& t, const T& o) { t.add_(o, at); })
      .def("_sub_", [at](T& t, const T& o) { t.sub_(o, at); })
      .def("_mul_", [at](T& t, const T& o) { t.mul_(o, at); })
      .def("_div_", [at](T& t, const T& o) { t.div_(o, at); })
      .def("_copy_", [at](T& t, const T& o) { t.copy_(o, at); })
      .def("_zero_", [at](T& t) { t.zero_(at); })
      .def("_fill_", [at](T& t, double v) { t.fill_(v, at); })
      .def("_fill_int_", [at](T& t, int64_t v) { t.fill_(v, at); })
      .def("_masked_fill_", [at](T& t, const T& mask, double v) { t.masked_fill_(mask, v, at); })
      .def("_clamp_", [at](T& t, std::optional<Number> lo, std::optional<Number> hi) {
        t.clamp_(scalar_of(lo), scalar_of(hi), at);
      })
      .def("_scatter_", [at](T& t, int64_t dim, const T& index, const T& src) {
        t.scatter_(dim, index, src, at);
      })
      .def("_index_add_", [at](T& t, int64_t dim, const T& index, const T& src, double alpha) {
        t.index_add_(dim, index, src, alpha, at);
      })
      .def("_index_put_", [at](T& t, const T& index, const T& values, bool accumulate) {
        t.index_put_(index, values, accumulate, at);
      })
      .def("_tril_", [at](T& t, int64_t d) { t.tril_(d, at); })
      .def("_triu_", [at](T& t, int64_t d) { t.triu_(d, at); });

  // Where an op takes a tensor, an object with __array__ (a numpy array, a torch batch) is
  // copied into one, as PyTorch accepts them; other objects still fail the call.
  pb::implicitly_convertible<pb::object, T>();
  m.def("_from_numpy", &from_numpy, "A copy of a numpy array's values");
  m.def("_share_numpy", &share_numpy, pb::arg("array"), pb::arg("code"),
        pb::arg("read_only_ok") = false,
        "A tensor over a numpy array's memory, or None where its layout does not allow it");
  m.def("scalar", [at](double v, int code) { return scalar(v, dtype_of(code), at); });
  m.def("full", [at](const std::vector<int64_t>& shape, double v, int code) {
    return full(shape, v, dtype_of(code), at);
  });
  m.def("zeros", [at](const std::vector<int64_t>& shape, int code) {
    return zeros(shape, dtype_of(code), at);
  });
  m.def("ones", [at](const std::vector<int64_t>& shape, int code) {
    return ones(shape, dtype_of(code), at);
  });
  m.def("arange", [at](double start, double stop, double step, int code) {
    return arange(start, stop, step, dtype_of(code), at);
  });
  m.def("rand", [at](const std::vector<int64_t>& shape, int code) {
    return rand(shape, dtype_of(code), at);
  });
  m.def("randn", [at](const std::vector<int64_t>& shape, int code) {
    return randn(shape, dtype_of(code), at);
  });
  m.def("manual_seed", &manual_seed);
  m.def("initial_seed", [] { return rng_state().seed; });
  m.def("_rng_state", [] { return std::pair{rng_state().seed, rng_state().counter}; });
  m.def("_set_rng_state",
        [](uint64_t seed, uint64_t counter) { set_rng_state(RngState{seed, counter}); });
}

}  // namespace lt::py
