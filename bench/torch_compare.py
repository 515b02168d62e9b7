#!/usr/bin/python3
"""PyTorch side of the eager benchmarks (bench/eager_kernels_bench.cpp, bench/step_bench.cpp): the
same four training steps and the same square f32 GEMMs, at 1 and 2 threads.

  Steps     the four of step_models.py (the model code lazytrain's Python benchmark runs too):
            the MLP, the small CNN, ResNet-20 and the byte-level GPT, with their optimizers.
  GEMM      torch.mm of two f32 [n,n] (n = 512, 1024): GFLOP/s = 2 n^3 / time.

Needs Debian's python3-torch (1.13) with an OpenBLAS (without one torch falls back to the slow
reference BLAS):  apt-get install -y python3-torch libopenblas0-openmp. Whichever OpenBLAS build
the libblas.so.3 alternative loads (lazytrain's setup installs the pthread one, which then wins),
its thread count is set to the run's thread count, so "1 thread" means one core for the GEMMs too.
The header line names the OpenBLAS kernels in use; step_vs_torch.py runs this with the fastest
ones and a malloc that keeps its memory (torch_peer.py).
With --bf16, forward and loss run under torch.autocast("cpu", dtype=torch.bfloat16), as
lt_bench_step's bf16 runs them under lt::AutocastGuard.
Run:  /usr/bin/python3 bench/torch_compare.py [--seconds S] [--bf16]
Timing: the median of `reps` runs, each the mean over a batch of calls sized to ~0.1 s.
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import step_models  # noqa: E402
import torch_peer  # noqa: E402


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


BF16 = False  # --bf16: forward and loss under CPU autocast


def training_step(model, opt, x, y, vocab=None):
    """One step: cross_entropy of model(x) (flattened to [-1, vocab] for a language model)
    against y, backward, optimizer step, zero_grad(set_to_none)."""
    def step():
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=BF16):
            logits = model(x)
            loss = torch.nn.functional.cross_entropy(
                logits if vocab is None else logits.view(-1, vocab), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def step_fn(name):
    model, opt, x, y, vocab = step_models.build(torch, name)
    return training_step(model, opt, x, y, vocab)


STEPS = {name: (lambda name=name: step_fn(name)) for name in step_models.NAMES + step_models.LARGE}


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
    ap.add_argument("--models", default="mlp,cnn,resnet,gpt", help="comma-separated steps to time")
    ap.add_argument("--no-gemm", action="store_true", help="skip the GEMM timings")
    ap.add_argument("--bf16", action="store_true",
                    help='steps with forward and loss under torch.autocast("cpu", bfloat16)')
    args = ap.parse_args()
    global BF16
    BF16 = args.bf16
    models = [m for m in args.models.split(",") if m]
    for m in models:
        if m not in STEPS:
            ap.error(f"--models: unknown model '{m}' (known: {', '.join(STEPS)})")
    torch.mm(torch.ones(64, 64), torch.ones(64, 64))  # loads the BLAS
    blas = torch_peer.mapped_blas()
    print(f"torch {torch.__version__}; BLAS libraries mapped: {', '.join(blas)}; "
          f"OpenBLAS kernels: {torch_peer.blas_core() or 'none'}; "
          f"{'bf16 autocast' if BF16 else 'f32'}")
    set_blas_threads = blas_thread_setter(blas)
    results = {}
    for threads in (1, 2):
        torch.set_num_threads(threads)
        set_blas_threads(threads)
        for name in models:
            ms = timeit(STEPS[name](), args.seconds) * 1e3
            results[(name, threads)] = ms
            print(f"{name + '_step':<12} threads={threads}  {ms:8.3f} ms/step", flush=True)
        for n in () if args.no_gemm else (512, 1024):
            s = timeit(gemm_fn(n), args.seconds)
            results[("gemm", n, threads)] = s
            print(f"gemm n={n:<5d} threads={threads}  {s * 1e3:8.3f} ms  "
                  f"{2 * n**3 / s / 1e9:7.1f} GFLOP/s")
    for name in models:
        print(f"{name}_step 1/2-thread speedup: "
              f"{results[(name, 1)] / results[(name, 2)]:.2f}x")
    for n in () if args.no_gemm else (512, 1024):
        print(f"gemm n={n} 1/2-thread speedup: "
              f"{results[('gemm', n, 1)] / results[('gemm', n, 2)]:.2f}x")


if __name__ == "__main__":
    main()
