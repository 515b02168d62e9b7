"""torch.nn: Module, Parameter, the layers, functional (F), init, utils and parallel."""
from . import functional, init, utils  # noqa: F401
from .container import (ModuleDict, ModuleList, ParameterDict, ParameterList,  # noqa: F401
                        Sequential)
from .layers import (AdaptiveAvgPool2d, AdaptiveMaxPool2d, AvgPool2d, BatchNorm1d,  # noqa
                     BatchNorm2d, Conv1d, Conv2d, ConvTranspose2d, CrossEntropyLoss, Dropout,
                     Embedding, Flatten, GELU, GroupNorm, Identity, LayerNorm, LeakyReLU, Linear,
                     LogSoftmax, MaxPool2d, MaxUnpool2d, MSELoss, ReLU, Sigmoid, SiLU, Softmax,
                     Tanh, Upsample)
from .module import Module  # noqa: F401
from .parameter import Buffer, Parameter  # noqa: F401
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNCell  # noqa: F401
from .attention import (MultiheadAttention, Transformer, TransformerDecoder,  # noqa: F401
                        TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer)
from .layers import (BCELoss, BCEWithLogitsLoss, ELU, Hardsigmoid, Hardswish, Hardtanh,  # noqa
                     KLDivLoss, L1Loss, LogSigmoid, Mish, NLLLoss, ReLU6, SmoothL1Loss, Softplus)
from .padding import (ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d,  # noqa
                      ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
                      ReplicationPad3d, ZeroPad2d)
from .sync_batchnorm import SyncBatchNorm  # noqa: F401
from . import parallel  # noqa: F401,E402
from . import _layers_more  # noqa: E402
for _name in _layers_more.NAMES:
    globals()[_name] = getattr(_layers_more, _name)
del _name
