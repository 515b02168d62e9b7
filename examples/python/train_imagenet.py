"""Trains torchvision's ResNet-18/34/50/101 (--arch; examples/python/models.py, torchvision's
module names and initialization) on a mock ImageNet-1k (--data mock) or on JPEG folders in
ImageFolder's layout (--data DIR: DIR/train/<class>/*.jpg and DIR/val/<class>/*.jpg, read by
lazytrain.vision with torchvision's training transforms, RandomResizedCrop and a horizontal flip,
and its validation ones, a resize to 256/224 of the crop and a center crop): the workload of the
migration guides' ImageNet script, with its flags where the shared trainer has them
(--compiler-opt, --amp bf16, --batch-size over all ranks, --max-steps, --log-interval,
--save-dir/--resume, --optimizer) and a log line per interval with samples/s, ms/step, the wait
for data and peak memory. Runs under `lt-launch -n N` on N ranks (SyncBatchNorm with
--sync-batchnorm).

The mock dataset draws each image from (seed, index) alone, as normalized pixels would look
(mean 0, std 1 per channel), and its label from the same draw, so that any loader, worker count
or rank split reads the same examples; --num-workers threads make the next batches while the
step runs. Top-1 and top-5 accuracy on a validation split of the same kind at the end."""
import argparse

import numpy as np

import lazytrain as torch
import models
import trainer
from lazytrain.vision import datasets, transforms

F = torch.nn.functional


class MockImageNet(torch.utils.data.Dataset):
    """n images [3, size, size] float32 and labels in [0, classes), from (seed, split, index)."""

    def __init__(self, n, size, classes, seed, split):
        self.n, self.size, self.classes, self.seed, self.split = n, size, classes, seed, split

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(f"MockImageNet: index {i} out of range for {self.n} images")
        rng = np.random.default_rng([self.seed, self.split, i])
        label = int(rng.integers(self.classes))
        image = rng.standard_normal((3, self.size, self.size), dtype=np.float32)
        image[label % 3] += 0.5  # a little signal, so that training can lower the loss
        return image, label


IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def spread(dataset, limit):
    """limit examples spread evenly over the dataset (an ImageFolder is sorted by class, so its
    first examples would all be one class); all of it for a limit of 0."""
    n = len(dataset)
    if not limit or limit >= n:
        return dataset
    return torch.utils.data.Subset(dataset, [i * n // limit for i in range(limit)])


def image_folders(args):
    """DIR/train with the training transforms, DIR/val with the validation ones."""
    size = args.image_size
    normalize = transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD)
    train = datasets.ImageFolder(f"{args.data}/train", transforms.Compose([
        transforms.RandomResizedCrop(size), transforms.RandomHorizontalFlip(), normalize]))
    val = datasets.ImageFolder(f"{args.data}/val", transforms.Compose([
        transforms.Resize(size * 256 // 224), transforms.CenterCrop(size), normalize]))
    if len(train.classes) > args.num_classes:
        raise SystemExit(f"--data {args.data}: {len(train.classes)} classes in train/, more "
                         f"than --num-classes {args.num_classes}")
    if val.classes != train.classes:
        raise SystemExit(f"--data {args.data}: val/ and train/ hold different class folders")
    return (spread(train, trainer.limit(args.train_limit)),
            spread(val, trainer.limit(args.test_limit)))


class ImageNetTask(trainer.Task):
    def __init__(self, args):
        self.name = f"imagenet_{args.arch}"
        torch.manual_seed(args.seed)
        self.model = models.resnet(torch, args.arch, args.num_classes)
        if torch.distributed.get_world_size() > 1 and args.sync_batchnorm:
            self.model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(self.model)
        if args.data == "mock":
            self.train_data = MockImageNet(trainer.limit(args.train_limit) or 1281167,
                                           args.image_size, args.num_classes, args.seed, 0)
            self.test_data = MockImageNet(trainer.limit(args.test_limit) or 50000,
                                          args.image_size, args.num_classes, args.seed, 1)
        else:
            self.train_data, self.test_data = image_folders(args)
        self.eval_batch = max(args.batch_size // torch.distributed.get_world_size(), 1)
        self.num_workers = args.num_workers

    def make_optimizer(self, args):
        decay, no_decay = trainer.split_for_weight_decay(self.model)
        groups = [{"params": decay, "weight_decay": args.weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        if args.optimizer == "adamw":
            return torch.optim.AdamW(groups, lr=args.lr)
        return torch.optim.SGD(groups, lr=args.lr, momentum=args.momentum)

    def evaluate(self, model):
        loader = torch.utils.data.DataLoader(self.test_data, batch_size=self.eval_batch,
                                             num_workers=self.num_workers)
        top1 = top5 = total = 0
        for images, labels in loader:
            logits = model(images)
            best = logits.topk(min(5, logits.shape[1]), dim=1)[1]  # top-5 of 5 classes or more
            hits1 = (best[:, 0] == labels).sum()
            hits5 = (best == labels.unsqueeze(1)).any(dim=1).sum()
            torch.mark_step()  # lazy: the chunk's one graph
            top1 += hits1.item()
            top5 += hits5.item()
            total += len(labels)
        return {"top1": top1 / max(total, 1), "top5": top5 / max(total, 1)}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    trainer.add_train_flags(p, epochs=1, batch_size=32, lr=0.1, weight_decay=1e-4,
                            warmup_steps=0, momentum=0.9)
    p.set_defaults(log_interval=10, test_limit=256)
    p.add_argument("--arch", choices=sorted(models.RESNET_LAYERS), default="resnet50")
    p.add_argument("--data", default="mock",
                   help="mock (generated per index), or a folder holding train/ and val/ in "
                        "ImageFolder's layout (<class>/<image>.jpg)")
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--num-classes", type=int, default=1000)
    p.add_argument("--optimizer", choices=["sgd", "adamw"], default="sgd")
    p.add_argument("--sync-batchnorm", action=argparse.BooleanOptionalAction, default=True,
                   help="with ranks, batch norms over the global batch (default on)")
    args = p.parse_args()
    if args.image_size < 32:
        p.error(f"--image-size {args.image_size}: ResNets need at least 32 pixels")
    torch.distributed.init_process_group()  # before the model: SyncBatchNorm on ranks
    trainer.train(ImageNetTask(args), args)


if __name__ == "__main__":
    main()
