"""Trains an MLP on Fashion-MNIST: eagerly, or with --compiler-opt as one compiled graph per step;
--save PATH writes the trained weights (examples/minimal/train_mlp.cpp, from Python). Against a
PyTorch script of the same loop, the lines marked "lazy" are the additions."""
import argparse
import math

import lazytrain as lt
import lazytrain.nn as nn
import lazytrain.nn.functional as F


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--compiler-opt", action="store_true", help="lazy mode: compiled steps")
    parser.add_argument("--max-steps", type=int, default=0, help="stop after this many (0: all)")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--save", default="", help="write the trained weights to this file")
    args = parser.parse_args()

    lt.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = lt.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    train = lt.utils.data.fashion_mnist(train=True)
    batches = lt.utils.data.DataLoader(train, batch_size=args.batch_size, shuffle=True,
                                       drop_last=True, seed=0)
    steps = len(batches) if not args.max_steps else min(args.max_steps, len(batches))
    schedule = lt.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(steps - 1, 1))

    lt.set_mode("lazy" if args.compiler_opt else "eager")  # lazy
    for step, (images, labels) in enumerate(batches):
        if step == steps:
            break
        opt.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        opt.step()
        schedule.step()
        lt.mark_step()  # lazy: forward, backward and update run here, compiled once
        if step % 100 == 0 or step == steps - 1:
            print(f"step {step:3d}  loss {loss.item():.4f}", flush=True)
    lt.set_mode("eager")

    test = lt.utils.data.fashion_mnist(train=False)
    images, labels = test.tensors
    with lt.no_grad():
        hits = (model(images).argmax(dim=1) == labels).float().mean()
    accuracy = hits.item()
    assert math.isfinite(accuracy)
    print(f"test accuracy {accuracy:.4f}")
    if args.save:
        lt.save(model.state_dict(), args.save)


if __name__ == "__main__":
    main()
