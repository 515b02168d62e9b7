"""Datasets: anything with __getitem__ and __len__; TensorDataset indexes tensors along dim 0."""
from ... import _C
from ..._convert import as_tensor


class Dataset:
    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        raise NotImplementedError("ConcatDataset is not supported yet")


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
