"""torch.utils: data loading (lt.utils.data) and activation checkpointing (lt.utils.checkpoint)."""
from . import checkpoint, data  # noqa: F401
