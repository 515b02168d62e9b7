"""t[key] and t[key] = v, as PyTorch indexes. Ints, slices, None and ... are views (select,
slice, unsqueeze), so a write to the result, or t[key] = v, reaches t and every view of it.
Integer tensors (or lists) and bool masks in the key are advanced indices, applied after the
basic ones as PyTorch applies them: they broadcast together, and their result dims stand where
the first of them stood when they are adjacent, first otherwise. A bool mask stands for the
coordinates of its true elements (nonzero: a sync point in lazy mode). Advanced indexing copies
(one index_select of the indexed dims flattened); t[key] = v writes the selection through
index_put into the view the basic indices make."""
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


def _ndims(k):
    """How many of the tensor's dims a key entry consumes."""
    if k is None or k is Ellipsis or isinstance(k, builtins.bool):
        return 0
    mask = _bool_mask(k)
    return mask.dim() if mask is not None else 1


def _basic(x, key):
    """The view x[key] makes with the advanced entries left as full dims, and those entries as
    (dim of the view, int64 index tensor) pairs in key order."""
    key = tuple(np.asarray(k) if isinstance(k, list) else k for k in key)
    consumed = builtins.sum(_ndims(k) for k in key)
    if consumed > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()}")
    advanced = []
    d = 0
    for pos, k in enumerate(key):
        if k is None:
            x = _C.unsqueeze(x, d)
            d += 1
        elif k is Ellipsis:
            d = x.dim() - builtins.sum(_ndims(j) for j in key[pos + 1:])
        elif isinstance(k, builtins.bool):  # a new dim of size 1 (True) or 0 (False)
            x = _C.unsqueeze(x, d)
            if not k:
                x = _C.slice(x, d, 0, 0, 1)
            d += 1
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
            mask = _bool_mask(k)
            if mask is not None:
                for j in range(mask.dim()):
                    if mask._shape[j] != x._shape[d + j]:
                        raise IndexError(f"The shape of the mask {list(mask._shape)} at index {j} "
                                         f"does not match the shape of the indexed tensor "
                                         f"{list(x._shape)} at index {d + j}")
                coords = _C.nonzero(mask)
                for j in range(mask.dim()):
                    advanced.append((d + j, _C.select(coords, 1, j)))
                d += mask.dim()
                continue
            idx = _as_index(k)
            if idx.dtype.is_floating_point or idx._dtype == D.bool._code:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            advanced.append((d, idx))
            d += 1
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"bool tensors are valid indices (got {type(k).__name__})")
    return x, advanced


class _Advanced:
    """The advanced indices of a view: their dims, broadcast shape, and the row of each selected
    element in the view permuted to (indexed dims..., other dims...) with the indexed dims
    flattened."""

    def __init__(self, x, advanced):
        self.dims = [d for d, _ in advanced]
        self.rest = [d for d in range(x.dim()) if d not in self.dims]
        shapes = [tuple(i._shape) for _, i in advanced]
        try:
            self.shape = list(np.broadcast_shapes(*shapes))
        except ValueError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                             "with shapes " + ", ".join(str(list(s)) for s in shapes)) from None
        linear, stride = None, 1
        for d, i in reversed(advanced):
            size = x._shape[d]
            i = _in_bounds(_wrap_negative(_C.cast(i, D.int64._code), size), d, size)
            term = i if stride == 1 else _C.mul(i, _C.scalar(stride, D.int64._code))
            linear = term if linear is None else _C.add(term, linear)
            stride *= size
        if list(linear._shape) != self.shape:
            linear = _C.expand(linear, self.shape)
        self.rows = _C.reshape(linear, [-1])
        self.flat_shape = [stride] + [x._shape[d] for d in self.rest]
        self.order = self.dims + self.rest
        self.permuted_shape = [x._shape[d] for d in self.order]
        # Adjacent indexed dims keep their place (the broadcast dims replace them); otherwise
        # the broadcast dims come first.
        first, nb = self.dims[0], len(self.shape)
        adjacent = self.dims == list(range(first, first + len(self.dims)))
        before = first if adjacent else 0
        self.to_result = [nb + j for j in range(before)] + list(range(nb)) + \
            [nb + j for j in range(before, len(self.rest))]

    def flat(self, x):
        return _C.reshape(_C.permute(x, self.order), self.flat_shape)

    def result_shape(self):
        picked = self.shape + self.flat_shape[1:]
        return [picked[p] for p in self.to_result]

    def gather(self, x):
        picked = _C.index_select(self.flat(x), 0, self.rows)
        picked = _C.reshape(picked, self.shape + self.flat_shape[1:])
        return _permute_if_moved(picked, self.to_result)

    def put(self, x, values):
        """x with the selection set to values (broadcast to the result's shape)."""
        want = self.result_shape()
        try:
            b = list(np.broadcast_shapes(tuple(values._shape), tuple(want)))
        except ValueError:
            b = None
        if b != want:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(values._shape)} "
                               f"cannot be broadcast to indexing result of shape {want}")
        if list(values._shape) != want:
            values = _C.expand(values, want)
        back = [0] * len(want)
        for i, p in enumerate(self.to_result):
            back[p] = i
        values = _C.reshape(_permute_if_moved(values, back), [-1] + self.flat_shape[1:])
        out = _C.index_put(self.flat(x), self.rows, values, False)
        inverse = [0] * len(self.order)
        for i, d in enumerate(self.order):
            inverse[d] = i
        return _permute_if_moved(_C.reshape(out, self.permuted_shape), inverse)


def _permute_if_moved(x, perm):
    return x if perm == list(range(len(perm))) else _C.permute(x, perm)


def _in_bounds(idx, d, size):
    """idx itself, through a gather that raises PyTorch's out-of-bounds error for dim d (in
    lazy mode, the step's)."""
    n = idx.numel()
    positions = _C.reshape(_C.arange(0, size, 1, D.int64._code), [1] * d + [size])
    try:
        picked = _C.gather(positions, d, _C.reshape(idx, [1] * d + [n]))
    except RuntimeError as e:  # eager mode: PyTorch's IndexError
        if "out of bounds" not in str(e):
            raise
        raise IndexError(str(e).removeprefix("gather: ")) from None
    return _C.reshape(picked, list(idx._shape))


def _wrap_negative(idx, size):
    """Negative entries count from the end, as PyTorch's indexing."""
    zero = _C.scalar(0, idx._dtype)
    return _C.where(_C.lt(idx, zero), _C.add(idx, _C.scalar(size, idx._dtype)), idx)


def _check_mask(x, mask):
    if tuple(mask._shape) != tuple(x._shape[:mask.dim()]):
        raise IndexError(f"The shape of the mask {list(mask._shape)} does not match the shape "
                         f"of the indexed tensor {list(x._shape)}")


def _key(key):
    return key if isinstance(key, tuple) else (key,)


def getitem(self, key):
    mask = _bool_mask(key)
    if mask is not None:
        _check_mask(self, mask)
        return _C.index(self, mask)
    view, advanced = _basic(self, _key(key))
    if not advanced:
        return view
    if len(advanced) == 1:  # one index tensor: index_select along its dim, in place
        d, idx = advanced[0]
        idx = _wrap_negative(idx, view._shape[d])
        shape = list(view._shape)
        out = _C.index_select(view, d, _C.reshape(idx, [-1]))
        if idx.dim() != 1:
            out = _C.reshape(out, shape[:d] + list(idx._shape) + shape[d + 1:])
        return out
    return _Advanced(view, advanced).gather(view)


def _write(view, value):
    if isinstance(value, Tensor) and value.numel() != 1 or isinstance(value, (list, np.ndarray)):
        view.copy_(value)
    else:
        view.fill_(value.item() if isinstance(value, Tensor) else value)


def _values(value, like):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (builtins.int, builtins.float)):
        return _C.full([], float(value), like._dtype)
    return as_tensor(value)


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
        self._index_put_(idx, _values(value, self), False)
        return
    view, advanced = _basic(self, _key(key))
    if not advanced:
        _write(view, value)
        return
    view.copy_(_Advanced(view, advanced).put(view, _C.cast(_values(value, view), view._dtype)))
