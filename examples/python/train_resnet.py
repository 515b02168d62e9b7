"""Trains ResNet-20 (examples/python/models.py) on Fashion-MNIST images zero-padded to 32x32,
with random-crop (4 pixels) and horizontal-flip augmentation, SGD with momentum 0.9 and weight
decay 5e-4, a warmup + cosine schedule, and SyncBatchNorm on several ranks: the C++
fmnist_resnet's recipe and flags from Python. Eager, or lazy with --compiler-opt;
`lt-launch -n 2 -- python3 train_resnet.py` trains on 2 ranks."""
import argparse

import numpy as np

import lazytrain as torch
import models
import trainer

MEAN, STD = 0.2860, 0.3530  # the normalization of torch.utils.data.fashion_mnist
BLACK = (0 - MEAN) / STD


class PaddedImages(torch.utils.data.Dataset):
    """Fashion-MNIST normalized and padded to 32x32 with the normalized black; with augment,
    each epoch shifts every image by up to 4 pixels and flips half of them, drawn from
    (seed, epoch) for every example alike, so that ranks reading different examples draw what
    one process would."""

    def __init__(self, train, limit, augment, seed):
        data = torch.utils.data.fashion_mnist(train=train, limit=limit)
        images, labels = data.tensors
        x = images.numpy().reshape(-1, 1, 28, 28)
        self.images = np.pad(x, ((0, 0), (0, 0), (2, 2), (2, 2)), constant_values=BLACK)
        self.labels = labels.numpy()
        self.augment, self.seed = augment, seed
        self.set_epoch(0)

    def set_epoch(self, epoch):
        n = len(self.labels)
        rng = np.random.default_rng([self.seed, epoch, 1])
        self.shifts = rng.integers(-4, 5, size=(n, 2))
        self.flips = rng.random(n) < 0.5

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        image = self.images[i]
        if self.augment:
            dy, dx = self.shifts[i]
            padded = np.pad(image, ((0, 0), (4, 4), (4, 4)), constant_values=BLACK)
            image = padded[:, 4 + dy:36 + dy, 4 + dx:36 + dx]
            if self.flips[i]:
                image = image[:, :, ::-1]
        return np.ascontiguousarray(image), self.labels[i]


class ResNetTask(trainer.Task):
    name = "fmnist_resnet"

    def __init__(self, args):
        torch.manual_seed(args.seed)
        ResNet20, _ = models.models(torch)
        self.model = ResNet20()
        if torch.distributed.get_world_size() > 1 and args.sync_batchnorm:
            self.model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(self.model)
        self.train_data = PaddedImages(True, trainer.limit(args.train_limit), args.augment,
                                       args.seed)
        self.test_data = PaddedImages(False, trainer.limit(args.test_limit), False, args.seed)

    def make_optimizer(self, args):
        decay, no_decay = trainer.split_for_weight_decay(self.model)
        return torch.optim.SGD([{"params": decay, "weight_decay": args.weight_decay},
                                {"params": no_decay, "weight_decay": 0.0}],
                               lr=args.lr, momentum=args.momentum)

    def evaluate(self, model):
        loader = torch.utils.data.DataLoader(self.test_data, batch_size=500)
        hits = total = 0
        for images, labels in loader:
            chunk_hits = (model(images).argmax(dim=1) == labels).sum()
            torch.mark_step()  # lazy: the chunk's graph
            hits += chunk_hits.item()
            total += len(labels)
        return {"test_accuracy": hits / max(total, 1)}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    trainer.add_train_flags(p, epochs=10, batch_size=128, lr=0.1, weight_decay=5e-4,
                            warmup_steps=500, momentum=0.9)
    p.set_defaults(log_interval=100)
    p.add_argument("--augment", action=argparse.BooleanOptionalAction, default=True,
                   help="random 4-pixel shifts and horizontal flips (default on)")
    p.add_argument("--sync-batchnorm", action=argparse.BooleanOptionalAction, default=True,
                   help="with ranks, batch norms over the global batch (default on)")
    args = p.parse_args()
    torch.distributed.init_process_group()  # before the model: SyncBatchNorm on ranks
    trainer.train(ResNetTask(args), args)


if __name__ == "__main__":
    main()
