"""torch.nn: Module, Parameter, the layers, functional (F), init and utils."""
from . import functional, init, utils  # noqa: F401
from .container import ModuleDict, ModuleList, Sequential  # noqa: F401
from .layers import (AdaptiveAvgPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d, Conv2d,  # noqa
                     CrossEntropyLoss, Dropout, Embedding, Flatten, GELU, GroupNorm, Identity,
                     LayerNorm, LeakyReLU, Linear, LogSoftmax, MaxPool2d, MSELoss, ReLU, Sigmoid,
                     SiLU, Softmax, Tanh)
from .module import Module  # noqa: F401
from .parameter import Buffer, Parameter  # noqa: F401
