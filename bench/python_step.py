#!/usr/bin/python3
"""The four training steps driven from Python (bench/step_models.py, the model code PyTorch runs
in torch_compare.py) by lazytrain's package in lazy mode, against the C++ lt_bench_step's lazy
steps of the same models, in one run, at 1 and 2 threads; with --torch also PyTorch 1.13 eager
on the same Python model code in its fastest configuration (torch_peer.py): the ratio a user
who moves the script sees.

  PYTHONPATH=build/python /usr/bin/python3 bench/python_step.py [--build build] [--steps 100]
      [--rounds 2] [--models mlp,cnn,resnet,gpt] [--torch]

Each figure is ms per steady step after 2 warm-up steps (the first compiles), the faster of
--rounds runs, C++ and Python alternating, so that a neighbour's burst on a shared host decides
neither side. Python's host time per step tracing it (ops called from Python, before
mark_step) is printed beside, and each side's host time per traced op: tracing plus cutting and
hashing the graph, over the ops traced (the same graph on both sides).
"""
import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import step_models  # noqa: E402


def child(name, steps):
    """One model's lazy steps from Python: prints 'ms trace_ms trace_and_hash_us ops' per
    step."""
    import lazytrain as lt
    model, opt, x, y, vocab = step_models.build(lt, name)
    F = lt.nn.functional
    trace = 0.0

    def step():
        nonlocal trace
        t0 = time.perf_counter()
        logits = model(x)
        loss = F.cross_entropy(logits if vocab is None else logits.view(-1, vocab), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        trace += time.perf_counter() - t0
        lt.mark_step()

    with lt.lazy():
        step()
        step()
        trace = 0.0
        hash0, ops0 = lt.debug.total_ns("build_and_hash"), lt.debug.counter("nodes_traced")
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        ms = (time.perf_counter() - t0) * 1e3 / steps
        hashing = (lt.debug.total_ns("build_and_hash") - hash0) / 1e3 / steps
        ops = (lt.debug.counter("nodes_traced") - ops0) / steps
    print(f"{ms:.4f} {trace * 1e3 / steps:.4f} {trace * 1e6 / steps + hashing:.2f} {ops:.1f}")


def run(cmd, env):
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"python_step: {' '.join(cmd)} failed:\n{out.stdout}{out.stderr}")
    return out.stdout


def cpp_lazy(build, name, steps, env):
    out = run([os.path.join(build, "bench", "lt_bench_step"), str(steps), name, "lazy"], env)
    m = re.search(r": ([\d.]+) ms/step at (\d+) threads, trace\+hash ([\d.]+) us of "
                  r"([\d.]+) ops", out)
    if not m:
        sys.exit(f"python_step: could not read lt_bench_step's line:\n{out}")
    return float(m.group(1)), float(m.group(3)) / max(float(m.group(4)), 1)


def python_lazy(name, steps, env):
    ms, trace, trace_hash, ops = run([sys.executable, os.path.abspath(__file__), "--child", name,
                                      "--steps", str(steps)], env).split()
    return float(ms), float(trace), float(trace_hash) / max(float(ops), 1)


def cpu_name():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--models", default=",".join(step_models.NAMES))
    ap.add_argument("--torch", action="store_true", help="also PyTorch eager (torch_compare.py)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child, args.steps)
    models = [m for m in args.models.split(",") if m]
    known = step_models.NAMES + step_models.LARGE
    for m in models:
        if m not in known:
            ap.error(f"--models: unknown model '{m}' (known: {', '.join(known)})")
    torch_ms = {}
    if args.torch:
        import step_vs_torch
        import torch_peer
        env, note = torch_peer.torch_env()
        _, header, torch_ms = step_vs_torch.torch_side(3.0, False, env, models)
        print(f"PyTorch: {header} ({note})")
    print(f"{cpu_name()}, {os.cpu_count()} logical CPUs; lazy mode, {args.steps} timed steps, "
          f"best of {args.rounds} rounds")
    print(f"{'model':<8}{'threads':>8}{'C++ ms':>10}{'Python ms':>11}{'Py/C++':>8}"
          f"{'Py trace ms':>13}{'C++ us/op':>11}{'Py us/op':>10}" +
          (f"{'torch ms':>10}{'torch/Py':>10}" if torch_ms else ""))
    for name in models:
        for threads in (1, 2):
            env = dict(os.environ, LT_NUM_THREADS=str(threads))
            cpp, cpp_op, py, trace, py_op = [], [], [], [], []
            for _ in range(args.rounds):
                if name in step_models.NAMES:  # the LARGE steps have no C++ program
                    ms, per_op = cpp_lazy(args.build, name, args.steps, env)
                    cpp.append(ms)
                    cpp_op.append(per_op)
                ms, tr, per_op = python_lazy(name, args.steps, env)
                py.append(ms)
                trace.append(tr)
                py_op.append(per_op)
            p = min(py)
            cells = f"{min(cpp):>10.3f}{p:>11.3f}{p / min(cpp):>8.3f}" if cpp else (
                f"{'-':>10}{p:>11.3f}{'-':>8}")
            line = f"{name:<8}{threads:>8}{cells}{min(trace):>13.3f}"
            line += (f"{min(cpp_op):>11.2f}" if cpp_op else f"{'-':>11}") + f"{min(py_op):>10.2f}"
            if torch_ms:
                t = torch_ms[(name, threads)]
                line += f"{t:>10.3f}{t / p:>9.2f}x"
            print(line, flush=True)


if __name__ == "__main__":
    main()
