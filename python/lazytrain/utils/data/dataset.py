"""Datasets: anything with __getitem__ and __len__; TensorDataset indexes tensors along dim 0,
ConcatDataset chains datasets, random_split cuts one at random."""
import bisect
import math
import warnings

from ... import _C
from ..._convert import as_tensor


class Dataset:
    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Samples are the tensors' rows (a copy of array-likes is made once, here)."""

    def __init__(self, *tensors):
        tensors = tuple(as_tensor(t) for t in tensors)
        if any(t._shape[0] != tensors[0]._shape[0] for t in tensors):
            raise ValueError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0]._shape[0]

    def _batch(self, indices):
        """A whole batch by one index_select per tensor (the loader's fast path)."""
        idx = as_tensor(list(indices))
        return tuple(_C.index_select(t, 0, idx) for t in self.tensors)


class Subset(Dataset):
    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, index):
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """The datasets one after the other (torch.utils.data.ConcatDataset)."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes, total = [], 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        if idx >= len(self):
            raise IndexError(f"index {idx} is out of range for a ConcatDataset of {len(self)}")
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        first = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - first]


def random_split(dataset, lengths, generator=None):
    """torch.utils.data.random_split: non-overlapping Subsets of the given lengths (or fractions
    summing to 1: floors, the remainder handed out one by one from the first), over a
    permutation of the dataset: the C++ loaders' permutation for the seed (an int `generator`,
    or lt.initial_seed()), so a seed fixes the split (PyTorch's draws are its own)."""
    from .sampler import _seed_of
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(int(math.floor(n * frac)))
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, length in enumerate(counts):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              "empty dataset.")
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = list(_C.shuffled_indices(n, _seed_of(generator, "random_split"), 0))
    splits, offset = [], 0
    for length in lengths:
        splits.append(Subset(dataset, order[offset:offset + length]))
        offset += length
    return splits
