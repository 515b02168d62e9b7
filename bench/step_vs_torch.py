#!/usr/bin/python3
"""The four training steps, lazytrain (bench/step_bench.cpp) against PyTorch (bench/torch_compare.py)
in one run, as one table per thread count with the ratios and the targets.

  /usr/bin/python3 bench/step_vs_torch.py [--build build] [--steps 30] [--seconds 3] [--bf16]

With --bf16 both sides run forward and loss under bf16 autocast (lt::AutocastGuard and
torch.autocast("cpu", dtype=torch.bfloat16)), and lazytrain's f32 steps run too, for the bf16
speedup over its own f32.

PyTorch runs in its fastest configuration here: with the OpenMP build of OpenBLAS
(libopenblas0-openmp), put first by LD_LIBRARY_PATH, its AVX-512 kernels where the CPU has
them, and a malloc that keeps its memory between steps (torch_peer.py); the pthread build, which
lazytrain's setup installs as the libblas.so.3 alternative, oversubscribes inside torch's OpenMP
threads.
torch_compare.py prints which BLAS library it mapped, and this script refuses to compare when it
is not the OpenMP one. The order is PyTorch, lazytrain twice, PyTorch again, and each side's
figure is the faster of its two runs: a neighbour's burst in one run (the hosts here are shared
VMs) does not decide a ratio, and a change of machine speed between the runs cannot favour
lazytrain, whose runs lie between PyTorch's.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_peer  # noqa: E402

MODELS = ["mlp", "cnn", "resnet", "gpt"]
# Lazy at least this many times faster than PyTorch eager, at 1 and at 2 threads.
TARGETS = {"mlp": 1.15, "cnn": 1.5, "resnet": 1.3, "gpt": 1.3}
# bf16: lazy bf16 against PyTorch's bf16 autocast, and against lazytrain's own lazy f32.
TARGETS_BF16 = {"mlp": 1.1, "cnn": 1.3, "resnet": 1.3, "gpt": 1.3}
TARGETS_BF16_OVER_F32 = {"mlp": 1.5, "cnn": 1.4, "resnet": 1.4, "gpt": 1.4}


def run(cmd, env=None):
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return out


def torch_side(seconds, bf16, env, models=None):
    out = run([sys.executable, os.path.join(os.path.dirname(__file__), "torch_compare.py"),
               "--no-gemm", "--seconds", str(seconds)] + (["--bf16"] if bf16 else []) +
              (["--models", ",".join(models)] if models else []), env)
    blas = re.search(r"BLAS libraries mapped: (.*)", out).group(1)
    if "openblas-openmp" not in blas or "openblas-pthread" in blas:
        sys.exit(f"step_vs_torch: PyTorch mapped {blas}, not the OpenMP OpenBLAS in "
                 f"{torch_peer.OPENMP_BLAS} (apt-get install libopenblas0-openmp)")
    ms = {(m, int(t)): float(v) for m, t, v in
          re.findall(r"^(\w+)_step\s+threads=(\d)\s+([\d.]+) ms/step", out, re.M)}
    return blas, out.splitlines()[0], ms


def lazytrain_side(build, steps, precision):
    out = run([os.path.join(build, "bench", "lt_bench_step"), str(steps), "all", "both",
               precision])
    rows, model = {}, None
    for line in out.splitlines():
        head = line.split(" ", 1)[0].split("-", 1)[0]  # "resnet-20 1x32x32 b32" -> resnet
        if head in MODELS:
            model = head
            continue
        f = line.split()
        if model and len(f) == 11 and f[0] in ("1", "2"):
            # threads eager lazy speedup cold "ms" warm "ms" eagerMB lazyMB trace
            rows[(model, int(f[0]))] = {
                "eager": float(f[1]), "lazy": float(f[2]), "cold_ms": float(f[4]),
                "warm_ms": float(f[6]), "eager_mb": float(f[8]), "lazy_mb": float(f[9]),
                "trace_us": float(f[10])}
    if len(rows) != 2 * len(MODELS):
        sys.exit(f"step_vs_torch: could not read lt_bench_step's table:\n{out}")
    return out.splitlines()[0], rows, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="lazytrain build directory")
    ap.add_argument("--steps", type=int, default=30, help="timed steps per lazytrain run")
    ap.add_argument("--seconds", type=float, default=3.0, help="PyTorch timing time per case")
    ap.add_argument("--bf16", action="store_true", help="compare bf16 autocast steps")
    args = ap.parse_args()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    torch_env, blas_note = torch_peer.torch_env()
    blas, torch_line, t1 = torch_side(args.seconds, args.bf16, torch_env)
    precision = "bf16" if args.bf16 else "f32"
    lt_runs = [lazytrain_side(args.build, args.steps, precision) for _ in range(2)]
    lt_line, lt_out = lt_runs[0][0], lt_runs[0][2] + "\n" + lt_runs[1][2]
    lt = {k: min((run[1][k] for run in lt_runs), key=lambda r: r["lazy"]) for k in lt_runs[0][1]}
    lt_f32 = None
    if args.bf16:
        f32_runs = [lazytrain_side(args.build, args.steps, "f32")[1] for _ in range(2)]
        lt_f32 = {k: min((run[k] for run in f32_runs), key=lambda r: r["lazy"])
                  for k in f32_runs[0]}
    _, _, t2 = torch_side(args.seconds, args.bf16, torch_env)
    targets = TARGETS_BF16 if args.bf16 else TARGETS
    torch_ms = {k: min(v, t2.get(k, v)) for k, v in t1.items()}
    print(lt_out)
    print(f"CPU: {cpu}, {os.cpu_count()} CPUs")
    print(f"{torch_line}")
    print(blas_note)
    print(f"{lt_line}")
    print("PyTorch: the faster of two runs (before and after lazytrain's); "
          f"PyTorch runs: {', '.join(f'{k[0]}/{k[1]}t {t1[k]:.2f}|{t2.get(k, 0):.2f}' for k in t1)}")
    print("lazytrain: the run with the faster lazy step of two (both tables above); lazy runs: "
          + ", ".join(f"{k[0]}/{k[1]}t {lt_runs[0][1][k]['lazy']:.2f}|"
                      f"{lt_runs[1][1][k]['lazy']:.2f}" for k in lt_runs[0][1]))
    print()
    print("| model | threads | lt eager ms | lt lazy ms | PyTorch ms | PyTorch / lazy | target "
          "| PyTorch / eager | cold compile (1st+2nd step) | warm start | eager MB | lazy MB "
          "| trace+hash us |" + (" lazy f32 ms | lazy f32 / bf16 | target |" if lt_f32 else ""))
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|---|" if lt_f32 else ""))
    for m in MODELS:
        for t in (1, 2):
            r, p = lt.get((m, t)), torch_ms.get((m, t))
            if r is None or p is None:
                continue
            ratio = p / r["lazy"]
            met = "met" if ratio >= targets[m] else "missed"
            own = ""
            if lt_f32:
                f32 = lt_f32[(m, t)]["lazy"]
                gain = f32 / r["lazy"]
                want = TARGETS_BF16_OVER_F32[m]
                own = (f" {f32:.2f} | {gain:.2f}x | {want}x "
                       f"{'met' if gain >= want else 'missed'} |")
            print(f"| {m} | {t} | {r['eager']:.2f} | {r['lazy']:.2f} | {p:.2f} | {ratio:.2f}x "
                  f"| {targets[m]}x {met} | {p / r['eager']:.2f}x | {r['cold_ms'] / 1e3:.2f} s "
                  f"| {r['warm_ms'] / 1e3:.3f} s | {r['eager_mb']:.1f} | {r['lazy_mb']:.1f} "
                  f"| {r['trace_us']:.0f} |" + own)


if __name__ == "__main__":
    main()
