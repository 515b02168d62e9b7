"""torch.nn.init: in place, without history, from lazytrain's generator (lt.manual_seed)."""
import math

from .. import _C
from .._modes import no_grad

_GAINS = {"linear": 1, "conv1d": 1, "conv2d": 1, "conv3d": 1, "sigmoid": 1, "tanh": 5 / 3,
          "relu": math.sqrt(2), "selu": 3 / 4}


def calculate_gain(nonlinearity, param=None):
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2 / (1 + slope ** 2))
    if nonlinearity not in _GAINS:
        raise ValueError(f"Unsupported nonlinearity {nonlinearity}")
    return _GAINS[nonlinearity]


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    return _C.fan_in_and_fan_out(tensor)


def uniform_(tensor, a=0.0, b=1.0):
    _C.init_uniform_(tensor, a, b)
    return tensor


def normal_(tensor, mean=0.0, std=1.0):
    _C.init_normal_(tensor, mean, std)
    return tensor


def constant_(tensor, val):
    _C.init_constant_(tensor, val)
    return tensor


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor, gain=1.0):
    _C.init_xavier_uniform_(tensor, gain)
    return tensor


def xavier_normal_(tensor, gain=1.0):
    _C.init_xavier_normal_(tensor, gain)
    return tensor


def _fan(tensor, mode):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    return fan_in if mode == "fan_in" else fan_out


# The bounds in the C++ library's order of operations (frontend/nn/init.cpp), so that a model
# drawn from Python has the C++ model's weights bit for bit.
def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    std = calculate_gain(nonlinearity, a) * (1 / math.sqrt(_fan(tensor, mode)))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    std = calculate_gain(nonlinearity, a) * (1 / math.sqrt(_fan(tensor, mode)))
    return normal_(tensor, 0.0, std)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    """N(mean, std^2) clamped to [a, b] (PyTorch redraws out-of-range values instead)."""
    normal_(tensor, mean, std)
    with no_grad():
        tensor.clamp_(a, b)
    return tensor
