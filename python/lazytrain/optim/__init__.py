"""torch.optim: SGD, Adam and AdamW over the C++ optimizers."""
from .optimizer import SGD, Adam, AdamW, Optimizer  # noqa: F401
