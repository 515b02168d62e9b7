#!/usr/bin/python3
"""PyTorch side of the eager benchmarks (bench/eager_kernels_bench.cpp, bench/step_bench.cpp): the
same MLP and CNN training steps and the same square f32 GEMMs, at 1 and 2 threads.

  MLP step  784-512-512-10, batch 128, linear+relu, cross_entropy, backward, SGD momentum 0.9
            (torch.optim.SGD, foreach off: the plain per-parameter loop), zero_grad(set_to_none).
  CNN step  conv32-pool-conv64-pool-fc128-fc10 on [64,1,28,28] (3x3 convs, padding 1, ReLU, 2x2
            max pools), cross_entropy, backward, SGD momentum 0.9.
  GEMM      torch.mm of two f32 [n,n] (n = 512, 1024): GFLOP/s = 2 n^3 / time.

Needs Debian's python3-torch (1.13) with an OpenBLAS (without one torch falls back to the slow
reference BLAS):  apt-get install -y python3-torch libopenblas0-openmp. Whichever OpenBLAS build
the libblas.so.3 alternative loads (lazytrain's setup installs the pthread one, which then wins),
its thread count is set to the run's thread count, so "1 thread" means one core for the GEMMs too.
Run:  /usr/bin/python3 bench/torch_compare.py [--seconds S]
Timing: the median of `reps` runs, each the mean over a batch of calls sized to ~0.1 s.
"""
import argparse
import statistics
import time

import torch


def timeit(fn, seconds):
    """Median seconds per call: warm up, size a batch to ~0.1 s, repeat until `seconds` pass."""
    for _ in range(3):
        fn()
    n, t = 1, 0.0
    while t < 0.1:
        n *= 2
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - t0
    per_batch = max(1, int(n * 0.1 / t))
    samples, start = [], time.perf_counter()
    while time.perf_counter() - start < seconds or len(samples) < 5:
        t0 = time.perf_counter()
        for _ in range(per_batch):
            fn()
        samples.append((time.perf_counter() - t0) / per_batch)
    return statistics.median(samples)


def mlp_step_fn():
    torch.manual_seed(3)
    model = torch.nn.Sequential(
        torch.nn.Linear(784, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=False)
    x = torch.randn(128, 784)
    y = torch.arange(128) * 7 % 10
    loss_fn = torch.nn.functional.cross_entropy

    def step():
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def cnn_step_fn():
    torch.manual_seed(3)
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=False)
    x = torch.randn(64, 1, 28, 28)
    y = torch.arange(64) * 7 % 10

    def step():
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def blas_thread_setter(blas_paths):
    """openblas_set_num_threads of the mapped OpenBLAS (torch.set_num_threads does not reach a
    pthread OpenBLAS), or a no-op."""
    import ctypes
    for path in blas_paths:
        try:
            return ctypes.CDLL(path).openblas_set_num_threads
        except (OSError, AttributeError):
            continue
    return lambda n: None


def gemm_fn(n):
    a, b = torch.randn(n, n), torch.randn(n, n)
    return lambda: torch.mm(a, b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=2.0, help="timing time per case")
    args = ap.parse_args()
    torch.mm(torch.ones(64, 64), torch.ones(64, 64))  # loads the BLAS
    with open("/proc/self/maps") as f:
        blas = sorted({l.split()[-1] for l in f if "blas" in l.split()[-1]})
    print(f"torch {torch.__version__}; BLAS libraries mapped: {', '.join(blas)}")
    set_blas_threads = blas_thread_setter(blas)
    results = {}
    for threads in (1, 2):
        torch.set_num_threads(threads)
        set_blas_threads(threads)
        ms = timeit(mlp_step_fn(), args.seconds) * 1e3
        results[("mlp", threads)] = ms
        print(f"mlp_step   threads={threads}  {ms:8.3f} ms/step")
        ms = timeit(cnn_step_fn(), args.seconds) * 1e3
        results[("cnn", threads)] = ms
        print(f"cnn_step   threads={threads}  {ms:8.3f} ms/step")
        for n in (512, 1024):
            s = timeit(gemm_fn(n), args.seconds)
            results[("gemm", n, threads)] = s
            print(f"gemm n={n:<5d} threads={threads}  {s * 1e3:8.3f} ms  "
                  f"{2 * n**3 / s / 1e9:7.1f} GFLOP/s")
    print(f"mlp_step 1/2-thread speedup: {results[('mlp', 1)] / results[('mlp', 2)]:.2f}x")
    print(f"cnn_step 1/2-thread speedup: {results[('cnn', 1)] / results[('cnn', 2)]:.2f}x")
    for n in (512, 1024):
        print(f"gemm n={n} 1/2-thread speedup: "
              f"{results[('gemm', n, 1)] / results[('gemm', n, 2)]:.2f}x")


if __name__ == "__main__":
    main()
