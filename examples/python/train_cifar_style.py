"""The structure of PyTorch's classic image-classification training script (argparse, a
DataLoader with a sampler, a Conv/BatchNorm/Linear model, SGD with momentum and a step schedule,
--freeze-layers, --weights for a non-strict load, a checkpoint per epoch) on Fashion-MNIST, with
--backend torch|lazytrain: the lazytrain path differs in its import and in the lines marked
"lazytrain". Loading the same initial weights (--init-seed), both backends give the same losses.
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


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--backend", choices=["torch", "lazytrain"], default="lazytrain")
    p.add_argument("--compiler-opt", action="store_true", help="lazytrain: lazy, compiled steps")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=0, help="steps per epoch (0: all)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--train-limit", type=int, default=6000)
    p.add_argument("--init-seed", type=int, default=0, help="initial weights drawn with numpy")
    p.add_argument("--weights", default="", help="a checkpoint to start from (non-strict)")
    p.add_argument("--freeze-layers", action="store_true", help="train only the classifier")
    p.add_argument("--save-dir", default="", help="a checkpoint per epoch here")
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    args = p.parse_args()

    if args.backend == "torch":
        import torch
    else:
        import lazytrain as torch  # lazytrain: PyTorch's names
    nn, F = torch.nn, torch.nn.functional
    mark_step = getattr(torch, "mark_step", lambda: None)  # lazytrain: the step's graph runs
    dtype = getattr(torch, args.dtype)

    images = read_idx(args.data, "train-images-idx3-ubyte", args.train_limit)
    labels = read_idx(args.data, "train-labels-idx1-ubyte", args.train_limit)
    x = ((images.astype(np.float64) / 255 - 0.2860) / 0.3530)[:, None].astype(args.dtype)
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(x),
                                             torch.from_numpy(labels.astype(np.int64)))

    model = make_model(nn).to(dtype)
    rng = np.random.default_rng(args.init_seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            values = rng.standard_normal(tuple(param.shape)) * (0.3 if "weight" in name else 0.05)
            param.copy_(torch.from_numpy(values.astype(args.dtype)))
    if args.weights:
        state = torch.load(args.weights)
        missing, unexpected = model.load_state_dict(state["model"], strict=False)
        print(f"loaded {args.weights}: missing {missing} unexpected {unexpected}")
    if args.freeze_layers:
        for name, param in model.named_parameters():
            param.requires_grad_(name.startswith("9."))  # the Linear classifier
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)

    if args.backend == "lazytrain" and args.compiler_opt:
        torch.set_mode("lazy")  # lazytrain
    for epoch in range(args.epochs):
        model.train()
        order = np.random.default_rng(epoch).permutation(len(dataset)).tolist()
        loader = torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, sampler=order,
                                             drop_last=True)
        for step, (images, labels) in enumerate(loader):
            if args.max_steps and step == args.max_steps:
                break
            optimizer.zero_grad()
            loss = F.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            mark_step()
            print(f"epoch {epoch} step {step} loss {loss.item():.12e}", flush=True)
        scheduler.step()
        if args.save_dir:
            os.makedirs(args.save_dir, exist_ok=True)
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "epoch": epoch}, os.path.join(args.save_dir, f"epoch{epoch}.pt"))


if __name__ == "__main__":
    main()
