"""lazytrain from Python with PyTorch's names: `import lazytrain as lt` where a script had
`import torch`. Tensors run eagerly on CPU kernels or, in lazy mode, trace into one graph per
step that lt.mark_step() compiles (once) and runs. docs/PYTHON.md maps the API."""
from . import _C
from . import _dtype
from ._dtype import (bfloat16, bool, double, dtype, float, float16, float32, float64, half,
                     int, int32, int64, long)
from ._device import backends, cuda, device
from ._size import Size
from . import _tensor  # noqa: F401 - adds PyTorch's methods to Tensor
from ._convert import from_dlpack, from_numpy, tensor
from ._convert import public_as_tensor as as_tensor
from . import _ops, _creation, _modes, _more_ops, _composite

Tensor = _C.Tensor
for _name in _ops.FUNCTIONS:
    globals()[_name] = getattr(_ops, _name)
for _name in _creation.NAMES:
    globals()[_name] = getattr(_creation, _name)
for _name in _modes.NAMES:
    globals()[_name] = getattr(_modes, _name)
for _name in _more_ops.FUNCTIONS:
    globals()[_name] = getattr(_more_ops, _name)
for _name in _more_ops.METHODS:
    setattr(Tensor, _name, getattr(_more_ops, _name))
for _name in _composite.FUNCTIONS:
    globals()[_name] = getattr(_composite, _name)
for _name in _composite.METHODS:
    setattr(Tensor, _name, getattr(_composite, _name))
del _name
_modes._name_every_call()  # LT_DEBUG from the environment


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


from . import amp, autograd, debug, distributed, nn, optim, utils, vision  # noqa: E402
from .amp import autocast  # noqa: E402
from .serialization import load, save  # noqa: E402
