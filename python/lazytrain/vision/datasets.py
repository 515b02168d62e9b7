"""torchvision.datasets.ImageFolder over lt::vision::ImageFolder."""
import os

from .. import _C


class ImageFolder:
    """root/<class>/<image>: classes sorted by name and numbered from 0, images sorted by path
    within each class, as torchvision's. Example i is (transform(image), target_transform(class))
    where the image is float32 [3, H, W] in [0, 1], decoded in C++ without the GIL (so a
    DataLoader's worker threads decode in parallel). JPEG files (.jpg, .jpeg, any case) only."""

    def __init__(self, root, transform=None, target_transform=None, loader=None,
                 is_valid_file=None):
        if loader is not None or is_valid_file is not None:
            raise NotImplementedError("ImageFolder: loader and is_valid_file are not supported; "
                                      "images are JPEG files decoded by lt::vision")
        self.root = os.fspath(root)
        if not os.path.isdir(self.root):
            raise FileNotFoundError(f"[Errno 2] No such file or directory: '{self.root}'")
        self._folder = _C.ImageFolder(self.root)
        self.transform, self.target_transform = transform, target_transform
        self.classes = list(self._folder.classes())
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
        self.samples = [tuple(s) for s in self._folder.samples()]
        self.imgs = self.samples
        self.targets = [t for _, t in self.samples]

    def __len__(self):
        return len(self._folder)

    def __getitem__(self, index):
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of range for an ImageFolder of {n} images")
        image, target = self._folder.get(index % n)
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def __repr__(self):
        lines = [f"Dataset {type(self).__name__}", f"    Number of datapoints: {len(self)}",
                 f"    Root location: {self.root}"]
        if self.transform is not None:
            lines += ["    " + line for line in repr(self.transform).splitlines()]
        return "\n".join(lines)
