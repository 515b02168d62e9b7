#!/usr/bin/python3
"""PyTorch side of the eager benchmarks (bench/eager_kernels_bench.cpp, bench/step_bench.cpp): the
same four training steps and the same square f32 GEMMs, at 1 and 2 threads.

  MLP step  784-512-512-10, batch 128, linear+relu, cross_entropy, backward, SGD momentum 0.9
            (torch.optim.SGD, foreach off: the plain per-parameter loop), zero_grad(set_to_none).
  CNN step  conv32-pool-conv64-pool-fc128-fc10 on [64,1,28,28] (3x3 convs, padding 1, ReLU, 2x2
            max pools), cross_entropy, backward, SGD momentum 0.9.
  ResNet-20 step  CIFAR-style ResNet-20 (examples/resnet_model.h) on [32,1,32,32], BatchNorm in
            training mode, cross_entropy, backward, SGD momentum 0.9.
  GPT step  byte-level GPT (examples/gpt_model.h: 2 pre-LayerNorm blocks, d_model 128, 4 heads,
            MLP 4x with exact GELU, no dropout) on [16,64] byte ids, cross_entropy over the
            1024 positions, backward, AdamW (3e-4, weight decay 0.01 on every parameter).
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


def sgd(model):
    return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=False)


def mlp_step_fn():
    torch.manual_seed(3)
    model = torch.nn.Sequential(
        torch.nn.Linear(784, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 10))
    return training_step(model, sgd(model), torch.randn(128, 784), torch.arange(128) * 7 % 10)


def cnn_step_fn():
    torch.manual_seed(3)
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
    return training_step(model, sgd(model), torch.randn(64, 1, 28, 28), torch.arange(64) * 7 % 10)


class BasicBlock(torch.nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        nn = torch.nn
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, 0, bias=False),
                                          nn.BatchNorm2d(cout))

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return torch.relu(h + (self.shortcut(x) if self.shortcut is not None else x))


class ResNet20(torch.nn.Module):
    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.conv1 = nn.Conv2d(1, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        blocks, cin = [], 16
        for stage in range(3):
            for b in range(3):
                blocks.append(BasicBlock(cin, 16 << stage, 2 if stage > 0 and b == 0 else 1))
                cin = 16 << stage
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        h = self.blocks(torch.relu(self.bn1(self.conv1(x))))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(h, 1), 1))


class Block(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        nn = torch.nn
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def attn(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / (c // self.heads) ** 0.5)
        future = torch.ones(t, t, dtype=torch.bool).triu(1)
        att = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
        return self.proj((att @ v).transpose(1, 2).reshape(b, t, c))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Gpt(torch.nn.Module):
    def __init__(self, vocab=256, context=64, d=128, layers=2, heads=4):
        super().__init__()
        nn = torch.nn
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.blocks = nn.Sequential(*[Block(d, heads) for _ in range(layers)])
        self.ln_f, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
        return self.head(self.ln_f(self.blocks(x)))


def resnet_step_fn():
    torch.manual_seed(3)
    model = ResNet20().train()
    return training_step(model, sgd(model), torch.randn(32, 1, 32, 32), torch.arange(32) * 7 % 10)


def gpt_step_fn():
    torch.manual_seed(3)
    model = Gpt().train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01, foreach=False)
    return training_step(model, opt, torch.randint(0, 256, (16, 64)),
                         torch.randint(0, 256, (16 * 64,)), vocab=256)


STEPS = {"mlp": mlp_step_fn, "cnn": cnn_step_fn, "resnet": resnet_step_fn, "gpt": gpt_step_fn}


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
