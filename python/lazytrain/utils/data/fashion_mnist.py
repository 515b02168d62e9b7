"""Fashion-MNIST from the IDX files of Debian's dataset-fashion-mnist package (the folder of the
setting LT_FASHION_MNIST_DIR), as the C++ lt::data::load_fashion_mnist reads them."""
import gzip
import os

import numpy as np

from ... import _C
from ..._convert import from_array
from .dataset import TensorDataset

MEAN, STD = 0.2860, 0.3530  # lt/data.h's kFashionMnistMean and kFashionMnistStd


def _read_idx(path, limit):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if data[:2] != b"\0\0" or data[2] != 8:
        raise ValueError(f"{path}: not an IDX file of bytes")
    rank = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    values = np.frombuffer(data, np.uint8, offset=4 + 4 * rank).reshape(dims)
    return values[:limit] if limit else values


def _find(folder, name):
    for candidate in (name + ".gz", name):
        path = os.path.join(folder, candidate)
        if os.path.exists(path):
            return path
    raise ValueError(f"fashion_mnist: no {name}.gz or {name} in {folder} (install the "
                     "dataset-fashion-mnist package or point LT_FASHION_MNIST_DIR at a directory "
                     "holding the IDX files)")


def fashion_mnist(train=True, normalize=True, limit=0, root=None):
    """A TensorDataset of images [N, 784] (float32: x/255, then (x - mean)/std when normalize)
    and labels [N] (int64)."""
    folder = root or _C.option("LT_FASHION_MNIST_DIR")
    prefix = "train" if train else "t10k"
    images = _read_idx(_find(folder, prefix + "-images-idx3-ubyte"), limit)
    labels = _read_idx(_find(folder, prefix + "-labels-idx1-ubyte"), limit)
    scale = 1.0 / (255.0 * STD) if normalize else 1.0 / 255.0
    shift = -MEAN / STD if normalize else 0.0
    x = (images.reshape(len(images), -1) * scale + shift).astype(np.float32)
    return TensorDataset(from_array(x), from_array(labels.astype(np.int64)))
