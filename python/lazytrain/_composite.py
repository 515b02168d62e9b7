"""torch functions and Tensor methods that are compositions of lazytrain's ops, written with
PyTorch's semantics (values, gradients through the ops they are made of, broadcasting, errors)
on the Tensor methods; they trace like any other op in lazy mode."""
import builtins
import math

import numpy as np

from . import _C, _creation, _more_ops, _ops
from . import _dtype as D
from ._convert import as_tensor, as_tensor_pair

Tensor = _C.Tensor


def hstack(tensors):
    tensors = [t if t.dim() else t.reshape(1) for t in tensors]
    return _ops.cat(tensors, 0 if tensors[0].dim() == 1 else 1)


def vstack(tensors):
    return _ops.cat([t.reshape(1, -1) if t.dim() < 2 else t for t in tensors], 0)


def lerp(input, end, weight):
    input, end = as_tensor_pair(input, end)
    return input + as_tensor(weight, input) * (end - input)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    product = mat1 @ mat2
    if alpha != 1:
        product = product * alpha
    return product if beta == 0 else product + (input if beta == 1 else input * beta)


def addcmul(input, tensor1, tensor2, *, value=1):
    return input + tensor1 * tensor2 * value


def addcdiv(input, tensor1, tensor2, *, value=1):
    return input + tensor1 / tensor2 * value


def fliplr(input):
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return input.flip(1)


def flipud(input):
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return input.flip(0)


def repeat_interleave(input, repeats, dim=None):
    """Each element (along dim; of the flattened input without one) repeated `repeats` times (a
    number, or one count per element)."""
    if dim is None:
        input, dim = input.reshape(-1), 0
    n = input.shape[dim]
    counts = repeats.tolist() if isinstance(repeats, Tensor) else repeats
    counts = [int(counts)] * n if isinstance(counts, (int, np.integer)) else list(counts)
    if len(counts) == 1:
        counts = counts * n
    if len(counts) != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {len(counts)} and input.size({dim}) = {n}")
    index = np.repeat(np.arange(n), counts)
    return input.index_select(dim, _C._from_numpy(index.astype(np.int64), D.int64._code))


def tile(input, dims):
    dims = tuple(dims)
    if len(dims) < input.dim():
        dims = (1,) * (input.dim() - len(dims)) + dims
    return input.repeat(*dims)


def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    indexing = indexing or "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                         f"received: {indexing}")
    swap = indexing == "xy" and len(tensors) >= 2
    ordered = list(tensors)
    if swap:
        ordered[0], ordered[1] = ordered[1], ordered[0]
    shape = [t.numel() for t in ordered]
    grids = []
    for i, t in enumerate(ordered):
        view = [1] * len(ordered)
        view[i] = -1
        grids.append(t.reshape(*view).expand(*shape))
    if swap:  # PyTorch's "xy": "ij" of the first two swapped, and their grids swapped back
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    exponents = _more_ops.linspace(start, end, steps, dtype=D.float64)
    t = (base ** exponents).to(dtype or D.float32)
    return t.requires_grad_(requires_grad) if requires_grad else t


def isnan(input):
    return input != input


def isinf(input):
    input = as_tensor(input)
    if not input.is_floating_point():
        return input != input  # all false, as bool
    return input.abs() == math.inf


def isposinf(input):
    return input == math.inf


def isneginf(input):
    return input == -math.inf


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    if not input.is_floating_point():
        return input.clone()
    big = float(np.finfo(D.numpy_name(input.dtype) or "float32").max) if (
        input.dtype is not D.bfloat16) else 3.3895313892515355e38
    out = input.masked_fill(isnan(input), nan)
    out = out.masked_fill(input == math.inf, big if posinf is None else posinf)
    return out.masked_fill(input == -math.inf, -big if neginf is None else neginf)


def log2(input):
    return input.log() * (1 / math.log(2))


def log10(input):
    return input.log() * (1 / math.log(10))


def exp2(input):
    return 2 ** input


def hypot(input, other):
    return (input * input + other * other).sqrt()


def movedim(input, source, destination):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    n = input.dim()
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    src = [s % n for s in src]
    dst = [d % n for d in dst]
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    return input.permute(*[o if o is not None else next(rest) for o in order])


def unflatten(input, dim, sizes):
    dim = dim % input.dim()
    shape = list(input.shape)
    return input.reshape(*shape[:dim], *sizes, *shape[dim + 1:])


def take(input, index):
    return input.reshape(-1).index_select(0, index.reshape(-1)).reshape(tuple(index.shape))


def take_along_dim(input, indices, dim=None):
    if dim is None:
        return take(input, indices)
    shape = [builtins.max(a, b) for a, b in zip(input.shape, indices.shape)]
    shape[dim] = input.shape[dim]
    grown = input.expand(*shape)
    shape[dim] = indices.shape[dim]
    return grown.gather(dim, indices.expand(*shape))


def std_mean(input, dim=None, unbiased=True, keepdim=False):
    return (input.std(dim=dim, unbiased=unbiased, keepdim=keepdim),
            input.mean(dim=dim, keepdim=keepdim) if dim is not None else input.mean())


def var_mean(input, dim=None, unbiased=True, keepdim=False):
    return (input.var(dim=dim, unbiased=unbiased, keepdim=keepdim),
            input.mean(dim=dim, keepdim=keepdim) if dim is not None else input.mean())


def tensordot(a, b, dims=2):
    if isinstance(dims, int):
        dims_a, dims_b = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        dims_a, dims_b = ([dims[0]] if isinstance(dims[0], int) else list(dims[0]),
                          [dims[1]] if isinstance(dims[1], int) else list(dims[1]))
    dims_a = [d % a.dim() for d in dims_a]
    dims_b = [d % b.dim() for d in dims_b]
    free_a = [d for d in range(a.dim()) if d not in dims_a]
    free_b = [d for d in range(b.dim()) if d not in dims_b]
    k = int(np.prod([a.shape[d] for d in dims_a]))
    left = a.permute(*free_a, *dims_a).reshape(-1, k)
    right = b.permute(*dims_b, *free_b).reshape(k, -1)
    return (left @ right).reshape(*[a.shape[d] for d in free_a], *[b.shape[d] for d in free_b])


def kron(input, other):
    n = builtins.max(input.dim(), other.dim())
    a = input.reshape(*([1] * (n - input.dim())), *input.shape)
    b = other.reshape(*([1] * (n - other.dim())), *other.shape)
    inter_a, inter_b = [], []
    for i in range(n):
        inter_a += [a.shape[i], 1]
        inter_b += [1, b.shape[i]]
    return (a.reshape(*inter_a) * b.reshape(*inter_b)).reshape(
        *[a.shape[i] * b.shape[i] for i in range(n)])


def cross(input, other, dim=None):
    if dim is None:
        dim = next(i for i, s in enumerate(input.shape) if s == 3)
    if input.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    a = [input.select(dim, i) for i in range(3)]
    b = [other.select(dim, i) for i in range(3)]
    return _ops.stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                       a[0] * b[1] - a[1] * b[0]], dim)


def dist(input, other, p=2):
    return (input - other).norm(p=p)


def cdist(x1, x2, p=2.0):
    """Pairwise p-norm distances of the rows of x1 [..., P, M] and x2 [..., R, M]."""
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 2:
        return (diff * diff).sum(-1).sqrt()
    if p == 1:
        return diff.abs().sum(-1)
    if p == math.inf:
        return diff.abs().amax(-1)
    return (diff.abs() ** p).sum(-1) ** (1 / p)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None):
    """Where each value would go in the (innermost-dim) sorted sequence: the count of elements
    below it (right: at or below)."""
    if side is not None:
        right = side == "right"
    values = as_tensor(input, sorted_sequence)
    if sorted_sequence.dim() == 1:
        below = (sorted_sequence <= values.unsqueeze(-1)) if right else (
            sorted_sequence < values.unsqueeze(-1))
    else:
        below = (sorted_sequence.unsqueeze(-2) <= values.unsqueeze(-1)) if right else (
            sorted_sequence.unsqueeze(-2) < values.unsqueeze(-1))
    return below.long().sum(-1).to(D.int32 if out_int32 else D.int64)


def bucketize(input, boundaries, *, out_int32=False, right=False):
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def bernoulli(input, p=None, *, generator=None):
    """1 where a uniform draw falls below the probability (input's, or p), else 0."""
    probs = input.detach() if p is None else _creation.full_like(input, p)
    return (_creation.rand_like(probs) < probs).to(input.dtype)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None):
    """Draws of N(mean, std^2): tensors broadcast (no gradient), or numbers and a size."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        mean, std = as_tensor_pair(mean, std)
        mean, std = mean.detach(), std.detach()
        return _creation.randn_like(mean + std) * std + mean
    return _creation.randn(*size, dtype=dtype) * std + mean


def median(input, dim=None, keepdim=False):
    """PyTorch's median: the lower of the two middle values; with dim, (values, indices)."""
    if dim is None:
        flat = input.reshape(-1)
        return flat.sort()[0][(flat.numel() - 1) // 2]
    values, indices = input.sort(dim=dim)
    k = (input.shape[dim] - 1) // 2
    v, i = values.select(dim, k), indices.select(dim, k)
    if keepdim:
        v, i = v.unsqueeze(dim), i.unsqueeze(dim)
    return _MinMax(v, i)


class _MinMax(tuple):
    """torch.return_types.median: values and indices, by name or position."""

    def __new__(cls, values, indices):
        return super().__new__(cls, (values, indices))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    from .nn import functional as F
    return F.cosine_similarity(x1, x2, dim, eps)


def clamp_min(input, min):  # noqa: A002 - PyTorch's name
    return input.clamp(min=min)


def clamp_max(input, max):  # noqa: A002
    return input.clamp(max=max)


def argwhere(input):
    return input.nonzero()


def _along(input, dim, flags):
    """A [n] tensor shaped to broadcast along `dim` of input."""
    shape = [1] * input.dim()
    shape[dim] = -1
    return flags.reshape(*shape)


def index_fill(input, dim, index, value):
    dim = dim % builtins.max(input.dim(), 1)
    n = input.shape[dim]
    hit = (_creation.arange(n).unsqueeze(1) == index.reshape(1, -1)).any(dim=1)
    return input.masked_fill(_along(input, dim, hit), value)


def index_copy(input, dim, index, source):
    dim = dim % builtins.max(input.dim(), 1)
    shape = [1] * source.dim()
    shape[dim] = -1
    return input.scatter(dim, index.reshape(*shape).expand(*source.shape), source)


def unfold(input, dimension, size, step):
    """Tensor.unfold: the windows of `size` every `step` along dimension, as a new last dim."""
    dim = dimension % builtins.max(input.dim(), 1)
    n = input.shape[dim]
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {n} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    count = (n - size) // step + 1
    index = (np.arange(count)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
    windows = input.index_select(dim, _C._from_numpy(index.astype(np.int64), D.int64._code))
    shape = list(input.shape)
    windows = windows.reshape(*shape[:dim], count, size, *shape[dim + 1:])
    return movedim(windows, dim + 1, -1)


def _diagonal_mask(input, wrap):
    if input.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if input.dim() > 2 and len(set(input.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    rows, cols = input.shape[0], input.shape[1]
    if input.dim() > 2:
        coords = [_along(input, d, _creation.arange(rows)) for d in range(input.dim())]
        mask = coords[0] == coords[1]
        for c in coords[2:]:
            mask = mask & (coords[0] == c)
        return mask
    r = _creation.arange(rows).unsqueeze(1)
    c = _creation.arange(cols).unsqueeze(0)
    if wrap and rows > cols:  # PyTorch's: the diagonal starts again every cols + 1 rows
        return (r % (cols + 1) == c) & (r % (cols + 1) < cols)
    return r == c


def fill_diagonal_(input, fill_value, wrap=False):
    return input.copy_(input.masked_fill(_diagonal_mask(input, wrap), fill_value))


def index_fill_(input, dim, index, value):
    return input.copy_(index_fill(input, dim, index, value))


def index_copy_(input, dim, index, source):
    return input.copy_(index_copy(input, dim, index, source))


def _uniform_like(input):
    return _creation.rand_like(input.detach(), dtype=input.dtype if input.is_floating_point()
                               else D.float64)


def bernoulli_(input, p=0.5, *, generator=None):
    probs = p if isinstance(p, Tensor) else _creation.full_like(input.detach(), p,
                                                                 dtype=D.float64)
    return input.copy_(_creation.rand_like(probs.detach()) < probs)


def random_(input, from_=0, to=None, *, generator=None):
    """Integers uniform in [from_, to) (to=None: [0, from_) if given alone, as PyTorch's
    random_(to), else up to 2^24 for float32, 2^53 for float64, the type's maximum for ints)."""
    low, high = (0, from_) if to is None and from_ else (from_, to)
    if high is None:
        high = {D.float32: 2 ** 24, D.float64: 2 ** 53, D.float16: 2 ** 11,
                D.bfloat16: 2 ** 8, D.int32: 2 ** 31 - 1}.get(input.dtype, 2 ** 63 - 1)
    u = _creation.rand_like(input.detach(), dtype=D.float64)
    return input.copy_((u * (high - low)).floor() + low)


def exponential_(input, lambd=1.0, *, generator=None):
    return input.copy_(-(1 - _uniform_like(input)).log() / lambd)


def log_normal_(input, mean=1.0, std=2.0, *, generator=None):
    return input.copy_((_creation.randn_like(input.detach()) * std + mean).exp())


def cauchy_(input, median=0.0, sigma=1.0, *, generator=None):
    angle = (_uniform_like(input) - 0.5) * math.pi
    return input.copy_(angle.sin() / angle.cos() * sigma + median)


def geometric_(input, p, *, generator=None):
    return input.copy_(((1 - _uniform_like(input)).log() / math.log(1 - p)).ceil())


def new_empty(input, *size, dtype=None, device=None, requires_grad=False):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return _creation.zeros(*size, dtype=dtype or input.dtype, requires_grad=requires_grad)


def ndimension(input):
    return input.dim()


def split_with_sizes(input, split_sizes, dim=0):
    return input.split(list(split_sizes), dim)


FUNCTIONS = ["hstack", "vstack", "lerp", "addmm", "addcmul", "addcdiv", "fliplr", "flipud",
             "repeat_interleave", "tile", "meshgrid", "logspace", "isnan", "isinf", "isposinf",
             "isneginf", "nan_to_num", "log2", "log10", "exp2", "hypot", "movedim", "unflatten",
             "take", "take_along_dim", "std_mean", "var_mean", "tensordot", "kron", "cross",
             "dist", "cdist", "searchsorted", "bucketize", "bernoulli", "normal", "median",
             "cosine_similarity", "clamp_min", "clamp_max", "argwhere", "index_fill",
             "index_copy"]
METHODS = ["lerp", "addmm", "addcmul", "addcdiv", "fliplr", "flipud", "repeat_interleave",
           "tile", "isnan", "isinf", "isposinf", "isneginf", "nan_to_num", "log2", "log10",
           "exp2", "hypot", "movedim", "unflatten", "take", "take_along_dim", "kron", "cross",
           "dist", "bernoulli", "median", "clamp_min", "clamp_max", "argwhere", "index_fill",
           "index_copy", "unfold", "fill_diagonal_", "index_fill_", "index_copy_", "bernoulli_",
           "random_", "exponential_", "log_normal_", "cauchy_", "geometric_", "new_empty",
           "ndimension", "split_with_sizes"]
