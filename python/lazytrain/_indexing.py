"""t[key] and t[key] = v. Ints, slices, None and ... are views (select, slice, unsqueeze), so a
write to the result, or t[key] = v, reaches t and every view of it. One integer tensor (or
list) in the key selects along its dim (index_select, a copy; negative entries count from the
end); a bool mask as the whole key selects the masked elements (lt's index), which reads the
mask's values (a sync point in lazy mode). t[mask] = v and t[index] = v write through
index_put_."""
import builtins

import numpy as np

from . import _C
from . import _dtype as D
from ._convert import as_tensor

Tensor = _C.Tensor


def _is_index_array(k):
    return isinstance(k, (Tensor, list, np.ndarray))


def _as_index(k):
    t = as_tensor(np.asarray(k) if isinstance(k, list) else k)
    return t


def _consumes(k):
    return k is not None and k is not Ellipsis


def _bool_mask(key):
    if isinstance(key, Tensor) and key._dtype == D.bool._code:
        return key
    if isinstance(key, np.ndarray) and key.dtype == np.bool_:
        return as_tensor(key)
    return None


def _check_index(x, d, i):
    size = x._shape[d]
    if not -size <= i < size:
        raise IndexError(f"index {i} is out of bounds for dimension {d} with size {size}")


def _apply(x, key):
    """x[key] for a tuple key of basic indices and at most one index array."""
    consumed = builtins.sum(1 for k in key if _consumes(k))
    if consumed > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()}")
    if builtins.sum(1 for k in key if _is_index_array(k)) > 1:
        raise NotImplementedError("indexing with more than one index tensor is not supported by "
                                  "lazytrain yet; index one dim at a time (index_select, gather)")
    d = 0
    for pos, k in enumerate(key):
        if k is None:
            x = _C.unsqueeze(x, d)
            d += 1
        elif k is Ellipsis:
            d = x.dim() - builtins.sum(1 for j in key[pos + 1:] if _consumes(j))
        elif isinstance(k, builtins.bool):
            raise NotImplementedError("indexing with a Python bool is not supported yet")
        elif isinstance(k, (builtins.int, np.integer)) or (
                isinstance(k, Tensor) and not k._shape and not k.dtype.is_floating_point
                and k._dtype != D.bool._code):
            i = builtins.int(k)
            _check_index(x, d, i)
            x = _C.select(x, d, i)
        elif isinstance(k, slice):
            step = 1 if k.step is None else builtins.int(k.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            size = x._shape[d]
            start = 0 if k.start is None else builtins.int(k.start)
            stop = size if k.stop is None else builtins.int(k.stop)
            if (start, stop, step) != (0, size, 1):
                x = _C.slice(x, d, start, stop, step)
            d += 1
        elif _is_index_array(k):
            idx = _as_index(k)
            if idx._dtype == D.bool._code:
                raise NotImplementedError("a bool mask inside a tuple index is not supported yet; "
                                          "use t[mask] alone, where or masked_fill")
            if idx.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            shape = list(x._shape)
            idx = _wrap_negative(idx, x._shape[d])
            x = _C.index_select(x, d, _C.reshape(idx, [-1]))
            if idx.dim() != 1:
                x = _C.reshape(x, shape[:d] + list(idx._shape) + shape[d + 1:])
            d += idx.dim()
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"bool tensors are valid indices (got {type(k).__name__})")
    return x


def _wrap_negative(idx, size):
    """Negative entries count from the end, as PyTorch's indexing."""
    zero = _C.scalar(0, idx._dtype)
    return _C.where(_C.lt(idx, zero), _C.add(idx, _C.scalar(size, idx._dtype)), idx)


def _check_mask(x, mask):
    if tuple(mask._shape) != tuple(x._shape[:mask.dim()]):
        raise IndexError(f"The shape of the mask {list(mask._shape)} does not match the shape "
                         f"of the indexed tensor {list(x._shape)}")


def getitem(self, key):
    mask = _bool_mask(key)
    if mask is not None:
        _check_mask(self, mask)
        return _C.index(self, mask)
    return _apply(self, key if isinstance(key, tuple) else (key,))


def _write(view, value):
    if isinstance(value, Tensor) and value.numel() != 1 or isinstance(value, (list, np.ndarray)):
        view.copy_(value)
    else:
        view.fill_(value.item() if isinstance(value, Tensor) else value)


def setitem(self, key, value):
    mask = _bool_mask(key)
    if mask is not None:
        _check_mask(self, mask)
        many = value.numel() != 1 if isinstance(value, Tensor) else np.size(value) != 1
        if many:
            self._index_put_(mask, as_tensor(value), False)
            return
        trailing = [1] * (self.dim() - mask.dim())
        self.masked_fill_(_C.reshape(mask, list(mask._shape) + trailing),
                          value.item() if isinstance(value, Tensor) else value)
        return
    if _is_index_array(key):
        idx = _as_index(key)
        if idx.dtype.is_floating_point:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        values = value if isinstance(value, Tensor) else _C.full([], float(value), self._dtype) \
            if isinstance(value, (int, float)) else as_tensor(value)
        self._index_put_(idx, values, False)
        return
    key = key if isinstance(key, tuple) else (key,)
    if any(_is_index_array(k) for k in key):
        raise NotImplementedError("t[..., index_tensor] = v is not supported yet; index the "
                                  "first dim alone (t[index] = v), or use index_add_ or scatter_")
    _write(_apply(self, key), value)
