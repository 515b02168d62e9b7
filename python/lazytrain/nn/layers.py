"""The layers, in Python over nn.functional, with PyTorch's constructor arguments, parameter
names and initialization (the C++ layers' too: lt/nn/*.h)."""
import math

from .. import _C, _ops
from .. import _dtype as D
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _empty(*shape, dtype=None):
    return _C.zeros(list(shape), (dtype or D.float32)._code)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(_empty(out_features, in_features, dtype=dtype))
        self.bias = Parameter(_empty(out_features, dtype=dtype)) if bias else None
        if not bias:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Conv2d(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        self.padding_mode = _check_padding_mode(padding_mode)
        if in_channels % groups or out_channels % groups:
            raise ValueError("in_channels and out_channels must be divisible by groups")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        if isinstance(padding, str):
            F._check_padding_string(padding, self.stride)
        self.padding = padding if isinstance(padding, str) else _pair(padding)
        self.dilation = _pair(dilation)
        self.groups = groups
        self.weight = Parameter(_empty(out_channels, in_channels // groups, *self.kernel_size,
                                       dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        if self.padding_mode != "zeros":
            return F.conv2d(_mode_pad(self, input), self.weight, self.bias, self.stride, 0,
                            self.dilation, self.groups)
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self):
        return _conv_repr(self)


def _check_padding_mode(mode):
    modes = ["zeros", "reflect", "replicate", "circular"]
    if mode not in modes:
        raise ValueError(f"padding_mode must be one of {modes}, but got padding_mode='{mode}'")
    return mode


def _mode_pad(conv, input):
    """input padded as conv.padding_mode says (PyTorch's _reversed_padding_repeated_twice; for
    "same", the odd element after)."""
    pads = []
    for i in reversed(range(len(conv.kernel_size))):
        if conv.padding == "valid":
            before = after = 0
        elif conv.padding == "same":
            total = conv.dilation[i] * (conv.kernel_size[i] - 1)
            before, after = total // 2, total - total // 2
        else:
            before = after = conv.padding[i]
        pads += [before, after]
    return F.pad(input, pads, mode=conv.padding_mode)


def _conv_repr(conv):
    """torch.nn's _ConvNd.extra_repr: the arguments that differ from their defaults."""
    s = (f"{conv.in_channels}, {conv.out_channels}, kernel_size={conv.kernel_size}, "
         f"stride={conv.stride}")
    if conv.padding != (0,) * len(conv.padding):
        s += f", padding={conv.padding}"
    if conv.dilation != (1,) * len(conv.dilation):
        s += f", dilation={conv.dilation}"
    output_padding = getattr(conv, "output_padding", (0,))
    if output_padding != (0,) * len(output_padding):
        s += f", output_padding={output_padding}"
    if conv.groups != 1:
        s += f", groups={conv.groups}"
    if conv.bias is None:
        s += ", bias=False"
    if getattr(conv, "padding_mode", "zeros") != "zeros":
        s += f", padding_mode={conv.padding_mode}"
    return s


class Conv1d(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        self.padding_mode = _check_padding_mode(padding_mode)
        one = [v[0] if isinstance(v, (tuple, list)) else v for v in (kernel_size, stride,
                                                                    dilation)]
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.dilation = [(v,) for v in one]
        if isinstance(padding, str):
            F._check_padding_string(padding, self.stride)
            self.padding = padding
        else:
            self.padding = (padding[0] if isinstance(padding, (tuple, list)) else padding,)
        self.weight = Parameter(_empty(out_channels, in_channels // groups, one[0], dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        Conv2d.reset_parameters(self)

    def forward(self, input):
        if self.padding_mode != "zeros":
            return F.conv1d(_mode_pad(self, input), self.weight, self.bias, self.stride, 0,
                            self.dilation, self.groups)
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self):
        return _conv_repr(self)


class ConvTranspose2d(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__()
        if padding_mode != "zeros":
            raise NotImplementedError("ConvTranspose2d: only padding_mode='zeros' is supported")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.output_padding = _pair(padding), _pair(output_padding)
        self.dilation = _pair(dilation)
        self.weight = Parameter(_empty(in_channels, out_channels // groups, *self.kernel_size,
                                       dtype=dtype))
        if bias:
            self.bias = Parameter(_empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        Conv2d.reset_parameters(self)  # PyTorch's: fan_in from the weight's dim 1

    def forward(self, input):
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)

    def extra_repr(self):
        return _conv_repr(self)


class Upsample(Module):
    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size, self.scale_factor = size, float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners)

    def extra_repr(self):
        if self.scale_factor is not None:
            return f"scale_factor={self.scale_factor}, mode={self.mode}"
        return f"size={self.size}, mode={self.mode}"


class AdaptiveMaxPool2d(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _BatchNorm(Module):
    _rank = None

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(_C.ones([num_features], (dtype or D.float32)._code))
            self.bias = Parameter(_empty(num_features, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _empty(num_features, dtype=dtype))
            self.register_buffer("running_var",
                                 _C.ones([num_features], (dtype or D.float32)._code))
            self.register_buffer("num_batches_tracked", _C.zeros([], D.int64._code))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def forward(self, input):
        if input.dim() not in self._ranks:
            raise ValueError(f"expected {' or '.join(f'{r}D' for r in self._ranks)} input "
                             f"(got {input.dim()}D input)")
        training = self.training or not self.track_running_stats
        return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                            training, self._count_batch(), self.eps)

    def _count_batch(self):
        """Counts a training batch (num_batches_tracked) and gives the momentum to update the
        running statistics with: a cumulative average for momentum=None, as PyTorch's."""
        if self.training and self.track_running_stats:
            from .._modes import no_grad
            with no_grad():
                self.num_batches_tracked.add_(1)
        if self.momentum is None:
            return 1.0 / float(self.num_batches_tracked.item())
        return self.momentum

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    _ranks = (4,)


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        if affine:
            self.weight = Parameter(_C.ones([num_channels], (dtype or D.float32)._code))
            self.bias = Parameter(_empty(num_channels, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(
            normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_C.ones(list(shape), (dtype or D.float32)._code))
            self.bias = Parameter(_empty(*shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 device=None, dtype=None):
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(_empty(num_embeddings, embedding_dim, dtype=dtype))
            init.normal_(self.weight)
            if padding_idx is not None:
                from .._modes import no_grad
                with no_grad():
                    self.weight[padding_idx] = 0.0
        else:
            self.weight = Parameter(_weight)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        return s if self.padding_idx is None else s + f", padding_idx={self.padding_idx}"


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return _ops.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxUnpool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding = padding

    def forward(self, input, indices, output_size=None):
        return F.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


def _activation(name, fn, arg_names=(), defaults=()):
    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        values = dict(zip(arg_names, defaults))
        values.update(zip(arg_names, args))
        values.update(kwargs)
        values.pop("inplace", None)
        for k, v in values.items():
            object.__setattr__(self, k, v)

    def forward(self, input):
        return fn(input, *(getattr(self, a) for a in arg_names if a != "inplace"))

    def extra_repr(self):
        return ", ".join(f"{a}={getattr(self, a)!r}" for a in arg_names if a != "inplace")
    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "extra_repr": extra_repr})


ReLU = _activation("ReLU", lambda x: F.relu(x), ("inplace",), (False,))
GELU = _activation("GELU", F.gelu, ("approximate",), ("none",))
Sigmoid = _activation("Sigmoid", F.sigmoid)
Tanh = _activation("Tanh", F.tanh)
SiLU = _activation("SiLU", lambda x: F.silu(x), ("inplace",), (False,))
LeakyReLU = _activation("LeakyReLU", F.leaky_relu, ("negative_slope", "inplace"), (0.01, False))
Softmax = _activation("Softmax", F.softmax, ("dim",), (None,))
LogSoftmax = _activation("LogSoftmax", F.log_softmax, ("dim",), (None,))


ReLU6 = _activation("ReLU6", lambda x: F.relu6(x), ("inplace",), (False,))
Hardtanh = _activation("Hardtanh", F.hardtanh, ("min_val", "max_val", "inplace"),
                       (-1.0, 1.0, False))
ELU = _activation("ELU", F.elu, ("alpha", "inplace"), (1.0, False))
Softplus = _activation("Softplus", F.softplus, ("beta", "threshold"), (1, 20))
Mish = _activation("Mish", lambda x: F.mish(x), ("inplace",), (False,))
Hardswish = _activation("Hardswish", lambda x: F.hardswish(x), ("inplace",), (False,))
Hardsigmoid = _activation("Hardsigmoid", lambda x: F.hardsigmoid(x), ("inplace",), (False,))
LogSigmoid = _activation("LogSigmoid", F.logsigmoid)


class _Loss(Module):
    """A loss module over F.<name>(input, target, reduction=...)."""
    _fn = None

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return type(self)._fn(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    _fn = staticmethod(F.l1_loss)


class BCELoss(_Loss):
    _fn = staticmethod(F.binary_cross_entropy)


class BCEWithLogitsLoss(Module):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__()
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.reduction = reduction

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class SmoothL1Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__()
        self.reduction, self.beta = reduction, beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class NLLLoss(Module):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__()
        self.register_buffer("weight", weight)
        self.ignore_index, self.reduction = ignore_index, reduction

    def forward(self, input, target):
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class KLDivLoss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__()
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class CrossEntropyLoss(Module):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__()
        self.register_buffer("weight", weight)
        self.ignore_index, self.reduction = ignore_index, reduction
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class MSELoss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)
