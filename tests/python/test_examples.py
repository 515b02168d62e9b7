"""The Python examples: train_mlp.py trains, its eager and lazy runs print the same losses, and
they are the C++ program's; train_cifar_style.py under both backends and on two ranks; the
ResNet-20, char-GPT and ImageNet trainers (on JPEG folders too), whose CSV log has the C++
trainers' columns."""
import csv
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

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


CPP_MLP = os.environ.get("LT_TRAIN_MLP",
                         os.path.join(ROOT, "build", "examples", "minimal", "train_mlp"))


@pytest.mark.parametrize("flags", [[], ["--compiler-opt"]])
def test_the_python_mlp_prints_what_the_cpp_program_prints(flags, tmp_path):
    """The same program in both languages (examples/minimal/train_mlp.cpp): the same weights
    drawn, the same batches in the same order, the same kernels, so the same losses and test
    accuracy, for the whole epoch, and the same trained weights saved, bit for bit, each file
    read by the other language's loader."""
    py_file, cpp_file = str(tmp_path / "py.safetensors"), str(tmp_path / "cpp.safetensors")
    py = subprocess.run([sys.executable, EXAMPLE, *flags, "--save", py_file],
                        capture_output=True, text=True, timeout=600)
    cpp = subprocess.run([CPP_MLP, *flags, "--save", cpp_file], capture_output=True, text=True,
                         timeout=600)
    assert py.returncode == 0 and cpp.returncode == 0, py.stderr + cpp.stderr
    py_lines = [line for line in py.stdout.splitlines() if not line.startswith("step 467")]
    assert py_lines == cpp.stdout.splitlines() and len(py_lines) == 6
    import lazytrain as lt
    from_py, from_cpp = lt._C.load(py_file)[0], lt.load(cpp_file)  # C++'s reader, Python's
    assert sorted(from_py) == sorted(from_cpp) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    for name, t in from_cpp.items():
        assert t.dtype is lt.float32 and from_py[name].dtype is lt.float32
        assert from_py[name].numpy().tobytes() == t.numpy().tobytes(), name


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


PY_EXAMPLES = os.path.join(ROOT, "examples", "python")


def _trainer(script, *flags, ranks=1):
    cmd = [sys.executable, os.path.join(PY_EXAMPLES, script), "--log-interval", "1", *flags]
    if ranks > 1:
        launch = os.environ.get("LT_LAUNCH", os.path.join(ROOT, "build", "tools", "lt-launch"))
        cmd = [launch, "-n", str(ranks), "--oversubscribe", "--"] + cmd
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout, [float(line.split()[5]) for line in out.stdout.splitlines()
                        if line.startswith("step")]


RESNET = ["--train-limit", "256", "--test-limit", "100", "--batch-size", "32",
          "--warmup-steps", "0"]
# ResNet-20's first steps amplify any rounding difference (a reduction summed in another order),
# the more so the larger the lr: at lr 0.001 one process's eager and lazy runs, and 2 ranks and
# 1, stay within 1e-4 in loss over the first 5 steps (6e-5 measured); at 0.05 they part by 1e-2.
STABLE = ["--lr", "0.001", "--max-steps", "5"]


def test_resnet_trainer_learns_and_its_lazy_steps_follow_eager():
    _, learning = _trainer("train_resnet.py", "--max-steps", "16", "--lr", "0.05", *RESNET)
    assert len(learning) == 16 and sum(learning[-4:]) < 0.8 * sum(learning[:4])
    _, eager = _trainer("train_resnet.py", *STABLE, *RESNET)
    _, lazy = _trainer("train_resnet.py", *STABLE, "--compiler-opt", *RESNET)
    assert len(eager) == 5 and len(lazy) == 5
    for a, b in zip(lazy, eager):
        assert abs(a - b) <= 1e-4 * abs(b), (lazy, eager)


def test_resnet_trainer_resumed_follows_the_straight_run(tmp_path):
    flags = ["--lr", "0.05", "--max-steps", "6", *RESNET]
    _, straight = _trainer("train_resnet.py", *flags, "--save-every", "3", "--save-dir",
                           str(tmp_path / "straight"))
    _, resumed = _trainer("train_resnet.py", *flags, "--resume",
                          str(tmp_path / "straight" / "step-3.safetensors"), "--save-dir",
                          str(tmp_path / "resumed"))
    assert resumed == straight[3:]  # eager steps: the same values to the last digit printed
    assert ((tmp_path / "resumed" / "step-6.safetensors").read_bytes() ==
            (tmp_path / "straight" / "step-6.safetensors").read_bytes())


CPP_FMNIST_MLP = os.environ.get("LT_FMNIST_MLP",
                                os.path.join(ROOT, "build", "examples", "fmnist_mlp"))
MLP_FLAGS = ["--train-limit", "640", "--test-limit", "300", "--epochs", "2", "--log-interval",
             "5", "--hidden", "64", "32", "--dropout", "0.1"]


@pytest.mark.parametrize("flags", [
    [],
    ["--compiler-opt", "--warmup-steps", "5", "--weight-decay", "1e-4", "--save-every", "7"],
    ["--compiler-opt", "--amp", "bf16", "--loss-scale", "dynamic", "--clip-grad", "1",
     "--schedule", "constant"],
    ["--amp", "fp16", "--eval-every", "6", "--no-normalize"],
])
def test_the_python_mlp_trainer_writes_the_cpp_trainers_checkpoints(flags, tmp_path):
    """examples/python/train_fmnist_mlp.py and the C++ fmnist_mlp, same flags: the same files,
    byte for byte (model, optimizer, schedule, scaler, RNG, data position, configuration)."""
    py, cpp = tmp_path / "py", tmp_path / "cpp"
    _trainer("train_fmnist_mlp.py", *MLP_FLAGS, *flags, "--save-dir", str(py))
    out = subprocess.run([CPP_FMNIST_MLP, *MLP_FLAGS, *flags, "--save-dir", str(cpp),
                          "--quiet"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    files = sorted(os.listdir(cpp))
    assert files == sorted(os.listdir(py)) and "step-20.safetensors" in files
    for name in files:
        assert (py / name).read_bytes() == (cpp / name).read_bytes(), name


def test_each_language_resumes_the_others_mlp_checkpoint(tmp_path):
    straight, py, cpp = tmp_path / "straight", tmp_path / "py", tmp_path / "cpp"
    out = subprocess.run([CPP_FMNIST_MLP, *MLP_FLAGS, "--save-every", "7", "--save-dir",
                          str(straight), "--quiet"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    out, _ = _trainer("train_fmnist_mlp.py", *MLP_FLAGS, "--resume",
                      str(straight / "step-7.safetensors"), "--save-every", "14", "--save-dir",
                      str(py))
    assert "fmnist_mlp: resumed from" in out
    out = subprocess.run([CPP_FMNIST_MLP, *MLP_FLAGS, "--resume", str(py / "step-14.safetensors"),
                          "--save-dir", str(cpp), "--quiet"], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    want = (straight / "step-20.safetensors").read_bytes()
    assert (py / "step-20.safetensors").read_bytes() == want
    assert (cpp / "step-20.safetensors").read_bytes() == want
    bad = subprocess.run([sys.executable, os.path.join(PY_EXAMPLES, "train_resnet.py"),
                          "--resume", str(py / "step-20.safetensors")], capture_output=True,
                         text=True, timeout=600)
    assert bad.returncode != 0
    assert bad.stderr.strip().endswith("step-20.safetensors: a checkpoint of fmnist_mlp, not of "
                                       "fmnist_resnet")


def test_resnet_trainer_on_two_ranks_follows_one():
    """DistributedSampler, SyncBatchNorm over ResNet-20's BatchNorms, DDP in lazy mode."""
    _, one = _trainer("train_resnet.py", *STABLE, "--compiler-opt", *RESNET)
    out, two = _trainer("train_resnet.py", *STABLE, "--compiler-opt", *RESNET, ranks=2)
    assert "2 rank(s)" in out and len(two) == 5
    for a, b in zip(two, one):
        assert abs(a - b) <= 1e-4 * abs(b), (two, one)


def test_accumulated_micro_batches_take_the_whole_batchs_steps(tmp_path):
    """--accum-steps 2 of 8 examples steps as one batch of 16 (no dropout: the same arithmetic
    up to the order of the sums), eagerly and lazily, and on 2 ranks, where DDP reduces in the
    last micro-batch only; a resume refuses another --accum-steps."""
    flags = ["--max-steps", "4", "--test-limit", "16", "--sample-bytes", "0", "--dropout", "0",
             "--warmup-steps", "0", "--lr", "3e-3"]
    for mode in ([], ["--compiler-opt"]):
        _, whole = _trainer("train_char_gpt.py", *flags, *mode, "--batch-size", "16")
        _, accum = _trainer("train_char_gpt.py", *flags, *mode, "--batch-size", "8",
                            "--accum-steps", "2")
        assert len(accum) == 4
        for a, b in zip(accum, whole):
            assert abs(a - b) <= 1e-4 * abs(b), (mode, accum, whole)
    _, two = _trainer("train_char_gpt.py", *flags, "--compiler-opt", "--batch-size", "8",
                      "--accum-steps", "2", ranks=2)
    for a, b in zip(two, whole):
        assert abs(a - b) <= 1e-4 * abs(b), (two, whole)
    _trainer("train_char_gpt.py", *flags, "--batch-size", "8", "--accum-steps", "2",
             "--save-dir", str(tmp_path))
    (ckpt,) = [p for p in os.listdir(tmp_path) if p.endswith(".safetensors")]
    bad = subprocess.run([sys.executable, os.path.join(PY_EXAMPLES, "train_char_gpt.py"), *flags,
                          "--batch-size", "8", "--resume", str(tmp_path / ckpt)],
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode != 0 and ("written with --accum-steps 2, resumed with --accum-steps 1 "
                                    "(the data position depends on it)") in bad.stderr


def test_trainer_evaluates_every_n_steps_plots_and_starts_from_weights(tmp_path):
    flags = ["--max-steps", "4", "--test-limit", "16", "--sample-bytes", "0", "--dropout", "0",
             "--warmup-steps", "0", "--batch-size", "8"]
    out, losses = _trainer("train_char_gpt.py", *flags, "--compiler-opt", "--eval-every", "2",
                           "--plot", str(tmp_path / "run.png"), "--save-dir", str(tmp_path))
    rows = list(csv.reader(open(tmp_path / "run.png.csv")))
    assert [r[1] for r in rows[1:] if r[0] == "eval"] == ["2", "4"]  # step 2, and the end
    assert [r[1] for r in rows[1:] if r[0] == "train"] == ["1", "2", "3", "4"]
    assert (tmp_path / "run.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (ckpt,) = [p for p in os.listdir(tmp_path) if p.endswith(".safetensors")]
    # Started from the trained weights, the first loss is below the fresh run's first.
    out, again = _trainer("train_char_gpt.py", *flags, "--weights", str(tmp_path / ckpt))
    assert "missing [], unexpected [], shape mismatches []" in out
    assert again[0] < losses[0]


def test_trainer_loss_scaling_and_fp16(tmp_path):
    """--loss-scale N with a power of 2 gives the unscaled run's losses exactly (scaling and
    unscaling are exact); --amp fp16 scales dynamically, logs the scale and the skipped steps,
    and keeps the scaler in the checkpoint: a resumed run follows the straight one, and one with
    another --loss-scale is refused."""
    flags = ["--max-steps", "3", "--test-limit", "16", "--sample-bytes", "0", "--dropout", "0",
             "--warmup-steps", "0", "--batch-size", "8", "--lr", "3e-3"]
    _, plain = _trainer("train_char_gpt.py", *flags)
    out, scaled = _trainer("train_char_gpt.py", *flags, "--loss-scale", "1024")
    assert scaled == plain and "scale 1024  skipped 0" in out
    assert "loss scaler: scale 1024 at the end, 0 of 3 steps skipped" in out
    fp16 = flags + ["--amp", "fp16"]
    out, straight = _trainer("train_char_gpt.py", *fp16)
    assert "fp16 autocast, dynamic loss scale" in out and "scale 65536  skipped 0" in out
    assert all(abs(a - b) < 2e-2 for a, b in zip(straight, plain))  # f16 matmuls, same steps
    _trainer("train_char_gpt.py", *fp16, "--save-every", "2", "--save-dir", str(tmp_path))
    ckpt = "step-2.safetensors"
    _, resumed = _trainer("train_char_gpt.py", *fp16, "--resume", str(tmp_path / ckpt))
    assert resumed == straight[2:]
    script = os.path.join(PY_EXAMPLES, "train_char_gpt.py")
    bad = subprocess.run([sys.executable, script, *fp16, "--loss-scale", "off", "--resume",
                          str(tmp_path / ckpt)], capture_output=True, text=True, timeout=600)
    assert bad.returncode != 0
    assert "written with --loss-scale dynamic, resumed with --loss-scale off" in bad.stderr
    bad = subprocess.run([sys.executable, script, "--loss-scale", "1e39"], capture_output=True,
                         text=True, timeout=600)
    assert bad.returncode == 2 and ("argument --loss-scale: expected dynamic, off or a number > 0 "
                                    "that is finite in f32, got 1e39") in bad.stderr


def test_char_gpt_trainer_trains_evaluates_and_samples():
    out, losses = _trainer("train_char_gpt.py", "--max-steps", "8", "--compiler-opt",
                           "--test-limit", "64", "--sample-bytes", "16", "--warmup-steps", "0",
                           "--lr", "3e-3")
    assert len(losses) == 8 and losses[-1] < losses[0]
    assert "x the unigram entropy" in out and out.count("sample, temperature") == 2


def test_imagenet_trainer_runs_resnets_on_mock_imagenet_with_loader_threads():
    out, losses = _trainer("train_imagenet.py", "--arch", "resnet18", "--image-size", "32",
                           "--batch-size", "8", "--max-steps", "3", "--train-limit", "64",
                           "--test-limit", "16", "--num-workers", "2", "--compiler-opt",
                           "--num-classes", "10", "--lr", "0.01")
    assert len(losses) == 3 and all(0 < v < 20 for v in losses)
    assert "samples/s" in out and "data wait" in out and "peak" in out
    assert "top1 " in out and "top5 " in out


def test_imagenet_trainer_reads_jpeg_folders(tmp_path):
    rng = np.random.default_rng(0)
    for split, count in (("train", 6), ("val", 2)):
        for cls in ("dog", "cat"):
            os.makedirs(tmp_path / split / cls)
            for i in range(count):
                pixels = rng.integers(0, 256, (40 + 3 * i, 48, 3)).astype(np.uint8)
                Image.fromarray(pixels).save(tmp_path / split / cls / f"{i}.jpg")
    out, losses = _trainer("train_imagenet.py", "--data", str(tmp_path), "--arch", "resnet18",
                           "--image-size", "32", "--batch-size", "4", "--max-steps", "3",
                           "--num-classes", "2", "--num-workers", "2", "--test-limit", "4",
                           "--compiler-opt", "--lr", "0.01")
    assert len(losses) == 3 and all(0 < v < 5 for v in losses)
    assert "top1 " in out
    os.makedirs(tmp_path / "val" / "bird")
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(tmp_path / "val" / "bird" / "0.jpg")
    bad = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python",
                                                       "train_imagenet.py"),
                          "--data", str(tmp_path), "--num-classes", "2", "--max-steps", "1"],
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode != 0
    assert "val/ and train/ hold different class folders" in bad.stderr


def test_python_trainers_csv_has_the_cpp_trainers_columns(tmp_path):
    log = tmp_path / "log.csv"
    _, losses = _trainer("train_imagenet.py", "--arch", "resnet18", "--image-size", "32",
                         "--batch-size", "8", "--max-steps", "2", "--train-limit", "32",
                         "--test-limit", "8", "--num-classes", "10", "--log-csv", str(log))
    header = open(os.path.join(ROOT, "examples", "trainer", "csv_log.h")).read()
    cpp = "".join(re.findall(r'"([a-z0-9_,]+)"', header.split("kHeader =")[1].split(";")[0]))
    rows = list(csv.reader(open(log)))
    assert ",".join(rows[0]) == cpp
    train = [r for r in rows[1:] if r[0] == "train"]
    assert [r[1:3] for r in train] == [["1", "1"], ["2", "1"]]
    assert [float(r[3]) for r in train] == pytest.approx(losses, rel=1e-5)
    assert all(r[9:] == ["", "", ""] for r in train)
    (ev,) = [r for r in rows[1:] if r[0] == "eval"]
    assert ev[1:3] == ["2", "1"] and ev[3:8] == [""] * 5
    assert 0 <= float(ev[10]) <= float(ev[11]) <= 1 and ev[9] == ""  # top-1, top-5


def test_torchvisions_resnets_load_strictly_and_give_torchvisions_outputs():
    """models.resnet is torchvision's: its state_dict loads strictly, f64 outputs agree."""
    import numpy as np
    import torch
    import torchvision
    sys.path.insert(0, PY_EXAMPLES)
    import lazytrain as lt
    import models
    for arch in ("resnet18", "resnet50"):
        theirs = getattr(torchvision.models, arch)(num_classes=7).double().eval()
        ours = models.resnet(lt, arch, num_classes=7).double().eval()
        assert list(ours.state_dict()) == list(theirs.state_dict())
        ours.load_state_dict(theirs.state_dict(), strict=True)
        x = np.random.default_rng(0).standard_normal((2, 3, 64, 64))
        with torch.no_grad():
            want = theirs(torch.tensor(x)).numpy()
        got = ours(lt.tensor(x)).detach().numpy()
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_imagenet_trainer_on_two_ranks_follows_one():
    """torchvision's ResNet-18 with SyncBatchNorm, DDP and a DistributedSampler over the mock
    ImageNet: 2 ranks of 4 images a step take 1 rank's steps of 8. At 32x32, layer4's batch norms
    normalize 8 values a channel and amplify any rounding difference after a few updates (at lr
    0.001 one process's eager and lazy runs part by 3e-3 in 4 steps with AVX2 kernels); at lr
    1e-4 the ranks follow within rounding, and without SyncBatchNorm they part by 2e-2."""
    flags = ["--arch", "resnet18", "--image-size", "32", "--batch-size", "8", "--max-steps", "4",
             "--train-limit", "64", "--test-limit", "8", "--num-workers", "1", "--compiler-opt",
             "--lr", "0.0001", "--num-classes", "10"]
    _, one = _trainer("train_imagenet.py", *flags)
    out, two = _trainer("train_imagenet.py", *flags, ranks=2)
    assert "2 rank(s)" in out and len(one) == 4 and len(two) == 4
    for a, b in zip(two, one):
        assert abs(a - b) <= 1e-4 * abs(b), (two, one)


def test_cpp_imagenet_trainer_takes_torchvisions_weights_and_gives_its_validation_loss(tmp_path):
    """examples/imagenet_resnet50 (C++) loads torchvision's ResNet-18 weights strictly, by
    torchvision's names, and evaluates a folder of JPEGs (resize to 256/224 of the size, center
    crop, normalize) to the loss and top-1 that torchvision's model gives on the images PIL
    decodes, through torchvision's transforms on tensors."""
    import numpy as np
    import torch
    import torchvision
    import torchvision.transforms.functional as F
    from PIL import Image
    import lazytrain as lt
    build = os.path.join(ROOT, "build")
    folder = tmp_path / "images"
    subprocess.run([os.path.join(build, "tests", "lt_make_image_folder"), str(folder), "5", "1",
                    "4"], check=True, capture_output=True)
    torch.manual_seed(0)
    theirs = torchvision.models.resnet18(num_classes=10)
    with torch.no_grad():  # batch statistics of their own in the running averages
        theirs.train()(torch.randn(8, 3, 64, 64))
        theirs.fc.weight.mul_(40)  # logits far apart, so the loss depends on every feature
    theirs.eval()
    weights = tmp_path / "resnet18.safetensors"
    lt.save({k: lt.tensor(v.numpy()) for k, v in theirs.state_dict().items()}, str(weights))
    log = tmp_path / "log.csv"
    out = subprocess.run([os.path.join(build, "examples", "imagenet_resnet50"), "--arch",
                          "resnet18", "--num-classes", "10", "--image-size", "64", "--data",
                          str(folder), "--weights", str(weights), "--max-steps", "0",
                          "--batch-size", "4", "--log-csv", str(log)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"weights from {weights}: every tensor matched" in out.stdout
    row = [r for r in csv.DictReader(open(log)) if r["kind"] == "eval"][0]
    images, labels = [], []
    for k, cls in enumerate(sorted(os.listdir(folder / "val"))):
        for name in sorted(os.listdir(folder / "val" / cls)):
            x = F.to_tensor(Image.open(folder / "val" / cls / name).convert("RGB"))
            x = F.center_crop(F.resize(x, 64 * 256 // 224, antialias=True), 64)
            images.append(F.normalize(x, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]))
            labels.append(k)
    with torch.no_grad():
        logits = theirs(torch.stack(images))
    loss = torch.nn.functional.cross_entropy(logits, torch.tensor(labels)).item()
    top1 = (logits.argmax(1) == torch.tensor(labels)).float().mean().item()
    assert abs(loss - 2.302585) > 0.5  # not the loss of uniform logits, which any input gives
    assert abs(float(row["eval_loss"]) - loss) <= 1e-4 * loss, (row, loss)
    assert abs(float(row["eval_acc"]) - top1) < 1e-6, (row, top1)
