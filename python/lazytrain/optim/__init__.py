"""torch.optim: SGD, Adam and AdamW over the C++ optimizers, and lr_scheduler."""
from . import lr_scheduler  # noqa: F401
from .optimizer import SGD, Adam, AdamW, Optimizer  # noqa: F401
