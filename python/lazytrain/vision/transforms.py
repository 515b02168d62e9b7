"""torchvision.transforms for lazytrain's images (float32 [C, H, W] tensors in [0, 1]): the
ImageNet recipe's RandomResizedCrop, RandomHorizontalFlip, Resize, CenterCrop, ToTensor and
Normalize, the CIFAR recipe's RandomCrop with padding, Pad, and Compose. Resizing is PIL's
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


def _pad(img, left, top, right, bottom, fill):
    if not (left or top or right or bottom):
        return img
    return _C.pad(img, [(0, 0), (top, bottom), (left, right)], float(fill))


class Pad:
    """Constant padding: an int for every side, (left/right, top/bottom) or (left, top, right,
    bottom), as torchvision's."""

    def __init__(self, padding, fill=0, padding_mode="constant"):
        if padding_mode != "constant":
            raise NotImplementedError(f"Pad: padding_mode {padding_mode!r}: only 'constant' is "
                                      "supported")
        self.padding, self.fill = padding, fill
        self._ltrb = _padding(padding)

    def __call__(self, img):
        return _pad(_image(img, "Pad"), *self._ltrb, self.fill)

    def __repr__(self):
        return f"Pad(padding={self.padding}, fill={self.fill}, padding_mode=constant)"


class RandomCrop:
    """torchvision's RandomCrop: padding first (if given), then, with pad_if_needed, each side
    shorter than the crop padded by the difference on both ends, then a crop at a position drawn
    uniformly."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0,
                 padding_mode="constant"):
        if padding_mode != "constant":
            raise NotImplementedError(f"RandomCrop: padding_mode {padding_mode!r}: only "
                                      "'constant' is supported")
        self.size = _pair(size, "RandomCrop")
        self.padding, self.pad_if_needed, self.fill = padding, pad_if_needed, fill
        self._ltrb = _padding(padding) if padding is not None else (0, 0, 0, 0)

    def __call__(self, img):
        img = _pad(_image(img, "RandomCrop"), *self._ltrb, self.fill)
        th, tw = self.size
        if self.pad_if_needed and img.shape[2] < tw:
            img = _pad(img, tw - img.shape[2], 0, tw - img.shape[2], 0, self.fill)
        if self.pad_if_needed and img.shape[1] < th:
            img = _pad(img, 0, th - img.shape[1], 0, th - img.shape[1], self.fill)
        _, h, w = img.shape
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size "
                             f"{(h, w)}")
        draw = np.random.default_rng(list(_seeds()))
        top, left = int(draw.integers(0, h - th + 1)), int(draw.integers(0, w - tw + 1))
        return img[:, top:top + th, left:left + tw].contiguous()

    def __repr__(self):
        return f"RandomCrop(size={self.size}, padding={self.padding})"
