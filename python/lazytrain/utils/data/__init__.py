"""torch.utils.data: Dataset, TensorDataset, Subset, ConcatDataset, DataLoader (batching, seeded
shuffling, drop_last, a batch_sampler, worker threads or processes); the samplers,
DistributedSampler for ranks."""
from .dataset import ConcatDataset, Dataset, Subset, TensorDataset, random_split  # noqa: F401
from .fashion_mnist import fashion_mnist  # noqa: F401
from .loader import DataLoader, default_collate, default_convert  # noqa: F401
from .worker import get_worker_info  # noqa: F401
from .sampler import (BatchSampler, DistributedSampler, RandomSampler, Sampler,  # noqa: F401
                      SequentialSampler, SubsetRandomSampler, WeightedRandomSampler)
