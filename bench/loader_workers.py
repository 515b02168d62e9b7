#!/usr/bin/python3
"""lazytrain's DataLoader over a dataset whose __getitem__ is Python (a loop that holds the GIL,
as PIL-style augmentation does): seconds per epoch with no workers, with worker threads and with
worker processes (multiprocessing_context="fork"), and PyTorch 1.13's DataLoader (processes) on
the same dataset, in one run.

  PYTHONPATH=build/python /usr/bin/python3 bench/loader_workers.py [--workers 2] [--items 256]

Each figure is the faster of --rounds epochs of batch 16 (a worker process's start is in it)."""
import argparse
import os
import time

import numpy as np


class PythonHeavy:
    """Items that cost about `work` Python loop iterations each."""

    def __init__(self, n, work):
        self.n, self.work = n, work

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        acc = 0
        for k in range(self.work):
            acc = (acc + k * i) % 1000003
        return np.full(64, acc, np.float32), i


def epoch_seconds(make_loader, rounds):
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _batch in make_loader():
            pass
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--items", type=int, default=256)
    ap.add_argument("--work", type=int, default=20000, help="loop iterations per item")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    import lazytrain as lt
    import torch
    ds = PythonHeavy(args.items, args.work)
    L, T = lt.utils.data.DataLoader, torch.utils.data.DataLoader
    w = args.workers
    rows = [
        ("lazytrain, no workers", lambda: L(ds, batch_size=16)),
        (f"lazytrain, {w} threads", lambda: L(ds, batch_size=16, num_workers=w)),
        (f"lazytrain, {w} processes", lambda: L(ds, batch_size=16, num_workers=w,
                                                 multiprocessing_context="fork")),
        (f"PyTorch, {w} processes", lambda: T(ds, batch_size=16, num_workers=w)),
    ]
    print(f"{os.cpu_count()} logical CPUs; {args.items} items of {args.work} Python loop "
          f"iterations, batch 16")
    base = None
    for name, make in rows:
        s = epoch_seconds(make, args.rounds)
        base = base or s
        print(f"{name:28s} {s * 1e3:8.1f} ms/epoch  {base / s:5.2f}x no workers")


if __name__ == "__main__":
    main()
