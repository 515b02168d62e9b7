"""The structure of PyTorch's classic data-parallel image-classification training script
(argparse, init_process_group, a DistributedSampler, SyncBatchNorm, DistributedDataParallel,
reduce_value for the printed loss, SGD with momentum and a step schedule, --freeze-layers,
--weights for a non-strict load, rank 0's checkpoint per epoch) on Fashion-MNIST, with
--backend torch|lazytrain: the lazytrain path differs in its import and in the lines marked
"lazytrain". Loading the same initial weights (--init-seed), both backends give the same losses;
`lt-launch -n 2 -- python3 train_cifar_style.py` runs 2 ranks, which follow 1 rank: each reads
every second example of the same order, with --batch-size / 2 per rank.
"""
import argparse
import gzip
import os

import numpy as np


def read_idx(folder, name, limit):
    with gzip.open(os.path.join(folder, name + ".gz"), "rb") as f:
        data = f.read()
    rank = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * rank).reshape(dims)[:limit]


def make_model(nn, num_classes=10):
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(16, num_classes))


def reduce_value(dist, value, average=True):
    """The tutorial's helper: every rank's value summed (or averaged) over the ranks."""
    world = dist.get_world_size() if dist.is_initialized() else 1
    if world < 2:
        return value
    value = value.detach().clone()
    dist.all_reduce(value)
    return value / world if average else value


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--backend", choices=["torch", "lazytrain"], default="lazytrain")
    p.add_argument("--compiler-opt", action="store_true", help="lazytrain: lazy, compiled steps")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=0, help="steps per epoch (0: all)")
    p.add_argument("--batch-size", type=int, default=64, help="the global batch, over all ranks")
    p.add_argument("--sync-bn", action="store_true", help="SyncBatchNorm on several ranks")
    p.add_argument("--zero", type=int, choices=[0, 1, 2], default=0,
                   help="lazytrain: ZeRO stage of the optimizer state (ZeroRedundancyOptimizer)")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--train-limit", type=int, default=6000)
    p.add_argument("--init-seed", type=int, default=0, help="initial weights drawn with numpy")
    p.add_argument("--weights", default="", help="a checkpoint to start from (non-strict)")
    p.add_argument("--freeze-layers", action="store_true", help="train only the classifier")
    p.add_argument("--save-dir", default="", help="a checkpoint per epoch here")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    args = p.parse_args()
    if args.zero and args.backend == "torch":
        p.error("--zero: lazytrain's ZeroRedundancyOptimizer (PyTorch's takes no stage)")

    if args.backend == "torch":
        import torch
    else:
        import lazytrain as torch  # lazytrain: PyTorch's names
    nn, F, dist = torch.nn, torch.nn.functional, torch.distributed
    mark_step = getattr(torch, "mark_step", lambda: None)  # lazytrain: the step's graph runs
    dtype = getattr(torch, args.dtype)
    if args.backend == "lazytrain":
        dist.init_process_group()  # lazytrain: the job lt-launch started (one rank alone)
    elif "WORLD_SIZE" in os.environ:  # torchrun
        dist.init_process_group("gloo")
    rank = dist.get_rank() if dist.is_initialized() else 0
    world = dist.get_world_size() if dist.is_initialized() else 1
    if args.batch_size % world:
        raise SystemExit(f"--batch-size {args.batch_size} is not a multiple of {world} ranks")

    images = read_idx(args.data, "train-images-idx3-ubyte", args.train_limit)
    labels = read_idx(args.data, "train-labels-idx1-ubyte", args.train_limit)
    x = ((images.astype(np.float64) / 255 - 0.2860) / 0.3530)[:, None].astype(args.dtype)
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(x),
                                             torch.from_numpy(labels.astype(np.int64)))

    model = make_model(nn).to(dtype)
    if args.sync_bn and world > 1:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    rng = np.random.default_rng(args.init_seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            values = rng.standard_normal(tuple(param.shape)) * (0.3 if "weight" in name else 0.05)
            param.copy_(torch.from_numpy(values.astype(args.dtype)))
    if args.weights:
        state = torch.load(args.weights)
        missing, unexpected = model.load_state_dict(state["model"], strict=False)
        if rank == 0:
            print(f"loaded {args.weights}: missing {missing} unexpected {unexpected}")
    if args.freeze_layers:
        for name, param in model.named_parameters():
            param.requires_grad_(name.startswith("9."))  # the Linear classifier
    params = [p for p in model.parameters() if p.requires_grad]
    net = nn.parallel.DistributedDataParallel(model) if world > 1 else model
    if args.zero:
        from lazytrain.distributed.optim import ZeroRedundancyOptimizer  # lazytrain
        optimizer = ZeroRedundancyOptimizer(params, torch.optim.SGD, stage=args.zero, lr=args.lr,
                                            momentum=0.9, weight_decay=5e-4)
    else:
        optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)

    if args.backend == "lazytrain" and args.compiler_opt:
        torch.set_mode("lazy")  # lazytrain
    for epoch in range(args.epochs):
        model.train()
        order = np.random.default_rng(epoch).permutation(len(dataset)).tolist()
        # The epoch's order, the same under both backends; rank r reads order[r::world].
        epoch_data = torch.utils.data.Subset(dataset, order)
        sampler = torch.utils.data.DistributedSampler(epoch_data, num_replicas=world, rank=rank,
                                                      shuffle=False)
        loader = torch.utils.data.DataLoader(epoch_data, batch_size=args.batch_size // world,
                                             sampler=sampler, drop_last=True)
        for step, (images, labels) in enumerate(loader):
            if args.max_steps and step == args.max_steps:
                break
            optimizer.zero_grad()
            loss = F.cross_entropy(net(images), labels)
            loss.backward()
            optimizer.step()
            mark_step()
            # Every rank reads the value (lazy mode: a rank that left it pending would trace it
            # into its next step, which would then differ from the others'); rank 0 prints it.
            mean_loss = reduce_value(dist, loss).item()
            if rank == 0:
                print(f"epoch {epoch} step {step} loss {mean_loss:.12e}", flush=True)
        scheduler.step()
        if args.save_dir and args.zero:
            optimizer.consolidate_state_dict(to=0)  # every rank: the state is gathered
        if args.save_dir and rank == 0:
            os.makedirs(args.save_dir, exist_ok=True)
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "epoch": epoch}, os.path.join(args.save_dir, f"epoch{epoch}.pt"))


if __name__ == "__main__":
    main()
