"""nn.Parameter: a tensor that a Module registers as a parameter when assigned as an attribute."""
from .. import _C


class Parameter(_C.Tensor):
    """Another handle to `data` (the same values, as PyTorch's Parameter shares storage), marked
    as a leaf that requires grad."""

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = _C.zeros([0], 5)
        # A fresh leaf: history (if any) dropped, values shared.
        super().__init__(data.detach() if data.requires_grad else data)
        self._requires_grad_(requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Buffer:
    """Marks a tensor assigned to a Module attribute as a buffer (torch.nn.Buffer)."""

    def __init__(self, data, persistent=True):
        self.data = data
        self.persistent = persistent
