"""DataLoader: batches of a dataset's samples, collated as PyTorch's default_collate does."""
import numbers

import numpy as np

from ... import _C, _ops
from ..._convert import as_tensor, tensor
from ..._modes import eager
from .dataset import Subset, TensorDataset

Tensor = _C.Tensor


def default_collate(batch):
    """Tensors and arrays are stacked along a new dim 0, numbers become a tensor, and tuples,
    lists and dicts are collated field by field."""
    first = batch[0]
    if isinstance(first, Tensor):
        return _ops.stack(batch, 0)
    if isinstance(first, np.ndarray) or hasattr(first, "__array__") and not isinstance(
            first, (str, bytes)):
        return as_tensor(np.stack([np.asarray(b) for b in batch]))
    if isinstance(first, (bool, numbers.Number)):
        return tensor(list(batch))
    if isinstance(first, dict):
        return {k: default_collate([b[k] for b in batch]) for k in first}
    if isinstance(first, (tuple, list)):
        return type(first)(default_collate(list(f)) for f in zip(*batch))
    if isinstance(first, (str, bytes)):
        return list(batch)
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                    f"or lists; found {type(first).__name__}")


class DataLoader:
    """torch.utils.data.DataLoader's batch_size, shuffle, drop_last and collate_fn. Shuffling
    draws a permutation per epoch from numpy's generator seeded with `seed` (and the epoch), so
    a seed fixes every epoch's order; num_workers other than 0 is not supported yet."""

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
                 generator=None, seed=None, **unsupported):
        if num_workers or batch_sampler is not None or unsupported:
            raise NotImplementedError("DataLoader: num_workers, batch_sampler and "
                                      f"{sorted(unsupported) or 'other options'} are not "
                                      "supported yet")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
        self.sampler, self.drop_last = sampler, drop_last
        self.collate_fn = collate_fn or default_collate
        self.seed = seed if seed is not None else generator if isinstance(generator, int) else 0
        self._epoch = 0

    def _order(self):
        if self.sampler is not None:
            return list(iter(self.sampler))
        n = len(self.dataset)
        if not self.shuffle:
            return list(range(n))
        rng = np.random.default_rng([self.seed, self._epoch])
        return rng.permutation(n).tolist()

    def __iter__(self):
        order = self._order()
        self._epoch += 1
        # A TensorDataset, or a Subset of one, gathers a batch with one index_select a tensor.
        base, mapping = self.dataset, None
        if isinstance(base, Subset) and isinstance(base.dataset, TensorDataset):
            base, mapping = base.dataset, base.indices
        fast = isinstance(base, TensorDataset) and self.collate_fn is default_collate
        for start in range(0, len(order), self.batch_size):
            indices = order[start:start + self.batch_size]
            if len(indices) < self.batch_size and self.drop_last:
                return
            # Batches are made eagerly, as the C++ loader's workers make them: in lazy mode a
            # batch is data the step graph reads, not ops traced into it (whose index constants
            # would differ from step to step and from rank to rank).
            with eager():
                if fast:
                    batch = list(base._batch([mapping[i] for i in indices] if mapping
                                             else indices))
                else:
                    batch = self.collate_fn([self.dataset[i] for i in indices])
            yield batch

    def __len__(self):
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
