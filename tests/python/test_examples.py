"""examples/python/train_mlp.py trains, and its eager and lazy runs print the same losses."""
import os
import subprocess
import sys
ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
EXAMPLE = os.path.join(ROOT, "examples", "python", "train_mlp.py")


def _run(*flags):
    out = subprocess.run([sys.executable, EXAMPLE, "--max-steps", "120", *flags],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()


def test_mlp_example_eager_and_lazy_agree():
    eager, lazy = _run(), _run("--compiler-opt")
    losses = [line for line in eager if line.startswith("step")]
    assert len(losses) == 3 and losses == [line for line in lazy if line.startswith("step")]
    first, last = float(losses[0].split()[-1]), float(losses[-1].split()[-1])
    assert last < 0.75 * first
    for lines in (eager, lazy):
        assert float(lines[-1].split()[-1]) > 0.75  # test accuracy after 120 steps
