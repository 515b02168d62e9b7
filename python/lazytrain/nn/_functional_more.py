"""More of torch.nn.functional, composed of lazytrain's ops with PyTorch's formulas (so their
gradients are those of the ops they are made of): 1-D pooling and transposed convolution through
their 2-D forms, pixel shuffling, the remaining activations, instance norm, channel dropout and
the remaining losses."""
import math

from .. import _C, _creation
from .._modes import no_grad
from . import functional as F


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _one(v):
    return v[0] if isinstance(v, (tuple, list)) else v


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    stride = kernel_size if stride is None or stride == [] else stride
    out = F.max_pool2d(input.unsqueeze(-2), (1, _one(kernel_size)), (1, _one(stride)),
                       (0, _one(padding)), (1, _one(dilation)), ceil_mode=ceil_mode,
                       return_indices=return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    stride = kernel_size if stride is None or stride == [] else stride
    return F.avg_pool2d(input.unsqueeze(-2), (1, _one(kernel_size)), (1, _one(stride)),
                        (0, _one(padding)), ceil_mode=ceil_mode,
                        count_include_pad=count_include_pad).squeeze(-2)


def adaptive_avg_pool1d(input, output_size):
    return F.adaptive_avg_pool2d(input.unsqueeze(-2), (1, _one(output_size))).squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    out = F.adaptive_max_pool2d(input.unsqueeze(-2), (1, _one(output_size)),
                                return_indices=return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return F.conv_transpose2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, (1, _one(stride)),
                              (0, _one(padding)), (0, _one(output_padding)), groups,
                              (1, _one(dilation))).squeeze(-2)


def pixel_shuffle(input, upscale_factor):
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    x = input.reshape(-1, c // (r * r), r, r, h, w).permute(0, 1, 4, 2, 5, 3)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor, but got {h}x{w} and {r}")
    x = input.reshape(-1, c, h // r, r, w // r, r).permute(0, 1, 3, 5, 2, 4)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def glu(input, dim=-1):
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} "
                           f"is size {input.shape[dim]}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def hardshrink(input, lambd=0.5):
    return input.where(input.abs() > lambd, 0.0)


def softshrink(input, lambd=0.5):
    return (input - lambd).where(input > lambd, (input + lambd).where(input < -lambd, 0.0))


def tanhshrink(input):
    return input - input.tanh()


def threshold(input, threshold, value, inplace=False):
    return input.where(input > threshold, float(value))


def celu(input, alpha=1.0, inplace=False):
    return input.clamp(min=0) + (alpha * (input / alpha).expm1()).clamp(max=0)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return _SELU_SCALE * (input.clamp(min=0) + (_SELU_ALPHA * input.expm1()).clamp(max=0))


def prelu(input, weight):
    if weight.numel() != 1 and input.dim() > 1:
        weight = weight.reshape(1, -1, *([1] * (input.dim() - 2)))
    return input.where(input >= 0, weight * input)


def softmin(input, dim=None, dtype=None):
    return F.softmax(-input, dim=dim, dtype=dtype)


def softsign(input):
    return input / (input.abs() + 1)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Each sample's channels normalized over their own positions (or by the running stats
    when not use_input_stats), which they update when given."""
    dims = tuple(range(2, input.dim()))
    shape = (1, -1) + (1,) * len(dims)
    if use_input_stats:
        mean = input.mean(dim=dims, keepdim=True)
        var = input.var(dim=dims, unbiased=False, keepdim=True)
        if running_mean is not None:
            n = math.prod(input.shape[2:])
            with no_grad():
                batch_mean = mean.detach().reshape(input.shape[0], -1).mean(0)
                batch_var = (var.detach() * (n / max(n - 1, 1))).reshape(input.shape[0],
                                                                         -1).mean(0)
                running_mean.copy_(running_mean * (1 - momentum) + batch_mean * momentum)
                running_var.copy_(running_var * (1 - momentum) + batch_var * momentum)
    else:
        mean, var = running_mean.reshape(*shape), running_var.reshape(*shape)
    out = (input - mean) / (var + eps).sqrt()
    if weight is not None:
        out = out * weight.reshape(*shape)
    if bias is not None:
        out = out + bias.reshape(*shape)
    return out


def _channel_dropout(input, p, training, what, dims):
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if input.dim() not in dims:
        raise RuntimeError(f"{what}: Expected {' or '.join(f'{d}D' for d in dims)} input, got "
                           f"{input.dim()}D")
    batched = input.dim() == dims[-1]
    mask_shape = (tuple(input.shape[:2]) if batched else tuple(input.shape[:1])) + (
        (1,) * (input.dim() - (2 if batched else 1)))
    keep = (_creation.rand(*mask_shape, dtype=input.dtype) >= p).to(input.dtype)
    return input * keep * (1 / (1 - p)) if p < 1 else input * 0


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, "dropout1d", (2, 3))


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout(input, p, training, "dropout2d", (3, 4))


def huber_loss(input, target, reduction="mean", delta=1.0):
    d = (input - target).abs()
    return _reduce((0.5 * d * d).where(d < delta, delta * (d - 0.5 * delta)), reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction="mean"):
    return _reduce((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, reduction="mean"):
    zeros = input * 0
    positive = input.where(target == 1, zeros)
    negative = (margin - input).clamp(min=0).where(target == -1, zeros)
    return _reduce(positive + negative, reduction)


def soft_margin_loss(input, target, reduction="mean"):
    return _reduce((1 + (-target * input).exp()).log(), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):
    eps = 1e-12  # PyTorch's, added to each squared magnitude
    dot = (input1 * input2).sum(-1)
    cos = dot / (((input1 * input1).sum(-1) + eps) * ((input2 * input2).sum(-1) + eps)).sqrt()
    zeros = cos * 0
    loss = (1 - cos).where(target == 1, zeros) + (cos - margin).clamp(min=0).where(
        target == -1, zeros)
    return _reduce(loss, reduction)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return (x1 - x2 + eps).norm(p=p, dim=-1, keepdim=keepdim)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        reduction="mean"):
    d_ap = pairwise_distance(anchor, positive, p, eps)
    d_an = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_an = _C.minimum(d_an, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_ap - d_an).clamp(min=0), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, reduction="mean"):
    loss = -(target * F.logsigmoid(input) + (1 - target) * F.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.mean(dim=-1), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, eps=1e-8, reduction="mean"):
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """PyTorch's: var clamped at eps without changing its gradient."""
    if var.dim() == input.dim() - 1 and var.shape == input.shape[:-1]:
        var = var.unsqueeze(-1)
    if (var < 0).any().item():
        raise ValueError("var has negative entry/entries")
    var = var + (var.detach().clamp(min=eps) - var.detach())
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def _two(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _blocks(kernel_size, dilation, padding, stride, h, w):
    """The window grid of im2col: (kernel, dilation, padding, stride) pairs and the count of
    windows along each side of an [h, w] plane."""
    k, d, p, s = _two(kernel_size), _two(dilation), _two(padding), _two(stride)
    counts = [(size + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1
              for i, size in enumerate((h, w))]
    if min(counts) < 1:
        raise RuntimeError(f"Given input with spatial size ({h}, {w}), kernel_size={k}, "
                           f"dilation={d}, padding={p}, calculated shape of the array of "
                           f"sliding blocks as ({counts[0]}, {counts[1]}), but its components "
                           "must be at least one.")
    return k, d, p, s, counts


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: [N, C, H, W] to [N, C * kh * kw, L], each column one window's values (C major,
    then the kernel's rows), as PyTorch's; strided slices of the padded input, so the gradient
    is fold's sum."""
    unbatched = input.dim() == 3
    if unbatched:
        input = input.unsqueeze(0)
    if input.dim() != 4:
        raise NotImplementedError("Input Error: Only 3D or 4D input Tensors are supported (got "
                                  f"{input.dim()}D)")
    n, c, h, w = input.shape
    k, d, p, s, (oh, ow) = _blocks(kernel_size, dilation, padding, stride, h, w)
    x = F.pad(input, [p[1], p[1], p[0], p[0]]) if p[0] or p[1] else input
    cols = [x[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
              j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
            for i in range(k[0]) for j in range(k[1])]
    out = _C.stack(cols, 2).reshape(n, c * k[0] * k[1], oh * ow)
    return out[0] if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im, unfold's adjoint: [N, C * kh * kw, L] columns summed into [N, C, H, W] where
    their windows overlap."""
    unbatched = input.dim() == 2
    if unbatched:
        input = input.unsqueeze(0)
    if input.dim() != 3:
        raise NotImplementedError("Input Error: Only unbatched (2D) or batched (3D) input "
                                  f"Tensors are supported (got {input.dim()}D)")
    h, w = _two(output_size)
    k, d, p, s, (oh, ow) = _blocks(kernel_size, dilation, padding, stride, h, w)
    n, ckk, length = input.shape
    if ckk % (k[0] * k[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={ckk} and kernel_size={k}")
    if length != oh * ow:
        raise RuntimeError(f"Given output_size={(h, w)}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, stride={s}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {oh} * {ow} = "
                           f"{oh * ow}, but got input.size(2)={length}.")
    c = ckk // (k[0] * k[1])
    blocks = input.reshape(n, c, k[0], k[1], oh, ow)
    out = _creation.zeros(n, c, h + 2 * p[0], w + 2 * p[1], dtype=input.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            out[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
                j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]] += blocks[:, :, i, j]
    out = out[:, :, p[0]:p[0] + h, p[1]:p[1] + w]
    return out[0] if unbatched else out


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None):
    """PyTorch 2's attention of query [..., L, E] over key [..., S, E] and value [..., S, Ev]:
    softmax(q k^T * scale + mask) v, scale 1/sqrt(E) by default; a bool mask keeps where True,
    a float one is added; is_causal masks the future."""
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * scale
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        length, source = query.shape[-2], key.shape[-2]
        attn_mask = (_creation.arange(length).unsqueeze(1) >=
                     _creation.arange(source).unsqueeze(0))
    if attn_mask is not None:
        if attn_mask.dtype.is_floating_point:
            scores = scores + attn_mask
        else:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
    weights = F.softmax(scores, dim=-1)
    if dropout_p > 0:
        weights = F.dropout(weights, dropout_p, True)
    return weights @ value


NAMES = ["max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d",
         "conv_transpose1d", "pixel_shuffle", "pixel_unshuffle", "glu", "hardshrink",
         "softshrink", "tanhshrink", "threshold", "celu", "selu", "prelu", "softmin", "softsign",
         "instance_norm", "dropout1d", "dropout2d", "huber_loss", "margin_ranking_loss",
         "hinge_embedding_loss", "soft_margin_loss", "cosine_embedding_loss",
         "pairwise_distance", "triplet_margin_loss", "multilabel_soft_margin_loss",
         "poisson_nll_loss", "gaussian_nll_loss", "unfold", "fold",
         "scaled_dot_product_attention"]
