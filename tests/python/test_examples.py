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


CIFAR_STYLE = os.path.join(ROOT, "examples", "python", "train_cifar_style.py")


def _losses(*flags):
    out = subprocess.run([sys.executable, CIFAR_STYLE, "--dtype", "float64", "--epochs", "2",
                          "--max-steps", "4", "--batch-size", "32", *flags],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return [float(line.split()[-1]) for line in out.stdout.splitlines()
            if line.startswith("epoch")]


def test_the_same_script_under_torch_and_lazytrain_gives_the_same_losses():
    """The porting claim: one script, two backends, the same float64 losses to 1e-9."""
    torch_losses = _losses("--backend", "torch")
    assert len(torch_losses) == 8
    for flags in (["--backend", "lazytrain"], ["--backend", "lazytrain", "--compiler-opt"]):
        got = _losses(*flags)
        assert len(got) == 8
        for a, b in zip(got, torch_losses):
            assert abs(a - b) <= 1e-9 * abs(b), (flags, got, torch_losses)


def test_cifar_style_checkpoint_resume_and_freeze(tmp_path):
    _losses("--backend", "lazytrain", "--save-dir", str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["epoch0.pt", "epoch1.pt"]
    out = subprocess.run([sys.executable, CIFAR_STYLE, "--max-steps", "2", "--freeze-layers",
                          "--weights", str(tmp_path / "epoch1.pt")],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "missing [] unexpected []" in out.stdout
