"""DataLoader worker processes (multiprocessing_context=): each process makes whole batches from
its own copy of the dataset, as PyTorch's workers do, so a dataset whose __getitem__ is Python
runs in parallel. A batch travels back as numpy arrays (pickled through a pipe) and becomes
tensors over those arrays in the loop's process (from_numpy, no further copy)."""
import multiprocessing
import numbers
import queue
import traceback

import numpy as np

from ... import _C

Tensor = _C.Tensor
# How often the loop checks that its workers are alive while it waits for a batch (seconds).
_POLL_S = 0.5


class WorkerInfo:
    """get_worker_info() in a worker process: its id, the number of workers, its seed and its
    copy of the dataset."""

    def __init__(self, id, num_workers, seed, dataset):  # noqa: A002 - PyTorch's name
        self.id, self.num_workers, self.seed, self.dataset = id, num_workers, seed, dataset

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed})"


_worker_info = None


def get_worker_info():
    """torch.utils.data.get_worker_info: this worker process's WorkerInfo, None in the loop's
    process (and in loader threads)."""
    return _worker_info


def numpy_collate(batch):
    """default_collate's structure with numpy arrays for tensors: what a worker sends back."""
    first = batch[0]
    if isinstance(first, Tensor):
        return np.stack([b.numpy() for b in batch])
    if isinstance(first, np.ndarray) or hasattr(first, "__array__") and not isinstance(
            first, (str, bytes)):
        return np.stack([np.asarray(b) for b in batch])
    if isinstance(first, bool):
        return np.array(batch, dtype=np.bool_)
    if isinstance(first, numbers.Integral):
        return np.array(batch, dtype=np.int64)
    if isinstance(first, numbers.Number):
        return np.array(batch, dtype=np.float32)  # PyTorch's default dtype for floats
    if isinstance(first, dict):
        return {k: numpy_collate([b[k] for b in batch]) for k in first}
    if isinstance(first, (tuple, list)):
        return type(first)(numpy_collate(list(f)) for f in zip(*batch))
    if isinstance(first, (str, bytes)):
        return list(batch)
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                    f"or lists; found {type(first).__name__}")


def _to_numpy(data):
    """Tensors in a batch as numpy arrays, for the pipe."""
    if isinstance(data, Tensor):
        return _Sent(data.numpy())
    if isinstance(data, dict):
        return {k: _to_numpy(v) for k, v in data.items()}
    if isinstance(data, (tuple, list)):
        return type(data)(_to_numpy(d) for d in data)
    return data


class _Sent:
    """A tensor that crossed the pipe as a numpy array (a plain array stays an array)."""

    def __init__(self, array):
        self.array = array


def from_worker(data, from_numpy, as_tensor_tree):
    """A batch from a worker back into tensors: the default collation's arrays and the tensors
    a collate_fn made, each over the received array."""
    if isinstance(data, _Sent):
        return from_numpy(np.ascontiguousarray(data.array))
    if as_tensor_tree and isinstance(data, np.ndarray) and data.dtype.kind in "biuf":
        return from_numpy(np.ascontiguousarray(data))
    if isinstance(data, dict):
        return {k: from_worker(v, from_numpy, as_tensor_tree) for k, v in data.items()}
    if isinstance(data, (tuple, list)):
        return type(data)(from_worker(d, from_numpy, as_tensor_tree) for d in data)
    return data


def _loop(dataset, collate, auto, worker_init_fn, worker_id, num_workers, seed, indices,
          results):
    """A worker process: batches for (batch number, indices) until None, each answered with
    (batch number, data) or (batch number, None, the error's type name, its traceback)."""
    global _worker_info
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    np.random.seed(seed % 2**32)
    try:
        if worker_init_fn is not None:
            worker_init_fn(worker_id)
    except Exception as e:  # every batch of this worker fails with it
        failure = (type(e).__name__, traceback.format_exc())
    else:
        failure = None
    while True:
        job = indices.get()
        if job is None:
            return
        number, idx = job
        if failure is not None:
            results.put((number, None) + failure)
            continue
        try:
            samples = [dataset[i] for i in idx] if auto else dataset[idx]
            data = collate(samples) if collate is not None else samples
            results.put((number, _to_numpy(data)))
        except Exception as e:
            results.put((number, None, type(e).__name__, traceback.format_exc()))


class ProcessBatches:
    """The batches of one epoch from worker processes, in the sampler's order: at most
    num_workers * prefetch_factor of them in flight, handed out round robin."""

    def __init__(self, loader, batches, context, collate, from_numpy, as_tensor_tree):
        self._ctx = context if not isinstance(context, str) else (
            multiprocessing.get_context(context))
        self._results = self._ctx.Queue()
        self._batches = batches
        self._from_numpy, self._as_tensor_tree = from_numpy, as_tensor_tree
        n = loader.num_workers
        self._queues = [self._ctx.Queue() for _ in range(n)]
        base_seed = int(np.random.default_rng([loader.seed, loader._epoch]).integers(2**62))
        self._workers = [
            self._ctx.Process(target=_loop, daemon=True, name=f"lt-data-worker-{w}",
                              args=(loader.dataset, collate, loader._auto, loader.worker_init_fn,
                                    w, n, base_seed + w, self._queues[w], self._results))
            for w in range(n)]
        for p in self._workers:
            p.start()
        self._sent = self._next = 0
        self._done = {}
        for _ in range(n * loader.prefetch_factor):
            self._send()

    def _send(self):
        for idx in self._batches:
            self._queues[self._sent % len(self._queues)].put((self._sent, idx))
            self._sent += 1
            return

    def __iter__(self):
        try:
            while self._next < self._sent:
                while self._next not in self._done:
                    self._receive()
                item = self._done.pop(self._next)
                self._next += 1
                self._send()
                if item[1] is None:
                    worker = (self._next - 1) % len(self._queues)
                    raise _WORKER_ERRORS.get(item[2], RuntimeError)(_Message(
                        f"Caught {item[2]} in DataLoader worker process {worker}.\n"
                        f"Original {item[3]}"))
                yield from_worker(item[1], self._from_numpy, self._as_tensor_tree)
        finally:
            self.close()

    def _receive(self):
        while True:
            try:
                item = self._results.get(timeout=_POLL_S)
            except queue.Empty:
                for p in self._workers:
                    if not p.is_alive() and p.exitcode != 0:
                        raise RuntimeError(f"DataLoader worker (pid {p.pid}) exited unexpectedly "
                                           f"with exit code {p.exitcode}")
                continue
            self._done[item[0]] = item
            return

    def close(self):
        for q, p in zip(self._queues, self._workers):
            if p.is_alive():
                q.put(None)
        for p in self._workers:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
                p.join()
        self._workers = []


class _Message(str):
    """An error's text that KeyError prints as it is (it prints its argument's repr), as
    PyTorch's re-raised worker errors do."""

    def __repr__(self):
        return self


# The worker's exception types raised in the loop's process, as PyTorch re-raises them.
_WORKER_ERRORS = {e.__name__: e for e in (ValueError, TypeError, KeyError, IndexError,
                                          RuntimeError, FileNotFoundError, OSError,
                                          ZeroDivisionError, AssertionError)}
