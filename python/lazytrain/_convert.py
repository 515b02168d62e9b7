"""Python values to tensors: numbers, nested lists, numpy arrays and anything with __array__
(a torch tensor, a DataLoader's batch) or __dlpack__."""
import builtins

import numpy as np

from . import _C
from . import _dtype as D

Tensor = _C.Tensor
_NUMBER = (builtins.bool, builtins.int, builtins.float)


def _category(dt):
    return 0 if dt is D.bool else 2 if dt.is_floating_point else 1


def _number_dtype(value):
    if isinstance(value, builtins.bool):
        return D.bool
    if isinstance(value, builtins.int):
        return D.int64
    return D.float32


def scalar_for(value, like=None):
    """A Python number as an operand next to `like`, typed as PyTorch types a wrapped number:
    the tensor's dtype where the number's category is not higher (int32 + 2 stays int32), else
    the number's default dtype (int64 + 0.5 is float32)."""
    dt = _number_dtype(value)
    if like is not None:
        ldt = D.BY_CODE[like._dtype]
        if _category(dt) <= _category(ldt):
            # A 0-d tensor of the same category never widens the result; f32 holds what f16 and
            # bf16 (storage types in C++) would.
            dt = D.float32 if ldt in (D.float16, D.bfloat16) else ldt
    return _C.scalar(builtins.float(value), dt._code)


def to_numpy(obj):
    """A numpy view of an array-like: numpy itself, or anything with __array__ (torch tensors
    are detached first, as their __array__ refuses tensors that require grad)."""
    if isinstance(obj, np.ndarray):
        return obj
    if hasattr(obj, "detach") and hasattr(obj, "numpy") and not isinstance(obj, Tensor):
        obj = obj.detach()
        if str(getattr(obj, "dtype", "")) == "torch.bfloat16":
            obj = obj.float()
        return obj.numpy()
    if not hasattr(obj, "__array__") and hasattr(obj, "__dlpack__"):
        return np.from_dlpack(obj)  # a DLPack producer without __array__ (a CPU array)
    return np.asarray(obj)


def from_dlpack(ext_tensor):
    """torch.from_dlpack: a tensor over the memory of a DLPack producer (an object with
    __dlpack__, or a capsule) on the CPU, as from_numpy shares an array's; a producer whose
    layout does not allow it (not C-contiguous, a dtype lazytrain does not have) is copied."""
    if not hasattr(ext_tensor, "__dlpack__"):  # a bare capsule: numpy reads it from a wrapper
        capsule = ext_tensor

        class _Capsule:
            def __dlpack__(self, stream=None):
                return capsule

            def __dlpack_device__(self):
                return (1, 0)
        ext_tensor = _Capsule()
    a = np.from_dlpack(ext_tensor)
    t = _shared(a, D.from_numpy_dtype(a.dtype), read_only_ok=True)
    return from_array(a) if t is None else t


def _shared(a, dt, read_only_ok=False):
    """A tensor over a's memory, or None where its layout does not allow it."""
    if not a.dtype.isnative:
        return None
    return _C._share_numpy(a, dt._code, read_only_ok)


def from_array(a, dtype=None):
    a = to_numpy(a)
    dt = dtype if dtype is not None else D.from_numpy_dtype(a.dtype)
    if a.dtype == np.float16:
        a = a.astype(np.float32)
    return _C._from_numpy(a, dt._code)


def tensor(data, dtype=None, device=None, requires_grad=False):
    """torch.tensor: a new tensor with a copy of `data` (a number, nested lists, a numpy array or
    anything with __array__, a tensor). Lists of Python floats are float32, as in PyTorch."""
    if isinstance(data, Tensor):
        t = _C.clone(data.detach())
        if dtype is not None and data._dtype != dtype._code:
            t = _C.cast(t, dtype._code)
    elif isinstance(data, _NUMBER) or isinstance(data, (list, tuple)):
        a = np.array(_as_nested(data))
        if dtype is None:
            dtype = D.float32 if a.dtype.kind == "f" else D.from_numpy_dtype(a.dtype)
        t = from_array(a.astype(np.float64) if dtype.is_floating_point else a, dtype)
    else:
        t = from_array(data, dtype)
    if requires_grad:
        t._requires_grad_(True)
    return t


def _as_nested(data):
    if isinstance(data, Tensor):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return [_as_nested(d) for d in data]
    return data


def from_numpy(a):
    """torch.from_numpy: a tensor of the array's dtype over its memory, which both then write:
    the tensor reads what numpy writes there, and the tensor's in-place ops (in lazy mode, when
    the step runs) write into the array. An array that is not C-contiguous or is read-only is
    copied instead."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    t = _shared(a, D.from_numpy_dtype(a.dtype))
    return from_array(a) if t is None else t


def public_as_tensor(data, dtype=None, device=None):
    """torch.as_tensor: data itself when it is a tensor of that dtype (else converted), a tensor
    over a numpy array's memory when the dtypes agree (from_numpy), otherwise a new tensor."""
    if isinstance(data, Tensor):
        return data if dtype is None or data._dtype == dtype._code else data.to(dtype)
    if isinstance(data, np.ndarray) and str(data.dtype) in D._FROM_NUMPY:
        own = D.from_numpy_dtype(data.dtype)
        if dtype is None or dtype is own:
            return from_numpy(data)
    return tensor(data, dtype)


def is_array_like(obj):
    """Whether obj converts to a tensor as an array: __array__ or DLPack's __dlpack__."""
    return hasattr(obj, "__array__") or hasattr(obj, "__dlpack__")


def array_like_tensor(obj):
    """The C++ core's conversion of an argument that is not a tensor: objects with __array__
    or __dlpack__ only (numbers and lists are typed by the Python wrappers, as PyTorch's wrapped
    numbers)."""
    if not is_array_like(obj) or isinstance(obj, Tensor):
        raise TypeError(f"expected a Tensor or an array-like, got {type(obj).__name__}")
    return from_array(obj)


def as_tensor(x, like=None):
    """x as a tensor operand: a tensor as it is, a number typed as PyTorch's wrapped numbers, an
    array-like copied."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, _NUMBER):
        return scalar_for(x, like)
    if isinstance(x, (list, tuple)):
        return tensor(x)
    if is_array_like(x):
        return from_array(x)
    raise TypeError(f"expected a Tensor, a number or an array-like, got {type(x).__name__}")


def as_tensor_pair(a, b):
    """Two operands of a binary op, a number typed against the other operand."""
    if isinstance(a, Tensor):
        return a, as_tensor(b, a)
    if isinstance(b, Tensor):
        return as_tensor(a, b), b
    a = as_tensor(a)
    return a, as_tensor(b, a)
