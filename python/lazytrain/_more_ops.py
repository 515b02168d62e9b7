"""Ops the C++ API has no function for, composed of those it has (values and gradients as
PyTorch's), and the creation functions built on arange and the generator."""
import builtins
import math

import numpy as np

from . import _C, _creation, _ops
from . import _dtype as D
from ._convert import as_tensor


def square(input):
    return _C.mul(input, input)


def sign(input):
    input = as_tensor(input)
    zero = _C.scalar(0, input._dtype)
    return _C.cast(_C.sub(_C.cast(_C.gt(input, zero), D.int64._code),
                          _C.cast(_C.lt(input, zero), D.int64._code)), input._dtype)


def _as_int(input):
    return _C.cast(_ops._bool(input), D.int32._code)  # min and max take no bool


def all(input, dim=None, keepdim=False):  # noqa: A001 - PyTorch's name
    return _C.cast(_C.min(_as_int(input), _ops._dims(dim), keepdim), D.bool._code)


def any(input, dim=None, keepdim=False):  # noqa: A001
    return _C.cast(_C.max(_as_int(input), _ops._dims(dim), keepdim), D.bool._code)


def count_nonzero(input, dim=None):
    return _C.sum(_C.cast(_ops._bool(input), D.int64._code), _ops._dims(dim), False)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector p-norm over dim (all elements by default): 2 ("fro"), 1, inf, or any p > 0."""
    x = _ops._cast_opt(as_tensor(input), dtype)
    dims = _ops._dims(dim)
    if p in ("fro", 2):
        return _C.sqrt(_C.sum(_C.mul(x, x), dims, keepdim))
    if p == 1:
        return _C.sum(_C.abs(x), dims, keepdim)
    if p in (math.inf, "inf"):
        return _C.max(_C.abs(x), dims, keepdim)
    if isinstance(p, (builtins.int, builtins.float)) and p > 0:
        return _ops.pow(_C.sum(_ops.pow(_C.abs(x), builtins.float(p)), dims, keepdim), 1.0 / p)
    raise NotImplementedError(f"norm: p={p!r} is not supported yet")


def nonzero(input, *, as_tuple=False):
    """The indices of the non-zero elements: reads the values (a sync point in lazy mode)."""
    found = _C.nonzero(as_tensor(input))
    if as_tuple:
        return tuple(_C.select(found, 1, i) for i in range(found._shape[1]))
    return found


def masked_select(input, mask):
    """The elements where mask (broadcast with input) is true, flattened: reads the mask's
    values (a sync point in lazy mode); the gradient reaches the selected elements."""
    return _C.masked_select(as_tensor(input), as_tensor(mask))


def einsum(equation, *operands):
    """torch.einsum: operands as arguments or as one list."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return _C.einsum(equation, [as_tensor(o) for o in operands])


def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the (i, i + offset) elements of dims dim1 and dim2 (writes reach input)."""
    return _C.diagonal(input, offset, dim1, dim2)


def diag(input, diagonal=0):
    return _C.diag(as_tensor(input), diagonal)


def trace(input):
    return _C.trace(input)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values in ascending order (reads the values: a sync point in lazy mode)."""
    if dim is not None:
        raise NotImplementedError("unique(dim=...) is not supported by lazytrain yet; unique "
                                  "of the flattened tensor is")
    values, inverse, counts = _C.unique(as_tensor(input), sorted, return_inverse, return_counts)
    out = (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return out[0] if len(out) == 1 else out


def equal(input, other):
    return tuple(input._shape) == tuple(other._shape) and builtins.bool(
        all(_C.eq(input, other)).item())


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if equal_nan:
        raise NotImplementedError("isclose: equal_nan is not supported yet")
    a, b = _ops.as_tensor_pair(input, other)
    diff = _C.abs(_C.sub(a, b))
    bound = _C.add(_C.mul(_C.abs(b), as_tensor(rtol, b)), as_tensor(atol, b))
    return _C.le(diff, bound)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return builtins.bool(all(isclose(input, other, rtol, atol, equal_nan)).item())


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    m = n if m is None else m
    rows = _C.unsqueeze(_C.arange(0, n, 1, D.int64._code), 1)
    t = _C.cast(_C.eq(rows, _C.arange(0, m, 1, D.int64._code)), (dtype or D.float32)._code)
    return _creation._finish(t, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """PyTorch's rule: start + i step for the first half, end - (steps - 1 - i) step for the
    rest, step = (end - start) / (steps - 1), computed in float64."""
    dtype = dtype or D.float32
    if steps == 1:
        values = np.array([start], dtype=np.float64)
    else:
        step = (end - start) / (steps - 1)
        i = np.arange(steps, dtype=np.float64)
        values = np.where(i < steps // 2, start + step * i, end - step * (steps - 1 - i))
    return _creation._finish(_C._from_numpy(values, D.float64._code) if dtype is D.float64 else
                             _C.cast(_C._from_numpy(values, D.float64._code), dtype._code),
                             requires_grad)


def randint(low=0, high=None, size=None, *, dtype=None, device=None, requires_grad=False):
    """Integers uniform in [low, high) from lazytrain's generator (lt.manual_seed)."""
    if size is None:  # randint(high, size)
        low, high, size = 0, low, high
    u = _C.rand(_ops._sizes((size,)), D.float64._code)
    scaled = _C.add(_C.mul(u, _C.scalar(high - low, D.float64._code)),
                    _C.scalar(low, D.float64._code))
    # Casting truncates toward zero: shift negative ranges up first.
    shift = -builtins.min(low, 0)
    t = _C.cast(_C.add(scaled, _C.scalar(shift, D.float64._code)), D.int64._code)
    t = _C.sub(t, _C.scalar(shift, D.int64._code))
    return _C.cast(t, (dtype or D.int64)._code)


def randperm(n, *, dtype=None, device=None, requires_grad=False):
    """A permutation of range(n) from lazytrain's generator (the order of n uniform draws)."""
    order = _C.argsort(_C.rand([n], D.float64._code), 0, False)
    return order if dtype in (None, D.int64) else _C.cast(order, dtype._code)


FUNCTIONS = ["square", "sign", "all", "any", "count_nonzero", "norm", "nonzero", "masked_select",
             "equal", "isclose", "allclose", "eye", "linspace", "randint", "randperm", "einsum",
             "diagonal", "diag", "trace", "unique"]
METHODS = ["square", "sign", "all", "any", "count_nonzero", "norm", "nonzero", "masked_select",
           "equal", "isclose", "allclose", "diagonal", "diag", "trace", "unique"]
