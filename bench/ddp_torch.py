#!/usr/bin/python3
"""PyTorch DDP's scaling on this machine, the peer of bench/replicas_scaling.sh: the trainers'
MLP (784-128-10), CNN and ResNet-20 (bench/torch_compare.py's definitions) trained with SGD
momentum 0.9, 2 processes x 1 thread (DistributedDataParallel, gloo, each process pinned to its
own core) against 1 process x 1 thread, at the same per-process batch (64, 64, 128).

Needs Debian's python3-torch and libopenblas0-openmp; runs PyTorch on the OpenMP OpenBLAS with
its fastest kernels for this CPU and with a malloc that keeps its memory (torch_peer.py), and
checks the OpenMP OpenBLAS is the one mapped.
Run:  /usr/bin/python3 bench/ddp_torch.py [--seconds S] [--models mlp,cnn,resnet]
Prints one line per model: 1-process ms/step, 2-process ms/step (the slower rank's median) and
the throughput ratio 2 x ms1 / ms2.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_peer  # noqa: E402

BATCH = {"mlp": 64, "cnn": 64, "resnet": 128}


def model_for(name):
    import torch
    import torch_compare as tc
    nn = torch.nn
    torch.manual_seed(3)
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    if name == "cnn":
        return nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
    return tc.ResNet20().train()


def step_times(name, model, seconds):
    import torch
    side = 32 if name == "resnet" else 28
    x = torch.randn(BATCH[name], 1, side, side)
    y = torch.arange(BATCH[name]) * 7 % 10
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=False)

    def step():
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    times, start = [], time.perf_counter()
    while time.perf_counter() - start < seconds or len(times) < 10:
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def worker(rank, world, name, seconds, port, out):
    import torch
    import torch.distributed as dist
    os.sched_setaffinity(0, {rank})
    torch.set_num_threads(1)
    model = model_for(name)
    if world > 1:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=world)
        model = torch.nn.parallel.DistributedDataParallel(model)
    ms = step_times(name, model, seconds)
    if world > 1:
        t = torch.tensor([ms])
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        ms = t.item()
        dist.destroy_process_group()
    if rank == 0:
        out.put(ms)


def measure(name, world, seconds, port):
    return torch_peer.run_processes(worker, world, (name, seconds, port),
                                    f"ddp_torch: the {world}-process {name} run")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--models", default="mlp,cnn,resnet")
    ap.add_argument("--reps", type=int, default=3, help="alternating runs; the fastest is kept")
    args = ap.parse_args()
    note = torch_peer.exec_in_torch_env()
    import torch  # noqa: F401  (maps the BLAS)
    blas = torch_peer.mapped_blas()
    print("BLAS libraries mapped:", " ".join(blas))
    print(note)
    if not any("openblas-openmp" in b for b in blas):
        sys.exit("ddp_torch: PyTorch did not map the OpenMP OpenBLAS")
    print("| model | per-process batch | 1 process ms/step | 2 processes ms/step | throughput ratio |")
    print("|---|---|---|---|---|")
    # A fresh port for every job: reusing one while the last job's socket lingers made gloo
    # fail with "Connection reset by peer" and the job hang.
    ports = iter(range(20000 + os.getpid() % 20000, 65000))
    for name in args.models.split(","):
        best1 = best2 = float("inf")
        for _ in range(args.reps):
            best1 = min(best1, measure(name, 1, args.seconds, next(ports)))
            best2 = min(best2, measure(name, 2, args.seconds, next(ports)))
        print(f"| {name} | {BATCH[name]} | {best1:.3f} | {best2:.3f} | {2 * best1 / best2:.2f}x |",
              flush=True)


if __name__ == "__main__":
    main()
