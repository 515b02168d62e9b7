"""torch.nn's padding layers: ConstantPad, ZeroPad2d, ReflectionPad and ReplicationPad in 1, 2
and 3 dims, over F.pad."""
from . import functional as F
from .module import Module


class _Pad(Module):
    dims, mode = 1, "constant"

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = ((int(padding),) * (2 * self.dims) if isinstance(padding, int)
                        else tuple(int(p) for p in padding))
        if len(self.padding) != 2 * self.dims:
            raise ValueError(f"{type(self).__name__}: padding must be an int or "
                             f"{2 * self.dims} ints, got {padding!r}")
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, self.mode, self.value)

    def extra_repr(self):
        if self.mode == "constant":
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


def _layer(name, dims, mode):
    cls = type(name, (_Pad,), {"dims": dims, "mode": mode, "__doc__": f"torch.nn.{name}"})
    if mode != "constant":
        cls.__init__ = lambda self, padding: _Pad.__init__(self, padding)
    return cls


ConstantPad1d = _layer("ConstantPad1d", 1, "constant")
ConstantPad2d = _layer("ConstantPad2d", 2, "constant")
ConstantPad3d = _layer("ConstantPad3d", 3, "constant")
ReflectionPad1d = _layer("ReflectionPad1d", 1, "reflect")
ReflectionPad2d = _layer("ReflectionPad2d", 2, "reflect")
ReflectionPad3d = _layer("ReflectionPad3d", 3, "reflect")
ReplicationPad1d = _layer("ReplicationPad1d", 1, "replicate")
ReplicationPad2d = _layer("ReplicationPad2d", 2, "replicate")
ReplicationPad3d = _layer("ReplicationPad3d", 3, "replicate")


class ZeroPad2d(ConstantPad2d):
    """torch.nn.ZeroPad2d"""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"
