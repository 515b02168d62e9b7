"""Creation functions with PyTorch's size arguments (f(2, 3), f((2, 3))) and keywords."""
import builtins

from . import _C
from . import _dtype as D
from ._ops import _sizes


def _finish(t, requires_grad):
    if requires_grad:
        t._requires_grad_(True)
    return t


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_C.zeros(_sizes(size), (dtype or D.float32)._code), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_C.ones(_sizes(size), (dtype or D.float32)._code), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    """torch.empty: lazytrain has no uninitialized storage, so these are zeros."""
    return zeros(*size, dtype=dtype, requires_grad=requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if dtype is None:  # PyTorch: the number's type
        dtype = (D.bool if isinstance(fill_value, builtins.bool) else
                 D.int64 if isinstance(fill_value, builtins.int) else D.float32)
    return _finish(_C.full(_sizes((size,)), builtins.float(fill_value), dtype._code),
                   requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    if dtype is None:
        ints = builtins.all(isinstance(v, builtins.int) for v in (start, end, step))
        dtype = D.int64 if ints else D.float32
    return _finish(_C.arange(start, end, step, dtype._code), requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None):
    return _finish(_C.rand(_sizes(size), (dtype or D.float32)._code), requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None):
    return _finish(_C.randn(_sizes(size), (dtype or D.float32)._code), requires_grad)


def _like(fn):
    def op(input, *, dtype=None, device=None, requires_grad=False):
        return fn(list(input._shape), dtype=dtype or input.dtype, requires_grad=requires_grad)
    op.__name__ = fn.__name__ + "_like"
    return op


zeros_like, ones_like, empty_like = _like(zeros), _like(ones), _like(empty)
rand_like, randn_like = _like(rand), _like(randn)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    return full(list(input._shape), fill_value, dtype=dtype or input.dtype,
                requires_grad=requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return _finish(_C.scalar(builtins.float(s), (dtype or D.float32)._code), requires_grad)


_seedings = 0  # manual_seed calls so far: lazytrain.vision's draws restart at each


def manual_seed(seed):
    global _seedings
    _C.manual_seed(builtins.int(seed))
    _seedings += 1


def initial_seed():
    """The seed of the global generator (the last manual_seed's), as torch.initial_seed."""
    return _C.initial_seed()


NAMES = ["zeros", "ones", "empty", "full", "arange", "rand", "randn", "zeros_like", "ones_like",
         "empty_like", "rand_like", "randn_like", "full_like", "scalar_tensor", "manual_seed",
         "initial_seed"]
