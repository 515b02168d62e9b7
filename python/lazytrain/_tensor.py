"""lazytrain.Tensor: the compiled _C.Tensor with PyTorch's methods, properties and operators
added here, so the ops return the one class and Python adds no wrapper object."""
import builtins
import re

import numpy as np

from . import _C, _indexing, _ops
from . import _dtype as D
from ._convert import _category, as_tensor, is_array_like
from ._device import check_device, device as _device

_CPU = _device("cpu")
from ._size import Size

Tensor = _C.Tensor
_requires_grad = Tensor.requires_grad.fget


def _method(name, fn):
    setattr(Tensor, name, fn)


for _name in _ops.METHODS:
    _method(_name, getattr(_ops, _name))


# --- properties ---
def _dtype(self):
    return D.BY_CODE[self._dtype]


Tensor.dtype = property(_dtype)
Tensor.shape = property(lambda self: Size(self._shape))
Tensor.ndim = property(lambda self: len(self._shape))
Tensor.T = property(lambda self: _ops.permute(self, list(reversed(range(len(self._shape))))))
Tensor.mT = property(lambda self: _ops.transpose(self, -2, -1))
Tensor.data = property(lambda self: self.detach(), lambda self, v: self._set_data(v))
Tensor.device = property(lambda self: _CPU)
Tensor.is_cuda = property(lambda self: False)
Tensor.requires_grad = property(_requires_grad, lambda self, v: self._requires_grad_(v))
Tensor.grad = property(lambda self: self._grad(), lambda self, g: self._set_grad(g))


def _set_data(self, v):
    """t.data = v: t becomes a handle to v's values (dtype and shape too), history dropped,
    t's requires_grad kept."""
    requires_grad = self.requires_grad
    self._set_handle(v.detach() if v.requires_grad else v)
    if requires_grad:
        self._requires_grad_(True)


def grad_fn_name(self):
    """The grad_fn's name as printed, or None for a leaf (no value is read)."""
    return self._grad_fn_name() or None


class _GradFn:
    """t.grad_fn: the autograd node that made t, by name (name(), and printed as PyTorch prints
    a node); its next_functions and hooks are not exposed."""
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name

    def __repr__(self):
        return f"<{self._name} object at {id(self):#x}>"


Tensor.grad_fn = property(lambda self: _GradFn(self._grad_fn_name()) if self._grad_fn_name()
                          else None)


def size(self, dim=None):
    if dim is None:
        return Size(self._shape)
    return self._shape[dim]


def dim(self):
    return len(self._shape)


def element_size(self):
    return self.dtype.itemsize


def is_floating_point(self):
    return self.dtype.is_floating_point


def requires_grad_(self, requires_grad=True):
    self._requires_grad_(requires_grad)
    return self


# Run after every backward() pass, in order: what must see all of a pass's gradients
# (DistributedDataParallel's reduction), as callbacks of PyTorch's autograd engine.
post_backward_callbacks = []


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    if retain_graph is None and not create_graph and inputs is None:
        self._backward(None if gradient is None else as_tensor(gradient, self))
        for callback in post_backward_callbacks:
            callback()
        return
    from . import autograd
    autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def to(self, *args, **kwargs):
    """to(dtype), to(device), to(device, dtype), to(other) with keywords dtype/device: there is
    one device, the CPU, so only the dtype changes anything."""
    dtype = kwargs.get("dtype")
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        else:
            check_device(kwargs.get("device", a))
    if dtype is None or dtype._code == self._dtype:
        return self
    return _C.cast(self, dtype._code)


# PyTorch's scalar type names, as its type names and messages spell them.
_TORCH_NAMES = {D.float32: "Float", D.float64: "Double", D.float16: "Half",
                D.bfloat16: "BFloat16", D.int64: "Long", D.int32: "Int", D.bool: "Bool"}


def type_(self, dtype=None, non_blocking=False):
    """With a dtype: the tensor cast to it; without: PyTorch's type name ("torch.FloatTensor")."""
    if dtype is None:
        return f"torch.{_TORCH_NAMES[self.dtype]}Tensor"
    return to(self, dtype)


def cpu(self):
    return self


def cuda(self, device=None, non_blocking=False):
    raise ValueError("lazytrain runs on the CPU only, there is no CUDA device")


def type_as(self, other):
    return to(self, other.dtype)


def _caster(dt):
    return lambda self: to(self, dt)


def numpy(self, *, force=False):
    if self.requires_grad and not force:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                           "tensor.detach().numpy() instead.")
    if self._dtype == D.bfloat16._code:
        raise TypeError("Got unsupported ScalarType BFloat16")
    a = self._numpy()  # over the memory of a tensor from numpy or DLPack, as PyTorch's
    return a.astype(np.float16) if a.dtype != np.float16 and self._dtype == D.float16._code else a


def tolist(self):
    return self._numpy().tolist()


def item(self):
    return self._item()


_CPP_DTYPE_NAMES = {"f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16",
                    "i64": "int64", "i32": "int32", "bool": "bool"}


def __repr__(self):
    """PyTorch's repr (the C++ Tensor::str prints it), the dtype spelled lazytrain.<name>."""
    return re.sub(r"dtype=(\w+)", lambda m: f"dtype=lazytrain.{_CPP_DTYPE_NAMES[m[1]]}",
                  self._str())


def __bool__(self):
    if self.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(self._item())


def __len__(self):
    if not self._shape:
        raise TypeError("len() of a 0-d tensor")
    return self._shape[0]


def __iter__(self):
    if not self._shape:
        raise TypeError("iteration over a 0-d tensor")
    return iter(_ops.unbind(self, 0))


def __index__(self):
    if self.dtype.is_floating_point or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return self._item()


def __array__(self, dtype=None):
    a = numpy(self, force=True)
    return a if dtype is None else a.astype(dtype)


def __dlpack__(self, stream=None):
    """A DLPack capsule of the values (on the CPU), for torch.from_dlpack and numpy: the memory
    of a tensor from numpy or DLPack, else a copy (lazytrain's own storage can be rebound by
    in-place ops, so it is not lent out)."""
    if stream is not None:
        raise BufferError("__dlpack__: lazytrain tensors are on the CPU; stream must be None")
    if self._dtype == D.bfloat16._code:
        raise BufferError("__dlpack__: bfloat16 has no numpy array to lend; call .float() first")
    return np.ascontiguousarray(numpy(self, force=True)).__dlpack__()


def __dlpack_device__(self):
    return (1, 0)  # kDLCPU, device 0


def __format__(self, spec):
    if not self._shape:
        return format(self._item(), spec)
    return object.__format__(repr(self), spec)


def where(self, condition, other):
    return _ops.where(condition, self, other)


def expand_as(self, other):
    return _ops.expand(self, list(other._shape))


def view_as(self, other):
    return _ops.view(self, list(other._shape))


def reshape_as(self, other):
    return _ops.reshape(self, list(other._shape))


def new_zeros(self, *size, dtype=None):
    return _C.zeros(_ops._sizes(size), (dtype or self.dtype)._code)


def new_ones(self, *size, dtype=None):
    return _C.ones(_ops._sizes(size), (dtype or self.dtype)._code)


def new_full(self, size, fill_value, dtype=None):
    return _C.full(list(size), fill_value, (dtype or self.dtype)._code)


def new_tensor(self, data, dtype=None):
    from ._convert import tensor
    return tensor(data, dtype=dtype or self.dtype)


for _fn in [grad_fn_name, size, dim, element_size, is_floating_point, requires_grad_, backward,
            to, cpu, cuda, type_as, numpy, tolist, item, __repr__, __bool__, __len__, __iter__,
            __index__, __dlpack__, __dlpack_device__,
            __array__, __format__, where, expand_as, view_as, reshape_as, new_zeros, new_ones,
            new_full, new_tensor, _set_data]:
    _method(_fn.__name__, _fn)
Tensor.__str__ = __repr__
Tensor.__array_priority__ = 1000  # numpy defers to the reflected operators
Tensor.__hash__ = lambda self: id(self)
Tensor.nelement = Tensor.numel
for _n, _dt in [("float", D.float32), ("double", D.float64), ("half", D.float16),
                ("bfloat16", D.bfloat16), ("long", D.int64), ("int", D.int32), ("bool", D.bool)]:
    _method(_n, _caster(_dt))
def __deepcopy__(self, memo):
    """A copy with its own values (copy.deepcopy of a module: an EMA model, a best checkpoint);
    a Parameter stays a Parameter."""
    values = _C.clone(self.detach())
    if type(self) is not Tensor:
        return type(self)(values, self.requires_grad)
    return values.requires_grad_(self.requires_grad)


Tensor.__deepcopy__ = __deepcopy__
Tensor.__float__ = lambda self: builtins.float(self._item())
Tensor.__int__ = lambda self: builtins.int(self._item())


# --- operators: a number operand is typed as PyTorch's wrapped numbers ---
def _operand(x):
    """Whether an operator takes x (else NotImplemented: Python's TypeError, or == is False)."""
    return isinstance(x, (Tensor, builtins.bool, builtins.int, builtins.float, list, tuple)) or (
        is_array_like(x))


def _operator(fn):
    return lambda self, other: fn(self, other) if _operand(other) else NotImplemented


def _reflected(fn):
    return lambda self, other: fn(other, self) if _operand(other) else NotImplemented


_OPERATORS = {"add": _ops.add, "sub": _ops.sub, "mul": _ops.mul, "truediv": _ops.div,
              "mod": _ops.remainder, "floordiv": _ops.floor_divide,
              "pow": _ops.pow, "matmul": _ops.matmul, "and": _ops.bitwise_and,
              "or": _ops.bitwise_or, "xor": _ops.bitwise_xor}
for _n, _fn in _OPERATORS.items():
    _method(f"__{_n}__", _operator(_fn))
    _method(f"__r{_n}__", _reflected(_fn))
for _n in ["eq", "ne", "lt", "le", "gt", "ge"]:
    _method(f"__{_n}__", _operator(getattr(_ops, _n)))
Tensor.__neg__ = _ops.neg
Tensor.__abs__ = _ops.abs
Tensor.__invert__ = _ops.bitwise_not
Tensor.__pos__ = lambda self: self


# --- in place: each rebinds the tensor, so every handle and view of it sees the result ---
def _inplace(c_name, scale=False):
    c_fn = getattr(Tensor, c_name)

    def op(self, other, *, alpha=1):
        other = as_tensor(other, self)
        if alpha != 1:
            other = _ops.mul(other, alpha)
        c_fn(self, other)
        return self
    op.__name__ = c_name[1:]
    return op


for _n in ["add_", "sub_", "mul_", "div_"]:
    _method(_n, _inplace("_" + _n))
for _n in ["add", "sub", "mul", "truediv"]:
    _method(f"__i{_n}__", getattr(Tensor, (_n if _n != "truediv" else "div") + "_"))


def copy_(self, src, non_blocking=False):
    src = as_tensor(src, self)
    if src._shape != self._shape:
        src = _ops.expand(src, list(self._shape))
    self._copy_(src)
    return self


def zero_(self):
    self._zero_()
    return self


def fill_(self, value):
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, builtins.int) and not isinstance(value, builtins.bool):
        self._fill_int_(value)
    else:
        self._fill_(builtins.float(value))
    return self


def masked_fill_(self, mask, value):
    if isinstance(value, Tensor):
        value = value.item()
    self._masked_fill_(as_tensor(mask), builtins.float(value))
    return self


def clamp_(self, min=None, max=None):
    self._clamp_(min, max)
    return self


def scatter_(self, dim, index, src=None, *, value=None):
    if src is None:
        src = value
    if not isinstance(src, Tensor):
        src = _ops.expand(as_tensor(src, self), list(index._shape))
    self._scatter_(dim, index, src)
    return self


def index_add_(self, dim, index, source, *, alpha=1):
    self._index_add_(dim, index, source, alpha)
    return self


def tril_(self, diagonal=0):
    self._tril_(diagonal)
    return self


def triu_(self, diagonal=0):
    self._triu_(diagonal)
    return self


def uniform_(self, a=0, b=1):
    _C.init_uniform_(self, a, b)
    return self


def normal_(self, mean=0, std=1):
    _C.init_normal_(self, mean, std)
    return self


for _fn in [copy_, zero_, fill_, masked_fill_, clamp_, scatter_, index_add_, tril_, triu_,
            uniform_, normal_]:
    _method(_fn.__name__, _fn)
Tensor.clip_ = clamp_
Tensor.type = type_  # not named type here: __deepcopy__ calls the builtin


def _unary_inplace(name):
    """t.<op>_(): t's values replaced by op(t) (copy_, through views, history kept)."""
    fn = getattr(_ops, name)

    def op(self, *args, **kwargs):
        self._copy_(fn(self, *args, **kwargs))
        return self
    op.__name__ = name + "_"
    return op


for _n in ["abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "neg", "sin", "cos",
           "reciprocal", "pow", "floor", "ceil", "round", "trunc", "fix"]:
    _method(_n + "_", _unary_inplace(_n))


def _binary_inplace(name):
    """t.remainder_(o), t %= o: refused where the result's category is above t's (PyTorch's
    in-place rule), else written through copy_."""
    fn = getattr(_ops, name)

    def op(self, other):
        out = fn(self, other)
        if _category(out.dtype) > _category(self.dtype):  # the C++ in-place ops' rule
            raise RuntimeError(f"result type {_TORCH_NAMES[out.dtype]} can't be cast to the "
                               f"desired output type {_TORCH_NAMES[self.dtype]}")
        self._copy_(out)
        return self
    op.__name__ = name + "_"
    return op


for _n, _op in [("remainder", "mod"), ("floor_divide", "floordiv")]:
    _method(_n + "_", _binary_inplace(_n))
    _method(f"__i{_op}__", getattr(Tensor, _n + "_"))
_method("fmod_", _binary_inplace("fmod"))
for _n, _op in [("bitwise_and", "and"), ("bitwise_or", "or"), ("bitwise_xor", "xor")]:
    _method(_n + "_", _binary_inplace(_n))
    _method(f"__i{_op}__", getattr(Tensor, _n + "_"))
_method("bitwise_not_", _unary_inplace("bitwise_not"))
Tensor.__getitem__ = _indexing.getitem
Tensor.__setitem__ = _indexing.setitem
