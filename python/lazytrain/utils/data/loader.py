"""DataLoader: batches of a dataset's samples, collated as PyTorch's default_collate does."""
import collections
import collections.abc
import concurrent.futures
import itertools
import multiprocessing
import numbers

import numpy as np

from ... import _C, _ops
from ..._convert import from_numpy, public_as_tensor, tensor
from ..._modes import eager
from . import worker
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
        return from_numpy(np.stack([np.asarray(b) for b in batch]))  # over the new array
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


def default_convert(data):
    """The collate_fn of batch_size=None, as PyTorch's: numpy arrays and numbers become tensors
    (arrays of strings stay), mappings and sequences are converted item by item (a tuple
    becomes a list), anything else is returned as it is."""
    if isinstance(data, Tensor):
        return data
    if type(data).__module__ == "numpy" and not isinstance(data, (np.str_, np.bytes_)):
        if isinstance(data, np.ndarray) and data.dtype.kind in "OSUa":
            return data
        return public_as_tensor(np.asarray(data))  # shares the array, as torch.as_tensor
    if isinstance(data, collections.abc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a namedtuple keeps its type
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


class DataLoader:
    """torch.utils.data.DataLoader's batch_size, shuffle, sampler, drop_last, collate_fn and
    num_workers; batch_size=None yields the samples one by one, through default_convert.
    Shuffling takes the permutation of lt::data::shuffled_indices(n, seed, epoch), the C++
    loaders' order, so a seed fixes every epoch's order, in Python and C++ alike.
    Batches are made eagerly: in lazy mode a batch is data the step's graph reads, not ops
    traced into it. With num_workers,
    that many threads (not processes) make the next num_workers * prefetch_factor batches while
    the loop steps (the compiled step and backward() release the GIL); batches come in the
    sampler's order whatever the threads' timing, and a worker's exception is raised where its
    batch would have been. With multiprocessing_context ("fork", "spawn", "forkserver" or a
    context) the workers are processes, as PyTorch's (worker.py)."""

    def __init__(self, dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None,
                 prefetch_factor=2, persistent_workers=False, seed=None, **unsupported):
        if unsupported:
            raise NotImplementedError(f"DataLoader: {sorted(unsupported)} are not supported yet")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None or
                                          drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        if batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if num_workers and (not isinstance(prefetch_factor, int) or prefetch_factor < 1):
            raise ValueError(f"prefetch_factor must be a positive integer, got "
                             f"{prefetch_factor!r}")
        self.dataset, self.batch_size, self.shuffle = dataset, batch_size, shuffle
        self.sampler, self.drop_last, self.batch_sampler = sampler, drop_last, batch_sampler
        self._auto = batch_size is not None or batch_sampler is not None
        self.collate_fn = collate_fn or (default_collate if self._auto else default_convert)
        self.num_workers, self.prefetch_factor = num_workers, prefetch_factor
        self.worker_init_fn = worker_init_fn
        if multiprocessing_context is not None and not num_workers:
            raise ValueError("multiprocessing_context can only be used with multi-process "
                             "loading (num_workers > 0), but got num_workers=0")
        if isinstance(multiprocessing_context, str) and (
                multiprocessing_context not in multiprocessing.get_all_start_methods()):
            raise ValueError(f"multiprocessing_context option should specify a valid start "
                             f"method in {multiprocessing.get_all_start_methods()!r}, but got "
                             f"multiprocessing_context={multiprocessing_context!r}")
        self.multiprocessing_context = multiprocessing_context
        self.seed = seed if seed is not None else generator if isinstance(generator, int) else 0
        self._epoch = 0

    def _order(self):
        if self.sampler is not None:
            return list(iter(self.sampler))
        n = len(self.dataset)
        if not self.shuffle:
            return list(range(n))
        return _C.shuffled_indices(n, self.seed % 2**64, self._epoch)

    def _batches(self):
        if self.batch_sampler is not None:
            yield from (list(b) for b in self.batch_sampler)
            return
        order = self._order()
        self._epoch += 1
        if not self._auto:
            yield from order
            return
        for start in range(0, len(order), self.batch_size):
            indices = order[start:start + self.batch_size]
            if len(indices) < self.batch_size and self.drop_last:
                return
            yield indices

    def _make(self, indices):
        # A TensorDataset, or a Subset of one, gathers a batch with one index_select a tensor.
        base = self.dataset
        if not self._auto:
            return self.collate_fn(base[indices])
        if self.collate_fn is default_collate:
            if isinstance(base, TensorDataset):
                return list(base._batch(indices))
            if isinstance(base, Subset) and isinstance(base.dataset, TensorDataset):
                return list(base.dataset._batch([base.indices[i] for i in indices]))
        return self.collate_fn([self.dataset[i] for i in indices])

    def _work(self, indices):
        """A batch made on a worker thread: eager and without autograd history whatever the
        stepping thread's mode (lt/data_worker.h)."""
        scope = _C.DataWorkerScope()
        scope.enter()
        try:
            return self._make(indices)
        finally:
            scope.exit()

    def __iter__(self):
        if not self.num_workers:
            for indices in self._batches():
                with eager():
                    batch = self._make(indices)
                yield batch
            return
        if self.multiprocessing_context is not None:
            collate = self.collate_fn
            if collate is default_collate:
                collate = worker.numpy_collate
            elif collate is default_convert:
                collate = None
            yield from worker.ProcessBatches(
                self, self._batches(), self.multiprocessing_context, collate, from_numpy,
                as_tensor_tree=collate is worker.numpy_collate or collate is None)
            return
        ids = itertools.count()

        def init():
            if self.worker_init_fn is not None:
                self.worker_init_fn(next(ids))

        pool = concurrent.futures.ThreadPoolExecutor(self.num_workers, "lt-data-worker", init)
        try:
            pending = collections.deque()
            batches = self._batches()
            for indices in itertools.islice(batches, self.num_workers * self.prefetch_factor):
                pending.append(pool.submit(self._work, indices))
            while pending:
                batch = pending.popleft().result()
                for indices in itertools.islice(batches, 1):
                    pending.append(pool.submit(self._work, indices))
                yield batch
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def __len__(self):
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if not self._auto:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
