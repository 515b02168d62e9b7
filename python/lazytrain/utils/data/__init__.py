"""torch.utils.data: Dataset, TensorDataset, DataLoader (batching, seeded shuffling,
drop_last), in the loop's thread; DistributedSampler for ranks."""
from .dataset import Dataset, Subset, TensorDataset  # noqa: F401
from .fashion_mnist import fashion_mnist  # noqa: F401
from .loader import DataLoader, default_collate  # noqa: F401
from .sampler import DistributedSampler, Sampler, SequentialSampler  # noqa: F401
