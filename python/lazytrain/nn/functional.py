"""torch.nn.functional over the C++ ops."""
import numpy as np

from .. import _C, _ops
from .. import _dtype as D
from .._convert import as_tensor


def relu(input, inplace=False):
    return _C.relu(input)


gelu = _ops.gelu
leaky_relu = _ops.leaky_relu
softmax = _ops.softmax
log_softmax = _ops.log_softmax


def _pair(v):
    return [int(v), int(v)] if isinstance(v, int) else [int(x) for x in v]


def sigmoid(input):
    return _C.sigmoid(input)


def tanh(input):
    return _C.tanh(input)


def silu(input, inplace=False):
    return _C.silu(input)


def hardswish(input, inplace=False):
    return _C.hardswish(input)


def hardsigmoid(input, inplace=False):
    return _C.hardsigmoid(input)


def mish(input, inplace=False):
    return _C.mish(input)


def elu(input, alpha=1.0, inplace=False):
    return _C.elu(input, alpha)


def softplus(input, beta=1, threshold=20):
    return _C.softplus(input, beta, threshold)


def linear(input, weight, bias=None):
    return _C.linear(input, weight, bias)


def _check_padding_string(padding, stride):
    if padding not in ("valid", "same"):
        raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                         "{'valid', 'same'}")
    if padding == "same" and any(s != 1 for s in stride):
        raise ValueError("padding='same' is not supported for strided convolutions")


def _string_padding(input, weight, padding, stride, dilation):
    """PyTorch's padding='same' (or 'valid'): the input and the symmetric padding to convolve
    it with. 'same' pads dilation * (kernel - 1) in all per dim, half on the left and the rest
    on the right; an odd total puts the extra element on the right, padded here first."""
    _check_padding_string(padding, stride)
    nd = len(stride)
    if padding == "valid":
        return input, (0,) * nd
    totals = [d * (k - 1) for k, d in zip(weight.shape[2:], dilation)]
    left = tuple(t // 2 for t in totals)
    extra = [t - 2 * (t // 2) for t in totals]
    if any(extra):
        input = _C.pad(input, [(0, 0)] * 2 + [(0, e) for e in extra], 0.0)
    return input, left


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if isinstance(padding, str):
        input, padding = _string_padding(input, weight, padding, _pair(stride), _pair(dilation))
    return _C.conv2d(input, weight, bias, _pair(stride), _pair(padding), _pair(dilation), groups)


def _one(v):
    return int(v[0]) if isinstance(v, (tuple, list)) else int(v)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if isinstance(padding, str):
        input, padding = _string_padding(input, weight, padding, (_one(stride),),
                                         (_one(dilation),))
    return _C.conv1d(input, weight, bias, _one(stride), _one(padding), _one(dilation), groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _C.conv_transpose2d(input, weight, bias, _pair(stride), _pair(padding),
                               _pair(output_padding), groups, _pair(dilation))


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if recompute_scale_factor or antialias:
        raise NotImplementedError("interpolate: recompute_scale_factor and antialias are not "
                                  "supported yet")
    if (size is None) == (scale_factor is None):
        raise ValueError("either size or scale_factor should be defined")
    sizes = [] if size is None else _pair(size)
    scales = [] if scale_factor is None else (
        [float(scale_factor)] * 2 if isinstance(scale_factor, (int, float)) else
        [float(f) for f in scale_factor])
    return _C.interpolate(input, sizes, scales, mode, align_corners)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """With return_indices, (values, indices): each window's first maximum as its flat position
    h W + w in the input's plane, PyTorch's."""
    stride = [] if stride is None or stride == [] else _pair(stride)
    if return_indices:
        return _C.max_pool2d_with_indices(input, _pair(kernel_size), stride, _pair(padding),
                                          _pair(dilation), ceil_mode)
    if _pair(dilation) != [1, 1] or input.dim() == 3:
        return _C.max_pool2d_with_indices(input, _pair(kernel_size), stride, _pair(padding),
                                          _pair(dilation), ceil_mode)[0]
    return _C.max_pool2d(input, _pair(kernel_size), stride, _pair(padding), ceil_mode)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of max_pool2d(return_indices=True): each value written at its index in a
    zero plane of (in - 1) stride - 2 padding + kernel (or output_size's last two)."""
    kernel = _pair(kernel_size)
    stride = kernel if stride is None or stride == [] else _pair(stride)
    padding = _pair(padding)
    shape = list(input._shape)
    default = [(shape[-2 + i] - 1) * stride[i] - 2 * padding[i] + kernel[i] for i in range(2)]
    if output_size is None:
        size = default
    else:
        size = [int(v) for v in list(output_size)[-2:]]
        for i in range(2):
            low, high = default[i] - stride[i], default[i] + stride[i]
            if not low < size[i] < high:
                raise ValueError(f'invalid output_size "{size}" (dim {i} must be between '
                                 f'{low} and {high})')
    lead = shape[:-2]
    flat = _C.reshape(input, lead + [shape[-2] * shape[-1]])
    plane = _C.zeros(lead + [size[0] * size[1]], input._dtype)
    out = _ops.scatter(plane, -1, _C.reshape(indices, lead + [shape[-2] * shape[-1]]), flat)
    return _C.reshape(out, lead + size)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    if divisor_override is not None:
        raise NotImplementedError("avg_pool2d: divisor_override is not supported yet")
    stride = [] if stride is None or stride == [] else _pair(stride)
    return _C.avg_pool2d(input, _pair(kernel_size), stride, _pair(padding), ceil_mode,
                         count_include_pad)


def adaptive_avg_pool2d(input, output_size):
    return _C.adaptive_avg_pool2d(input, _pair(output_size))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    if return_indices:
        return _C.adaptive_max_pool2d_with_indices(input, _pair(output_size))
    return _C.adaptive_max_pool2d(input, _pair(output_size))


def dropout(input, p=0.5, training=True, inplace=False):
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _C.dropout(input, p, training)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    input = as_tensor(input)
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    if weight is None:
        weight = _C.ones(shape, input._dtype)
    if bias is None:
        bias = _C.zeros(shape, input._dtype)
    return _C.layer_norm(input, weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    input = as_tensor(input)
    c = [input._shape[1]]
    if weight is None:
        weight = _C.ones(c, input._dtype)
    if bias is None:
        bias = _C.zeros(c, input._dtype)
    return _C.batch_norm(input, weight, bias, running_mean, running_var, training,
                         0.1 if momentum is None else momentum, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Composed of reshape, mean and var (no C++ op of its own): statistics over each group of
    channels and the rest of the sample."""
    input = as_tensor(input)
    shape = list(input._shape)
    n, c = shape[0], shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {shape} and num_groups={num_groups}")
    g = _C.reshape(input, [n, num_groups, -1])
    mean = _C.mean(g, [2], True)
    var = _C.var(g, [2], False, True)
    eps_t = _C.scalar(eps, input._dtype)
    y = _C.reshape(_C.div(_C.sub(g, mean), _C.sqrt(_C.add(var, eps_t))), shape)
    affine = [1, c] + [1] * (len(shape) - 2)
    if weight is not None:
        y = _C.mul(y, _C.reshape(weight, affine))
    if bias is not None:
        y = _C.add(y, _C.reshape(bias, affine))
    return y


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not "
                                  "supported yet")
    ids = as_tensor(input)
    out = _C.embedding(weight, ids)
    if padding_idx is None:
        return out
    # The padding row's lookups give its values but no gradient, as PyTorch's.
    if padding_idx < 0:
        padding_idx += weight._shape[0]
    keep = _C.unsqueeze(_C.ne(ids, _C.scalar(padding_idx, ids._dtype)), -1)
    return _C.where(keep, out, out.detach())


def one_hot(tensor, num_classes=-1):
    if num_classes < 0:
        num_classes = int(_C.max(tensor, [], False).item()) + 1
    return _C.one_hot(tensor, num_classes, D.int64._code)


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        raise NotImplementedError("size_average and reduce are deprecated; use reduction=")
    return reduction


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    return _C.cross_entropy(input, target, weight, ignore_index,
                            _reduction(size_average, reduce, reduction), label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    return _C.nll_loss(input, target, weight, ignore_index,
                       _reduction(size_average, reduce, reduction))


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _C.mse_loss(input, target, _reduction(size_average, reduce, reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    return _C.l1_loss(input, target, _reduction(size_average, reduce, reduction))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    return _C.smooth_l1_loss(input, target, beta, _reduction(size_average, reduce, reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    return _C.binary_cross_entropy_with_logits(input, target, weight, pos_weight,
                                               _reduction(size_average, reduce, reduction))


def pad(input, pad, mode="constant", value=0.0):
    """torch.nn.functional.pad: pairs from the last dim backwards; mode "constant", or
    "reflect", "replicate" and "circular", which gather the padded dims' elements by index (so
    their gradients add up where an element is repeated)."""
    input = as_tensor(input)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    n = input.dim()
    if mode == "constant":
        pairs = [(0, 0)] * n
        for i in range(len(pad) // 2):
            pairs[n - 1 - i] = (pad[2 * i], pad[2 * i + 1])
        return _C.pad(input, pairs, value if value is not None else 0.0)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"pad: mode {mode!r} is not supported; constant, reflect, "
                                  "replicate or circular")
    if not 2 <= n <= 5:
        raise NotImplementedError("Only 2D, 3D, 4D, 5D padding with non-constant padding are "
                                  "supported for now")
    if len(pad) // 2 > min(n - 1, 3):
        raise NotImplementedError(f"pad: mode {mode!r} pads at most {min(n - 1, 3)} dims of a "
                                  f"{n}-D input (its first is the batch or channel dim), got "
                                  f"{len(pad) // 2} pairs")
    out = input
    shape = list(input.shape)
    for i in range(len(pad) // 2):
        d, before, after = n - 1 - i, int(pad[2 * i]), int(pad[2 * i + 1])
        if before < 0 or after < 0:
            raise NotImplementedError(f"pad: negative padding in mode {mode!r} is not supported")
        if before == after == 0:
            continue
        index = _pad_index(shape[d], before, after, mode, d, shape)
        out = _C.index_select(out, d, _C._from_numpy(np.asarray(index, np.int64), D.int64._code))
    return out


def _pad_index(size, before, after, mode, dim, shape):
    """The source position of each position of a dim padded by (before, after) in `mode`."""
    if mode == "reflect":
        if before >= size or after >= size:
            raise RuntimeError(f"Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({before}, {after}) at dimension "
                               f"{dim} of input {shape}")
        return ([before - k for k in range(before)] + list(range(size)) +
                [size - 2 - k for k in range(after)])
    if mode == "symmetric":  # torchvision's: reflect with the edge repeated
        if before > size or after > size:
            raise RuntimeError(f"Padding size should be at most the corresponding input "
                               f"dimension, but got: padding ({before}, {after}) at dimension "
                               f"{dim} of input {shape}")
        return ([before - 1 - k for k in range(before)] + list(range(size)) +
                [size - 1 - k for k in range(after)])
    if mode == "replicate":
        if size == 0:
            raise RuntimeError(f"pad: replicate padding of an empty dimension {dim} of input "
                               f"{shape}")
        return [0] * before + list(range(size)) + [size - 1] * after
    if before > size or after > size:
        raise RuntimeError("Padding value causes wrapping around more than once.")
    return list(range(size - before, size)) + list(range(size)) + list(range(after))


def relu6(input, inplace=False):
    return _C.relu6(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _C.hardtanh(input, float(min_val), float(max_val))


def logsigmoid(input):
    return _C.neg(_C.softplus(_C.neg(input), 1.0, 20.0))


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """x / max(||x||_p, eps) along dim."""
    from .._more_ops import norm
    return _C.div(input, _C.clamp(norm(input, p, dim, True), eps, None))


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """PyTorch 1.13's: sum(x1 x2) / sqrt(max(|x1|^2 |x2|^2, eps^2)) along dim."""
    dot = _C.sum(_C.mul(x1, x2), [dim], False)
    n1 = _C.sum(_C.mul(x1, x1), [dim], False)
    n2 = _C.sum(_C.mul(x2, x2), [dim], False)
    return _C.div(dot, _C.sqrt(_C.clamp(_C.mul(n1, n2), eps * eps, None)))


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return _C.sum(loss, [], False)
    if reduction == "mean":
        return _C.mean(loss, [], False)
    raise ValueError(f"{reduction} is not a valid value for reduction")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-(t log p + (1 - t) log(1 - p)), each log clamped to >= -100 as PyTorch's."""
    reduction = _reduction(size_average, reduce, reduction)
    log_p = _C.clamp(_C.log(input), -100.0, None)
    one = _C.scalar(1, input._dtype)
    log_q = _C.clamp(_C.log(_C.sub(one, input)), -100.0, None)
    loss = _C.neg(_C.add(_C.mul(target, log_p), _C.mul(_C.sub(one, target), log_q)))
    if weight is not None:
        loss = _C.mul(loss, weight)
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target (log target - input), 0 where target is 0; "batchmean" divides the sum by the
    batch size."""
    reduction = _reduction(size_average, reduce, reduction)
    if log_target:
        loss = _C.mul(_C.exp(target), _C.sub(target, input))
    else:
        zero = _C.scalar(0, target._dtype)
        positive = _C.gt(target, zero)
        safe = _C.where(positive, target, _C.scalar(1, target._dtype))
        loss = _C.where(positive, _C.mul(target, _C.sub(_C.log(safe), input)),
                        _C.mul(zero, input))
    if reduction == "batchmean":
        return _C.div(_C.sum(loss, [], False), _C.scalar(input._shape[0], loss._dtype))
    return _reduce(loss, reduction)


from . import _functional_more  # noqa: E402 - it builds on the functions above
for _name in _functional_more.NAMES:
    globals()[_name] = getattr(_functional_more, _name)
del _name
