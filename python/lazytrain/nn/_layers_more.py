"""More of torch.nn's layers, over _functional_more: 1-D pooling, pixel shuffling, the remaining
activations (PReLU's weight a parameter), instance norm (running stats as buffers when tracked),
channel dropout, Unflatten, the remaining losses and distances, with PyTorch's arguments, names
and printed forms."""
from .. import _C
from .. import _dtype as D
from . import functional as F
from .module import Module
from .parameter import Parameter


def _module(name, fn, args, repr_fmt, doc):
    """A layer whose forward is fn(input, *its arguments); args: (name, default) pairs."""

    def __init__(self, *values, **named):
        Module.__init__(self)
        if len(values) > len(args):
            raise TypeError(f"{name}() takes at most {len(args)} arguments")
        for i, (key, default) in enumerate(args):
            setattr(self, key, values[i] if i < len(values) else named.pop(key, default))
        if named:
            raise TypeError(f"{name}() got an unexpected keyword argument {next(iter(named))!r}")

    def forward(self, *inputs):
        return fn(*inputs, *[getattr(self, key) for key, _ in args])

    def extra_repr(self):
        return repr_fmt.format(**{key: getattr(self, key) for key, _ in args})

    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "extra_repr": extra_repr, "__doc__": doc})


class MaxPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


def _single(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


AdaptiveAvgPool1d = _module("AdaptiveAvgPool1d", F.adaptive_avg_pool1d, [("output_size", None)],
                            "output_size={output_size}", "torch.nn.AdaptiveAvgPool1d")
PixelShuffle = _module("PixelShuffle", F.pixel_shuffle, [("upscale_factor", None)],
                       "upscale_factor={upscale_factor}", "torch.nn.PixelShuffle")
PixelUnshuffle = _module("PixelUnshuffle", F.pixel_unshuffle, [("downscale_factor", None)],
                         "downscale_factor={downscale_factor}", "torch.nn.PixelUnshuffle")
GLU = _module("GLU", F.glu, [("dim", -1)], "dim={dim}", "torch.nn.GLU")
Hardshrink = _module("Hardshrink", F.hardshrink, [("lambd", 0.5)], "{lambd}",
                     "torch.nn.Hardshrink")
Softshrink = _module("Softshrink", F.softshrink, [("lambd", 0.5)], "{lambd}",
                     "torch.nn.Softshrink")
Tanhshrink = _module("Tanhshrink", F.tanhshrink, [], "", "torch.nn.Tanhshrink")
Threshold = _module("Threshold", F.threshold, [("threshold", None), ("value", None)],
                    "threshold={threshold}, value={value}", "torch.nn.Threshold")
CELU = _module("CELU", F.celu, [("alpha", 1.0)], "alpha={alpha}", "torch.nn.CELU")
SELU = _module("SELU", F.selu, [], "", "torch.nn.SELU")
Softmin = _module("Softmin", F.softmin, [("dim", None)], "dim={dim}", "torch.nn.Softmin")
Softsign = _module("Softsign", F.softsign, [], "", "torch.nn.Softsign")
PairwiseDistance = _module("PairwiseDistance", F.pairwise_distance,
                           [("norm", 2.0), ("eps", 1e-6), ("keepdim", False)], "",
                           "torch.nn.PairwiseDistance")
CosineSimilarity = _module("CosineSimilarity", F.cosine_similarity, [("dim", 1), ("eps", 1e-8)],
                           "", "torch.nn.CosineSimilarity")


class AdaptiveMaxPool1d(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class PReLU(Module):
    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(_C.full([num_parameters], float(init),
                                        (dtype or D.float32)._code))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _InstanceNorm(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        code = (dtype or D.float32)._code
        if affine:
            self.weight = Parameter(_C.full([num_features], 1.0, code))
            self.bias = Parameter(_C.full([num_features], 0.0, code))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _C.full([num_features], 0.0, code))
            self.register_buffer("running_var", _C.full([num_features], 1.0, code))
            self.register_buffer("num_batches_tracked", _C.full([], 0.0, D.int64._code))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def forward(self, input):
        if input.dim() not in (self._dims, self._dims + 1):
            raise ValueError(f"expected {self._dims}D or {self._dims + 1}D input (got "
                             f"{input.dim()}D input)")
        unbatched = input.dim() == self._dims
        if unbatched:
            input = input.unsqueeze(0)
        # As PyTorch's, this leaves num_batches_tracked at 0.
        use_input_stats = self.training or not self.track_running_stats
        out = F.instance_norm(input, self.running_mean if self.track_running_stats else None,
                              self.running_var if self.track_running_stats else None,
                              self.weight, self.bias, use_input_stats, self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    _dims = 2


class InstanceNorm2d(_InstanceNorm):
    _dims = 3


class Dropout1d(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Dropout1d):
    def forward(self, input):
        return F.dropout2d(input, self.p, self.training)


class Unflatten(Module):
    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def _loss(name, fn, options):
    """A loss layer: fn(*inputs, *options, reduction=...) with the options as attributes."""

    def __init__(self, *values, reduction="mean", **named):
        Module.__init__(self)
        for i, (key, default) in enumerate(options):
            setattr(self, key, values[i] if i < len(values) else named.pop(key, default))
        if named:
            raise TypeError(f"{name}() got an unexpected keyword argument {next(iter(named))!r}")
        self.reduction = reduction

    def forward(self, *inputs):
        return fn(*inputs, *[getattr(self, key) for key, _ in options], reduction=self.reduction)

    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "__doc__": f"torch.nn.{name}"})


def _huber(input, target, delta, reduction):
    return F.huber_loss(input, target, reduction, delta)


def _poisson(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps, reduction)


HuberLoss = _loss("HuberLoss", _huber, [("delta", 1.0)])
MarginRankingLoss = _loss("MarginRankingLoss", F.margin_ranking_loss, [("margin", 0.0)])
HingeEmbeddingLoss = _loss("HingeEmbeddingLoss", F.hinge_embedding_loss, [("margin", 1.0)])
SoftMarginLoss = _loss("SoftMarginLoss", F.soft_margin_loss, [])
CosineEmbeddingLoss = _loss("CosineEmbeddingLoss", F.cosine_embedding_loss, [("margin", 0.0)])
TripletMarginLoss = _loss("TripletMarginLoss", F.triplet_margin_loss,
                          [("margin", 1.0), ("p", 2.0), ("eps", 1e-6), ("swap", False)])
MultiLabelSoftMarginLoss = _loss("MultiLabelSoftMarginLoss", F.multilabel_soft_margin_loss,
                                 [("weight", None)])
PoissonNLLLoss = _loss("PoissonNLLLoss", _poisson,
                       [("log_input", True), ("full", False), ("eps", 1e-8)])
GaussianNLLLoss = _loss("GaussianNLLLoss", F.gaussian_nll_loss, [("full", False), ("eps", 1e-6)])

Unfold = _module("Unfold", F.unfold, [("kernel_size", None), ("dilation", 1), ("padding", 0),
                                       ("stride", 1)],
                 "kernel_size={kernel_size}, dilation={dilation}, padding={padding}, "
                 "stride={stride}", "torch.nn.Unfold")
Fold = _module("Fold", F.fold, [("output_size", None), ("kernel_size", None), ("dilation", 1),
                                ("padding", 0), ("stride", 1)],
               "output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, "
               "padding={padding}, stride={stride}", "torch.nn.Fold")


NAMES = ["MaxPool1d", "AvgPool1d", "AdaptiveAvgPool1d", "AdaptiveMaxPool1d", "PixelShuffle",
         "PixelUnshuffle", "GLU", "Hardshrink", "Softshrink", "Tanhshrink", "Threshold", "CELU",
         "SELU", "PReLU", "Softmin", "Softsign", "InstanceNorm1d", "InstanceNorm2d", "Dropout1d",
         "Dropout2d", "Unflatten", "HuberLoss", "MarginRankingLoss", "HingeEmbeddingLoss",
         "SoftMarginLoss", "CosineEmbeddingLoss", "TripletMarginLoss",
         "MultiLabelSoftMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "PairwiseDistance",
         "CosineSimilarity", "Unfold", "Fold"]
