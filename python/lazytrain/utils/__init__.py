"""torch.utils: data loading (lt.utils.data)."""
from . import data  # noqa: F401
