"""torchvision.transforms for lazytrain's images (float32 [C, H, W] tensors in [0, 1]): the
ImageNet recipe's RandomResizedCrop, RandomHorizontalFlip, Resize, CenterCrop, ToTensor and
Normalize, the CIFAR recipe's RandomCrop with padding, Pad, ColorJitter, Grayscale,
RandomGrayscale and Compose. Resizing is PIL's
antialiased bilinear (torchvision's result on a PIL image). The random ones draw from
lt::vision's generator seeded by lt.manual_seed's seed and
the number of random transform calls since it, as torchvision's draw from torch's generator in
call order: after the same manual_seed the same calls draw the same (with one loader thread a run
repeats exactly; with more, each image still draws anew, in the threads' order)."""
import enum
import itertools
import numbers

import numpy as np

from .. import _C, _creation
from .. import _dtype as D
from ..nn import functional as F
from .._convert import as_tensor
from .._dtype import float32

Tensor = _C.Tensor
_draws = {"seedings": None, "count": None}


class InterpolationMode(enum.Enum):
    NEAREST = "nearest"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _check_bilinear(interpolation, antialias):
    if interpolation not in (InterpolationMode.BILINEAR, "bilinear", 2):  # 2: PIL.Image.BILINEAR
        raise NotImplementedError(f"interpolation {interpolation}: lazytrain's transforms "
                                  "resize with antialiased bilinear interpolation only")
    if antialias is False:
        raise NotImplementedError("antialias=False: lazytrain's transforms always antialias "
                                  "(as torchvision does on PIL images)")


def _pair(size, what):
    if isinstance(size, numbers.Integral):
        return int(size), int(size)
    size = tuple(size)
    if len(size) == 1:
        return int(size[0]), int(size[0])
    if len(size) != 2:
        raise ValueError(f"{what}: size should be an int or a sequence of 1 or 2 ints, got "
                         f"{list(size)}")
    return int(size[0]), int(size[1])


def _image(img, what):
    if not isinstance(img, Tensor):
        raise TypeError(f"{what}: img should be a lazytrain Tensor [C, H, W] (ToTensor makes "
                        f"one), got {type(img).__name__}")
    if img.dim() != 3:
        raise ValueError(f"{what}: img should be [C, H, W], got shape {list(img.shape)}")
    return img


def _seeds():
    """(lt.initial_seed(), this call's number since the last lt.manual_seed, 0)."""
    if _draws["seedings"] != _creation._seedings:
        _draws.update(seedings=_creation._seedings, count=itertools.count())
    return (_creation.initial_seed(), next(_draws["count"]), 0)


class Compose:
    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        return "Compose(\n" + "".join(f"    {t}\n" for t in self.transforms) + ")"


class ToTensor:
    """An image tensor passes through (ImageFolder's are ToTensor's output already); a uint8
    [H, W, C] or [H, W] array (a PIL image through np.asarray) becomes float32 [C, H, W] / 255."""

    def __call__(self, pic):
        if isinstance(pic, Tensor):
            return pic
        a = np.asarray(pic)
        if a.dtype != np.uint8 or a.ndim not in (2, 3):
            raise TypeError(f"ToTensor: pic should be an image tensor or a uint8 [H, W(, C)] "
                            f"array, got {a.dtype} of shape {list(a.shape)}")
        if a.ndim == 2:
            a = a[:, :, None]
        return as_tensor(np.ascontiguousarray(a.transpose(2, 0, 1)).astype(np.float32) / 255)

    def __repr__(self):
        return "ToTensor()"


class Normalize:
    """(img - mean) / std per channel, in float32."""

    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = list(mean), list(std), inplace
        if any(s == 0 for s in self.std):
            raise ValueError("std evaluated to zero after conversion to torch.float32, leading "
                             "to division by zero.")

    def __call__(self, img):
        img = _image(img, "Normalize")
        c = img.shape[0]
        mean = self.mean * c if len(self.mean) == 1 else self.mean
        std = self.std * c if len(self.std) == 1 else self.std
        if len(mean) != c or len(std) != c:
            raise ValueError(f"Normalize: {len(self.mean)} means and {len(self.std)} stds for "
                             f"an image of {c} channels")
        if c == 3 and img.dtype == float32:
            return _C.vision_normalize(img, mean, std)
        m = as_tensor(np.asarray(mean, np.float32).reshape(c, 1, 1)).to(img.dtype)
        s = as_tensor(np.asarray(std, np.float32).reshape(c, 1, 1)).to(img.dtype)
        return (img - m) / s

    def __repr__(self):
        return f"Normalize(mean={self.mean}, std={self.std})"


class Resize:
    """An int size: the shorter side to size, the other in proportion (truncated, as
    torchvision); (h, w): exactly that."""

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=None):
        _check_bilinear(interpolation, antialias)
        if max_size is not None:
            raise NotImplementedError("Resize: max_size is not supported")
        self.size = size
        self._exact = not isinstance(size, numbers.Integral) and len(tuple(size)) == 2
        self._hw = _pair(size, "Resize")

    def __call__(self, img):
        img = _image(img, "Resize")
        if self._exact:
            return _C.vision_resize_to(img, *self._hw)
        return _C.vision_resize(img, self._hw[0])

    def __repr__(self):
        return f"Resize(size={self.size}, interpolation=bilinear, max_size=None, antialias=True)"


class CenterCrop:
    """The central (h, w), offsets rounded as torchvision's; an image smaller than the crop is
    padded with zeros first, as torchvision pads."""

    def __init__(self, size):
        self.size = _pair(size, "CenterCrop")

    def __call__(self, img):
        img = _image(img, "CenterCrop")
        h, w = self.size
        _, H, W = img.shape
        if h > H or w > W:
            top, left = max(h - H, 0), max(w - W, 0)
            img = _C.pad(img, [(0, 0), (top // 2, (top + 1) // 2), (left // 2, (left + 1) // 2)],
                         0.0)
            _, H, W = img.shape
        top = int(round((H - h) / 2.0))
        left = int(round((W - w) / 2.0))
        return img[:, top:top + h, left:left + w].contiguous()

    def __repr__(self):
        return f"CenterCrop(size={self.size})"


class RandomResizedCrop:
    """torchvision's box draw (an area fraction in scale, a log-uniform aspect ratio in ratio,
    10 tries, then the centre), resized to size."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=None):
        _check_bilinear(interpolation, antialias)
        self.size = _pair(size, "RandomResizedCrop")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise ValueError("Scale and ratio should be of kind (min, max)")
        self.scale, self.ratio = (float(scale[0]), float(scale[1])), (float(ratio[0]),
                                                                      float(ratio[1]))

    def __call__(self, img):
        img = _image(img, "RandomResizedCrop")
        return _C.vision_random_resized_crop(img, self.size[0], self.size[1], self.scale,
                                             self.ratio, _seeds())

    def __repr__(self):
        return (f"RandomResizedCrop(size={self.size}, scale={self.scale}, ratio={self.ratio}, "
                "interpolation=bilinear, antialias=True)")


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        return _C.vision_random_horizontal_flip(_image(img, "RandomHorizontalFlip"),
                                                float(self.p), _seeds())

    def __repr__(self):
        return f"RandomHorizontalFlip(p={self.p})"


def _padding(padding):
    """torchvision's padding forms as (left, top, right, bottom)."""
    if isinstance(padding, numbers.Integral):
        return (int(padding),) * 4
    p = tuple(int(v) for v in padding)
    if len(p) == 1:
        return p * 4
    if len(p) == 2:
        return (p[0], p[1], p[0], p[1])
    if len(p) == 4:
        return p
    raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                     f"{len(p)} element tuple")


_PADDING_MODES = {"constant": None, "edge": "replicate", "reflect": "reflect",
                  "symmetric": "symmetric"}


def _padding_mode(mode, what):
    if mode not in _PADDING_MODES:
        raise ValueError(f"{what}: padding_mode should be constant, edge, reflect or symmetric, "
                         f"got {mode!r}")
    return mode


def _pad(img, left, top, right, bottom, fill, mode="constant"):
    if not (left or top or right or bottom):
        return img
    if mode == "constant":
        return _C.pad(img, [(0, 0), (top, bottom), (left, right)], float(fill))
    # torchvision's edge, reflect and symmetric: each side's pixels gathered by index.
    shape = list(img.shape)
    for dim, before, after in ((2, left, right), (1, top, bottom)):
        if before or after:
            index = F._pad_index(shape[dim], before, after, _PADDING_MODES[mode], dim, shape)
            img = _C.index_select(img, dim, _C._from_numpy(np.asarray(index, np.int64),
                                                           D.int64._code))
    return img


class Pad:
    """torchvision's Pad: an int for every side, (left/right, top/bottom) or (left, top, right,
    bottom); padding_mode constant (with fill), edge, reflect or symmetric."""

    def __init__(self, padding, fill=0, padding_mode="constant"):
        self.padding, self.fill = padding, fill
        self.padding_mode = _padding_mode(padding_mode, "Pad")
        self._ltrb = _padding(padding)

    def __call__(self, img):
        return _pad(_image(img, "Pad"), *self._ltrb, self.fill, self.padding_mode)

    def __repr__(self):
        return (f"Pad(padding={self.padding}, fill={self.fill}, "
                f"padding_mode={self.padding_mode})")


class RandomCrop:
    """torchvision's RandomCrop: padding first (if given), then, with pad_if_needed, each side
    shorter than the crop padded by the difference on both ends, then a crop at a position drawn
    uniformly."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0,
                 padding_mode="constant"):
        self.padding_mode = _padding_mode(padding_mode, "RandomCrop")
        self.size = _pair(size, "RandomCrop")
        self.padding, self.pad_if_needed, self.fill = padding, pad_if_needed, fill
        self._ltrb = _padding(padding) if padding is not None else (0, 0, 0, 0)

    def __call__(self, img):
        mode = self.padding_mode
        img = _pad(_image(img, "RandomCrop"), *self._ltrb, self.fill, mode)
        th, tw = self.size
        if self.pad_if_needed and img.shape[2] < tw:
            img = _pad(img, tw - img.shape[2], 0, tw - img.shape[2], 0, self.fill, mode)
        if self.pad_if_needed and img.shape[1] < th:
            img = _pad(img, 0, th - img.shape[1], 0, th - img.shape[1], self.fill, mode)
        _, h, w = img.shape
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size "
                             f"{(h, w)}")
        draw = np.random.default_rng(list(_seeds()))
        top, left = int(draw.integers(0, h - th + 1)), int(draw.integers(0, w - tw + 1))
        return img[:, top:top + th, left:left + tw].contiguous()

    def __repr__(self):
        return f"RandomCrop(size={self.size}, padding={self.padding})"


def _np_image(img, what):
    a = _image(img, what).numpy()
    if a.dtype != np.float32:
        raise TypeError(f"{what}: img should be a float32 image, got {img.dtype}")
    return a


def _gray(a):
    """torchvision's luma, 0.2989 R + 0.587 G + 0.114 B, as [1, H, W] (one channel: itself)."""
    if a.shape[0] == 1:
        return a
    if a.shape[0] != 3:
        raise TypeError(f"Input image tensor permitted channel values are [1, 3], but found "
                        f"{a.shape[0]}")
    return (0.2989 * a[0] + 0.587 * a[1] + 0.114 * a[2]).astype(np.float32)[None]


def _blend(a, b, ratio):
    return np.clip(float(ratio) * a + (1.0 - float(ratio)) * b, 0.0, 1.0).astype(np.float32)


def _rgb_to_hsv(a):
    r, g, b = a
    maxc, minc = a.max(axis=0), a.min(axis=0)
    eqc = maxc == minc
    cr = maxc - minc
    ones = np.ones_like(maxc)
    s = cr / np.where(eqc, ones, maxc)
    div = np.where(eqc, ones, cr)
    rc, gc, bc = (maxc - r) / div, (maxc - g) / div, (maxc - b) / div
    h = ((maxc == r) * (bc - gc) + ((maxc == g) & (maxc != r)) * (2.0 + rc - bc) +
         ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)).astype(np.float32)
    h = np.fmod(h / 6.0 + 1.0, 1.0).astype(np.float32)
    return h, s, maxc


def _hsv_to_rgb(h, s, v):
    i = np.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.astype(np.int32) % 6
    p = np.clip(v * (1.0 - s), 0.0, 1.0)
    q = np.clip(v * (1.0 - s * f), 0.0, 1.0)
    t = np.clip(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    table = np.stack([np.stack(c) for c in ((v, q, p, p, t, v), (t, v, v, q, p, p),
                                            (p, p, t, v, v, q))])  # [3, 6, H, W]
    return np.take_along_axis(table, np.broadcast_to(i, (3, 1) + i.shape), axis=1)[:, 0]


def _adjust(a, kind, factor):
    """torchvision.transforms.functional's adjust_brightness / contrast / saturation / hue on
    a float32 [C, H, W] array in [0, 1], in float32 as torchvision computes them."""
    if kind == "brightness":
        return _blend(a, np.zeros_like(a), factor)
    if kind == "contrast":
        return _blend(a, _gray(a).mean(dtype=np.float32), factor)
    if a.shape[0] == 1:
        return a
    if kind == "saturation":
        return _blend(a, _gray(a), factor)
    h, s, v = _rgb_to_hsv(a)
    return _hsv_to_rgb((h + np.float32(factor)) % np.float32(1.0), s, v)


def _jitter_range(value, name, center=1.0, bound=(0.0, float("inf")), clip_first_on_zero=True):
    """torchvision's ColorJitter._check_input: None when the range is the identity."""
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError(f"If {name} is a single number, it must be non negative.")
        value = [center - float(value), center + float(value)]
        if clip_first_on_zero:
            value[0] = max(value[0], 0.0)
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}")
    else:
        raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
    return None if value[0] == value[1] == center else value


class ColorJitter:
    """torchvision's ColorJitter: brightness, contrast, saturation and hue, each by a factor
    drawn uniformly from its range, applied in a random order; each adjustment is
    torchvision's on tensors (contrast and saturation blend with the image's luma, hue shifts in
    HSV). The draws are lazytrain's (as the other random transforms')."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        self.brightness = _jitter_range(brightness, "brightness")
        self.contrast = _jitter_range(contrast, "contrast")
        self.saturation = _jitter_range(saturation, "saturation")
        self.hue = _jitter_range(hue, "hue", center=0.0, bound=(-0.5, 0.5),
                                 clip_first_on_zero=False)

    def __call__(self, img):
        a = _np_image(img, "ColorJitter")
        draw = np.random.default_rng(list(_seeds()))
        order = draw.permutation(4)
        ranges = (self.brightness, self.contrast, self.saturation, self.hue)
        factors = [None if r is None else float(draw.uniform(r[0], r[1])) for r in ranges]
        for i in order:
            if factors[i] is not None:
                a = _adjust(a, ("brightness", "contrast", "saturation", "hue")[i], factors[i])
        return as_tensor(np.ascontiguousarray(a))

    def __repr__(self):
        return (f"ColorJitter(brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue})")


class Grayscale:
    """torchvision's luma (0.2989 R + 0.587 G + 0.114 B), as 1 channel or repeated to 3."""

    def __init__(self, num_output_channels=1):
        if num_output_channels not in (1, 3):
            raise ValueError("num_output_channels should be either 1 or 3")
        self.num_output_channels = num_output_channels

    def __call__(self, img):
        g = _gray(_np_image(img, "Grayscale"))
        return as_tensor(np.ascontiguousarray(np.repeat(g, self.num_output_channels, axis=0)))

    def __repr__(self):
        return f"Grayscale(num_output_channels={self.num_output_channels})"


class RandomGrayscale:
    """Grayscale with probability p, keeping the image's number of channels."""

    def __init__(self, p=0.1):
        self.p = p

    def __call__(self, img):
        a = _np_image(img, "RandomGrayscale")
        if np.random.default_rng(list(_seeds())).random() >= self.p:
            return img
        return as_tensor(np.ascontiguousarray(np.repeat(_gray(a), a.shape[0], axis=0)))

    def __repr__(self):
        return f"RandomGrayscale(p={self.p})"


class GaussianBlur:
    """torchvision's GaussianBlur: a separable Gaussian of an odd kernel_size (one int, or
    (width, height)) and a sigma drawn uniformly from sigma = (min, max) per call (or fixed),
    over the image padded by reflection, each channel alone."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        self.kernel_size = _pair(kernel_size, "GaussianBlur")
        for k in self.kernel_size:
            if k <= 0 or k % 2 == 0:
                raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, (tuple, list)) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")
        self.sigma = sigma

    def __call__(self, img):
        img = _image(img, "GaussianBlur")
        s = float(np.random.default_rng(list(_seeds())).uniform(self.sigma[0], self.sigma[1]))
        kx, ky = self.kernel_size
        kernel = np.outer(_gaussian(ky, s), _gaussian(kx, s))
        c = img.shape[0]
        weight = as_tensor(np.ascontiguousarray(np.broadcast_to(kernel, (c, 1, ky, kx))))
        padded = F.pad(img.unsqueeze(0), [kx // 2, kx // 2, ky // 2, ky // 2], mode="reflect")
        return F.conv2d(padded, weight, groups=c)[0]

    def __repr__(self):
        return f"GaussianBlur(kernel_size={self.kernel_size}, sigma={self.sigma})"


def _gaussian(size, sigma):
    """torchvision's 1-D Gaussian kernel, in float32."""
    half = (size - 1) * 0.5
    x = np.linspace(-half, half, size, dtype=np.float32)
    pdf = np.exp(np.float32(-0.5) * (x / np.float32(sigma)) ** 2)
    return pdf / pdf.sum()
