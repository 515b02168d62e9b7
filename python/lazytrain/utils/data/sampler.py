"""Samplers: the order in which a DataLoader reads a dataset's indices."""
import math

import numpy as np

from ... import _C


class Sampler:
    """A base for index orders: __iter__ yields indices, __len__ counts them."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _seed_of(generator, what):
    from ..._creation import initial_seed
    if generator is not None and not isinstance(generator, int):
        raise TypeError(f"{what}: generator must be an int seed in lazytrain")
    return (generator if generator is not None else initial_seed()) % 2**64


class RandomSampler(Sampler):
    """A new permutation each epoch: lt::data::shuffled_indices(n, seed, epoch), the C++
    loaders' order (num_samples beyond n: further permutations), the seed an int `generator`
    or lt.initial_seed(); with replacement, num_samples uniform draws (numpy's generator seeded
    by the seed and the epoch)."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError("replacement should be a boolean value, but got replacement="
                            f"{replacement}")
        if num_samples is not None and (not isinstance(num_samples, int) or num_samples <= 0):
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        self.data_source, self.replacement, self._num_samples = data_source, replacement, \
            num_samples
        self._seed = _seed_of(generator, "RandomSampler")
        self._epoch = 0

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, want, epoch = len(self.data_source), self.num_samples, self._epoch
        self._epoch += 1
        if self.replacement:
            draw = np.random.default_rng([self._seed, epoch])
            return iter(int(i) for i in draw.integers(0, n, want))
        order = []
        round_ = 0
        while len(order) < want:  # a permutation per n samples, as PyTorch's
            order += list(_C.shuffled_indices(n, self._seed, epoch + round_ * 2**32))
            round_ += 1
        return iter(order[:want])

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a new random order each epoch."""

    def __init__(self, indices, generator=None):
        self.indices = list(indices)
        self._seed = _seed_of(generator, "SubsetRandomSampler")
        self._epoch = 0

    def __iter__(self):
        order = _C.shuffled_indices(len(self.indices), self._seed, self._epoch)
        self._epoch += 1
        return iter(self.indices[i] for i in order)

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """num_samples indices drawn with probability proportional to weights (with replacement, or
    without), numpy's generator seeded by the seed and the epoch."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or \
                num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got replacement="
                             f"{replacement}")
        w = np.asarray(weights.tolist() if hasattr(weights, "tolist") else weights, np.float64)
        if w.ndim != 1:
            raise ValueError("weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        if (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not replacement and num_samples > np.count_nonzero(w):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                               "replacement")
        self.weights, self.num_samples, self.replacement = w, num_samples, replacement
        self._seed = _seed_of(generator, "WeightedRandomSampler")
        self._epoch = 0

    def __iter__(self):
        draw = np.random.default_rng([self._seed, self._epoch])
        self._epoch += 1
        picked = draw.choice(len(self.weights), self.num_samples, replace=self.replacement,
                             p=self.weights / self.weights.sum())
        return iter(int(i) for i in picked)

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of batch_size indices of `sampler`, the last one shorter unless drop_last."""

    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError("drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class DistributedSampler(Sampler):
    """torch.utils.data.DistributedSampler: rank r of W reads every W-th index of one order
    shared by all ranks (the dataset padded by repeating its first indices to a multiple of W,
    or truncated with drop_last). With shuffle the order is lt::data::shuffled_indices(n, seed,
    epoch), the C++ DistributedSampler's: call set_epoch(e) before each epoch, as with PyTorch,
    or every epoch reads the same order."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        from ... import distributed as dist
        if num_replicas is None:
            num_replicas = dist.get_world_size()
        if rank is None:
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            indices = _C.shuffled_indices(n, self.seed % 2**64, self.epoch)
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        self.epoch = epoch
