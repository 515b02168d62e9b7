"""The ops under PyTorch's names and arguments (torch.xxx and Tensor.xxx), over the C++ op
functions of _C. Numbers become tensors typed as PyTorch's wrapped numbers (_convert)."""
import builtins
import collections

from . import _C
from . import _dtype as D
from ._convert import as_tensor, as_tensor_pair

Tensor = _C.Tensor
_ValuesIndices = {name: collections.namedtuple(name, ["values", "indices"])
                  for name in ("max", "min", "sort", "topk")}


def _dims(dim):
    if dim is None:
        return []
    if isinstance(dim, builtins.int):
        return [dim]
    return list(dim)


def _sizes(size):
    """PyTorch's size arguments: f(2, 3), f((2, 3)), f([2, 3]) or f(torch.Size)."""
    if len(size) == 1 and not isinstance(size[0], builtins.int):
        size = size[0]
    try:
        dims = list(size)
    except TypeError:
        raise TypeError(f"size must be ints or a sequence of ints, got "
                        f"{type(size).__name__}") from None
    for i, d in enumerate(dims):
        if not isinstance(d, builtins.int) and not hasattr(d, "__index__"):
            raise TypeError(f"size must be a tuple of ints, but found element of type "
                            f"{type(d).__name__} at pos {i}")
    return [d.__index__() for d in dims]


# --- elementwise ---
def _unary(name):
    fn = getattr(_C, name)

    def op(input):
        return fn(as_tensor(input))
    op.__name__ = name
    op.__doc__ = f"torch.{name}"
    return op


UNARY = ["neg", "abs", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "tanh", "sigmoid", "relu",
         "silu", "sin", "cos", "reciprocal", "erf", "isfinite", "contiguous", "clone"]
for _name in UNARY:
    globals()[_name] = _unary(_name)
negative = neg  # noqa: F821 - made above
absolute = abs  # noqa: F821


def _binary(name, c_name=None):
    fn = getattr(_C, c_name or name)

    def op(input, other):
        return fn(*as_tensor_pair(input, other))
    op.__name__ = name
    op.__doc__ = f"torch.{name}"
    return op


BINARY = ["maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "logaddexp", "outer",
          "remainder", "floor_divide", "fmod"]
for _name in BINARY:
    globals()[_name] = _binary(_name)
greater, greater_equal, less, less_equal = gt, ge, lt, le  # noqa: F821
not_equal = ne  # noqa: F821


def add(input, other, *, alpha=1):
    a, b = as_tensor_pair(input, other)
    return _C.add(a, b if alpha == 1 else _C.mul(b, as_tensor(alpha, b)))


def sub(input, other, *, alpha=1):
    if isinstance(input, builtins.bool) or isinstance(other, builtins.bool):
        # A bool number is a bool operand to PyTorch, whatever the tensor's dtype.
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    a, b = as_tensor_pair(input, other)
    return _C.sub(a, b if alpha == 1 else _C.mul(b, as_tensor(alpha, b)))


def mul(input, other):
    return _C.mul(*as_tensor_pair(input, other))


def div(input, other, *, rounding_mode=None):
    a, b = as_tensor_pair(input, other)
    if rounding_mode is None:
        return _C.div(a, b)
    if rounding_mode == "floor":
        return _C.floor_divide(a, b)
    if rounding_mode != "trunc":
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                         f"found '{rounding_mode}'")
    if a.dtype.is_floating_point or b.dtype.is_floating_point:
        q = _C.div(a, b)
        return _C.where(_C.lt(q, as_tensor(0, q)), _C.ceil(q), _C.floor(q))
    # Integers: the floor quotient, one up where it rounded a negative quotient down.
    q = _C.floor_divide(a, b)
    zero = as_tensor(0, a)
    inexact = _C.ne(_C.remainder(a, b), as_tensor(0, q))
    negative = _C.ne(_C.lt(a, zero), _C.lt(b, as_tensor(0, b)))
    return _C.add(q, _C.cast(logical_and(inexact, negative), q._dtype))


def floor(input):
    return _C.floor(as_tensor(input))


def ceil(input):
    return _C.ceil(as_tensor(input))


def round(input, *, decimals=0):
    return _C.round(as_tensor(input), decimals)


def trunc(input):
    return _C.trunc(as_tensor(input))


fix = trunc


subtract, multiply, divide, true_divide = sub, mul, div, div


def pow(input, exponent):
    if isinstance(input, Tensor) and isinstance(exponent, builtins.bool):
        exponent = builtins.int(exponent)
    if isinstance(input, Tensor) and isinstance(exponent, builtins.int):
        return _C.pow_int(input, exponent)
    if isinstance(input, Tensor) and isinstance(exponent, builtins.float):
        return _C.pow_scalar(input, exponent)
    return _C.pow(*as_tensor_pair(input, exponent))


def gelu(input, approximate="none"):
    return _C.gelu(input, approximate)


def leaky_relu(input, negative_slope=0.01):
    return _C.leaky_relu(input, negative_slope)


def where(condition, input, other):
    x, y = as_tensor_pair(input, other)
    return _C.where(as_tensor(condition), x, y)


def clamp(input, min=None, max=None):
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        out = input if min is None else maximum(input, min)  # noqa: F821
        return out if max is None else minimum(out, max)  # noqa: F821
    return _C.clamp(input, min, max)


clip = clamp


def masked_fill(input, mask, value):
    if isinstance(value, Tensor):
        value = value.item()
    return _C.masked_fill(input, as_tensor(mask), builtins.float(value))


def logical_not(input):
    return _C.eq(_bool(input), _C.scalar(0, D.bool._code))


def logical_and(input, other):
    return _C.mul(_bool(input), _bool(other))


def logical_or(input, other):
    return _C.maximum(_bool(input), _bool(other))


def logical_xor(input, other):
    return _C.ne(_bool(input), _bool(other))


def _bool(x):
    x = as_tensor(x)
    return x if x._dtype == D.bool._code else _C.ne(x, _C.scalar(0, x._dtype))


def bitwise_not(input):
    """torch.bitwise_not (~): two's complement of integers, logical not of bool."""
    return _C.bitwise_not(as_tensor(input))


bitwise_and, bitwise_or, bitwise_xor = (_binary(n) for n in ("bitwise_and", "bitwise_or",
                                                             "bitwise_xor"))


# --- reductions ---
def _cast_opt(input, dtype):
    return input if dtype is None or input._dtype == dtype._code else _C.cast(input, dtype._code)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    return _C.sum(_cast_opt(input, dtype), _dims(dim), keepdim)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    return _C.mean(_cast_opt(input, dtype), _dims(dim), keepdim)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    if dim is not None and not isinstance(dim, builtins.int):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    return _C.prod(_cast_opt(input, dtype), _dims(dim), keepdim)


def _extremum(name):
    reduce, along = getattr(_C, name), getattr(_C, name + "_along")
    binary = globals()[name + "imum"]
    result = _ValuesIndices[name]

    def op(input, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return binary(input, dim)
        if dim is None:
            return reduce(input, [], False)
        return result(*along(input, dim, keepdim))
    op.__name__ = name
    op.__doc__ = (f"torch.{name}: over every element, or (values, indices) along dim, or "
                  f"torch.{name}imum of two tensors")
    return op


max = _extremum("max")
min = _extremum("min")


def amax(input, dim=(), keepdim=False):
    return _C.max(input, _dims(dim), keepdim)


def amin(input, dim=(), keepdim=False):
    return _C.min(input, _dims(dim), keepdim)


def _arg(fn):
    def op(input, dim=None, keepdim=False):
        if dim is None:
            return fn(_C.reshape(input, [-1]), 0, False)
        return fn(input, dim, keepdim)
    return op


argmax = _arg(_C.argmax)
argmin = _arg(_C.argmin)


def logsumexp(input, dim, keepdim=False):
    return _C.logsumexp(input, _dims(dim), keepdim)


def _correction(unbiased, correction):
    if correction is not None:
        if correction not in (0, 1):
            raise NotImplementedError("var/std: lazytrain takes correction 0 or 1 only")
        return correction == 1
    return unbiased


def var(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    return _C.var(input, _dims(dim), _correction(unbiased, correction), keepdim)


def std(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    return _C.std(input, _dims(dim), _correction(unbiased, correction), keepdim)


def cumsum(input, dim, *, dtype=None):
    return _C.cumsum(_cast_opt(input, dtype), dim)


def topk(input, k, dim=-1, largest=True, sorted=True):
    return _ValuesIndices["topk"](*_C.topk(input, k, dim, largest, sorted))


def sort(input, dim=-1, descending=False, stable=False):
    return _ValuesIndices["sort"](*_C.sort(input, dim, descending))


def argsort(input, dim=-1, descending=False, stable=False):
    return _C.argsort(input, dim, descending)


def softmax(input, dim, dtype=None):
    return _C.softmax(_cast_opt(input, dtype), dim)


def log_softmax(input, dim, dtype=None):
    return _C.log_softmax(_cast_opt(input, dtype), dim)


# --- shapes and views ---
def reshape(input, *shape):
    return _C.reshape(input, _sizes(shape))


def view(input, *shape):
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        raise NotImplementedError("view(dtype): lazytrain has no bit reinterpretation")
    return _C.view(input, _sizes(shape))


def permute(input, *dims):
    return _C.permute(input, _sizes(dims))


def transpose(input, dim0, dim1):
    return _C.transpose(input, dim0, dim1)


swapaxes = swapdims = transpose


def t(input):
    input = as_tensor(input)
    if input.dim() < 2:
        return input
    return _C.transpose(input, 0, 1)


def expand(input, *sizes):
    return _C.expand(input, _sizes(sizes))


def repeat(input, *sizes):
    """Tensor.repeat: tiles the tensor sizes[i] times along dim i (new leading dims for extra
    sizes), through expand and reshape, so the gradient sums the tiles."""
    reps = _sizes(sizes)
    shape = [1] * (len(reps) - input.dim()) + list(input._shape)
    if len(reps) < len(shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    spread = []
    for r, d in zip(reps, shape):
        spread += [1, d]
    x = _C.reshape(input, spread)
    x = _C.expand(x, [v for r, d in zip(reps, shape) for v in (r, d)])
    return _C.reshape(x, [r * d for r, d in zip(reps, shape)])


def squeeze(input, dim=None):
    input = as_tensor(input)
    if dim is None:
        for d in reversed(range(input.dim())):
            if input._shape[d] == 1:
                input = _C.squeeze(input, d)
        return input
    return _C.squeeze(input, dim)


def unsqueeze(input, dim):
    return _C.unsqueeze(input, dim)


def flatten(input, start_dim=0, end_dim=-1):
    input = as_tensor(input)
    if input.dim() == 0:
        return _C.reshape(input, [1])
    return _C.flatten(input, start_dim, end_dim)


def narrow(input, dim, start, length):
    return _C.narrow(input, dim, builtins.int(start), length)


def select(input, dim, index):
    size = input._shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input._shape)} at dimension {dim}")
    return _C.select(input, dim, index)


def cat(tensors, dim=0):
    return _C.concat([as_tensor(t) for t in tensors], dim)


concat = concatenate = cat


def stack(tensors, dim=0):
    return _C.stack([as_tensor(t) for t in tensors], dim)


def split(tensor, split_size_or_sections, dim=0):
    if isinstance(split_size_or_sections, builtins.int):
        return tuple(_C.split(tensor, split_size_or_sections, dim))
    return tuple(_C.split_with_sizes(tensor, list(split_size_or_sections), dim))


def chunk(input, chunks, dim=0):
    return tuple(_C.chunk(input, chunks, dim))


def unbind(input, dim=0):
    return tuple(_C.unbind(input, dim))


# --- indexing and products ---
def gather(input, dim, index):
    return _C.gather(input, dim, index)


def scatter(input, dim, index, src=None, *, value=None):
    if src is None:
        src = value
    return _C.scatter(input, dim, index, as_tensor(src, input).expand(index.shape)
                      if not isinstance(src, Tensor) else src)


def scatter_add(input, dim, index, src):
    return _C.scatter_add(input, dim, index, src)


def index_select(input, dim, index):
    return _C.index_select(input, dim, as_tensor(index))


def index_add(input, dim, index, source, *, alpha=1):
    return _C.index_add(input, dim, index, source, alpha)


def flip(input, dims):
    return _C.flip(input, _dims(dims))


def roll(input, shifts, dims=None):
    input = as_tensor(input)
    if dims is None:
        return _C.reshape(_C.roll(_C.reshape(input, [-1]), _dims(shifts), [0]), list(input._shape))
    return _C.roll(input, _dims(shifts), _dims(dims))


def tril(input, diagonal=0):
    return _C.tril(input, diagonal)


def triu(input, diagonal=0):
    return _C.triu(input, diagonal)


def matmul(input, other):
    """torch.matmul, 1-d operands included: a vector is a matrix of one row (on the left) or
    one column (on the right) whose dim is dropped from the result."""
    input, other = as_tensor(input), as_tensor(other)
    left, right = input.dim() == 1, other.dim() == 1
    out = _C.matmul(_C.unsqueeze(input, 0) if left else input,
                    _C.unsqueeze(other, 1) if right else other)
    if right:
        out = _C.squeeze(out, -1)
    if left:
        out = _C.squeeze(out, -2 if not right else -1)
    return out


def mm(input, mat2):
    input, mat2 = as_tensor(input), as_tensor(mat2)
    if input.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(f"mm: expected 2-d tensors, got {input.dim()}-d and {mat2.dim()}-d")
    return _C.matmul(input, mat2)


def bmm(input, mat2):
    input, mat2 = as_tensor(input), as_tensor(mat2)
    if input.dim() != 3 or mat2.dim() != 3:
        raise RuntimeError(f"bmm: expected 3-d tensors, got {input.dim()}-d and {mat2.dim()}-d")
    return _C.matmul(input, mat2)




def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return _C.baddbmm(input, batch1, batch2, beta, alpha)


def result_type(tensor1, tensor2):
    return D.BY_CODE[_C.result_type(*as_tensor_pair(tensor1, tensor2))]


# The names above that torch also has as Tensor methods.
METHODS = UNARY + BINARY + [
    "add", "sub", "mul", "div", "pow", "where", "clamp", "clip", "masked_fill", "logical_not",
    "logical_and", "logical_or", "logical_xor", "bitwise_not", "bitwise_and", "bitwise_or",
    "bitwise_xor", "sum", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "logsumexp",
    "var", "std", "cumsum", "topk", "sort", "argsort", "softmax", "log_softmax", "reshape",
    "view", "permute", "transpose", "swapaxes", "swapdims", "t", "expand", "squeeze",
    "unsqueeze", "flatten", "narrow", "repeat", "select", "split", "chunk", "unbind", "gather",
    "scatter",
    "scatter_add", "index_select", "index_add", "flip", "roll", "tril", "triu", "matmul", "mm",
    "bmm", "baddbmm", "negative", "absolute", "greater", "greater_equal", "less", "less_equal",
    "not_equal", "subtract", "multiply", "divide", "true_divide", "gelu", "outer", "floor", "ceil",
    "round", "trunc", "fix", "prod"]
FUNCTIONS = METHODS + ["cat", "concat", "concatenate", "stack", "leaky_relu", "result_type"]
