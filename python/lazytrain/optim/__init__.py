"""torch.optim: SGD, Adam, AdamW, RMSprop and Adagrad over the C++ optimizers, and
lr_scheduler."""
from . import lr_scheduler  # noqa: F401
from .optimizer import SGD, Adagrad, Adam, AdamW, Optimizer, RMSprop  # noqa: F401
