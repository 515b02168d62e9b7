"""Reading images: read_image(path) decodes a JPEG into float32 [3, H, W] in [0, 1]."""
from .. import _C


def read_image(path):
    """The JPEG at path as float32 [3, H, W] in [0, 1] (grayscale and CMYK become RGB); a file
    that is not a readable JPEG raises ValueError naming it. torchvision.io.read_image gives
    uint8 values, lazytrain has no uint8 tensors: this is read_image(path) / 255."""
    return _C.vision_read_image(str(path))
