"""Fashion-MNIST from the IDX files of Debian's dataset-fashion-mnist package (the folder of the
setting LT_FASHION_MNIST_DIR), read by the C++ lt::data::load_fashion_mnist: the same values as
the C++ trainers'."""
from ... import _C
from .dataset import TensorDataset

MEAN, STD = 0.2860, 0.3530  # lt/data.h's kFashionMnistMean and kFashionMnistStd


def fashion_mnist(train=True, normalize=True, limit=0, root=None):
    """A TensorDataset of images [N, 784] (float32: x/255, then (x - mean)/std when normalize)
    and labels [N] (int64); limit keeps the first `limit` examples (0: all)."""
    images, labels = _C.load_fashion_mnist(bool(train), root or "", int(limit) if limit else -1,
                                           bool(normalize))
    return TensorDataset(images, labels)
