"""torchvision's datasets and transforms for image training, over lt::vision (C++, libjpeg-turbo):
`from lazytrain.vision import datasets, transforms` where a script had
`from torchvision import datasets, transforms`. Images are float32 [C, H, W] tensors with values
in [0, 1] (what torchvision's ToTensor makes of a PIL image) from the file on; the transforms
take and give such tensors, with PIL's antialiased bilinear resampling."""
from . import datasets, io, transforms  # noqa: F401
