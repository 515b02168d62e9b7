#!/usr/bin/python3
"""Depthwise and pointwise convolutions (groups = channels, then 1x1: MobileNet's separable
block), forward and backward, lazytrain (eager and lazy, from Python) against PyTorch 1.13 eager
in its fastest configuration (torch_peer.py), in one run, at 1 and 2 threads.

  PYTHONPATH=build/python /usr/bin/python3 bench/depthwise_vs_torch.py [--seconds 2]

Each case: y = pointwise(relu(depthwise(x))), loss = y.square().mean(), backward into x and
both weights; ms per call, the median over --seconds of calls."""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# (batch, channels, size, stride): MobileNet-v1's separable blocks at batch 16.
SHAPES = [(16, 32, 56, 1), (16, 64, 56, 2), (16, 128, 28, 1), (16, 256, 14, 1)]


def timed(fn, seconds):
    for _ in range(2):
        fn()
    samples, start = [], time.perf_counter()
    while time.perf_counter() - start < seconds or len(samples) < 5:
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e3


def case(torch, n, c, size, stride, lazy):
    nn = torch.nn
    torch.manual_seed(0)
    dw = nn.Conv2d(c, c, 3, stride, 1, groups=c, bias=False)
    pw = nn.Conv2d(c, 2 * c, 1, bias=False)
    x = torch.randn(n, c, size, size, requires_grad=True)

    def step():
        y = pw(torch.relu(dw(x)))
        y.square().mean().backward()
        if lazy:
            torch.mark_step()
        x.grad = None
        dw.weight.grad = None
        pw.weight.grad = None

    return step


def child(backend, seconds, threads):
    if backend == "torch":
        import torch
        torch.set_num_threads(threads)
        for shape in SHAPES:
            print(f"{timed(case(torch, *shape, False), seconds):.4f}")
        return
    import lazytrain as lt
    for shape in SHAPES:
        eager = timed(case(lt, *shape, False), seconds)
        step = case(lt, *shape, True)  # made eagerly: the weights are data to the step
        with lt.lazy():  # each call traces a step and runs it at its mark_step
            lazy = timed(step, seconds)
        print(f"{eager:.4f} {lazy:.4f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child, args.seconds, args.threads)
    import torch_peer
    torch_env, note = torch_peer.torch_env()
    with open("/proc/cpuinfo") as f:
        cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
    print(f"{cpu}; PyTorch {note}")
    print(f"{'shape (N,C,HW,stride)':<24}{'threads':>8}{'torch ms':>10}{'lt eager':>10}"
          f"{'lt lazy':>9}{'torch/eager':>13}{'torch/lazy':>12}")
    for threads in (1, 2):
        me = [sys.executable, os.path.abspath(__file__), "--seconds", str(args.seconds),
              "--threads", str(threads), "--child"]
        t_out = subprocess.run(me + ["torch"], env=dict(torch_env, OMP_NUM_THREADS=str(threads)),
                               check=True, capture_output=True, text=True).stdout.split("\n")
        l_out = subprocess.run(me + ["lazytrain"],
                               env=dict(os.environ, LT_NUM_THREADS=str(threads)),
                               check=True, capture_output=True, text=True).stdout.split("\n")
        for shape, t, lt_line in zip(SHAPES, t_out, l_out):
            t = float(t)
            e, z = (float(v) for v in lt_line.split())
            print(f"{str(shape):<24}{threads:>8}{t:>10.3f}{e:>10.3f}{z:>9.3f}{t / e:>12.2f}x"
                  f"{t / z:>11.2f}x", flush=True)


if __name__ == "__main__":
    main()
