"""Samplers: the order in which a DataLoader reads a dataset's indices."""
import math

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


class RandomSampler(Sampler):
    """A new permutation each epoch: lt::data::shuffled_indices(n, seed, epoch), the C++
    loaders' order, the seed an int `generator` or lt.initial_seed()."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if replacement or num_samples is not None:
            raise NotImplementedError("RandomSampler: replacement and num_samples are not "
                                      "supported")
        if generator is not None and not isinstance(generator, int):
            raise TypeError("RandomSampler: generator must be an int seed in lazytrain")
        self.data_source, self.generator = data_source, generator
        self._epoch = 0

    def __iter__(self):
        from ..._creation import initial_seed
        seed = self.generator if self.generator is not None else initial_seed()
        order = _C.shuffled_indices(len(self.data_source), seed % 2**64, self._epoch)
        self._epoch += 1
        return iter(order)

    def __len__(self):
        return len(self.data_source)


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
