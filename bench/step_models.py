"""The four benchmark training steps of bench/step_bench.cpp as Python model code written once
against PyTorch's API: build(torch, name) makes the step with `torch` the PyTorch module or
lazytrain (`import lazytrain`), so that both run the same lines.

  mlp     784-512-512-10, batch 128, linear+relu, SGD momentum 0.9
  cnn     conv32-pool-conv64-pool-fc128-fc10 on [64,1,28,28] (3x3 convs, padding 1, ReLU, 2x2
          max pools), SGD momentum 0.9
  resnet  CIFAR-style ResNet-20 (examples/python/models.py, examples/resnet_model.h) on
          [32,1,32,32], BatchNorm in training mode, SGD momentum 0.9
  gpt     byte-level GPT (examples/python/models.py, examples/gpt_model.h: 2 pre-LayerNorm
          blocks, d_model 128, 4 heads, MLP 4x with exact GELU, no dropout) on [16,64] byte ids,
          cross_entropy over the 1024 positions, AdamW (3e-4, weight decay 0.01 on every
          parameter)

  resnet50  torchvision's ResNet-50 (examples/python/models.py) on [16,3,128,128], 1000 classes,
          BatchNorm in training mode, SGD momentum 0.9 (one of the migration guides' ImageNet
          steps at a reduced image size)

Each step: cross_entropy of model(x) against y, backward, optimizer step, zero_grad
(set_to_none); SGD and AdamW with foreach=False (PyTorch's plain per-parameter loop)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                                "python"))
import models as example_models  # noqa: E402

NAMES = ["mlp", "cnn", "resnet", "gpt"]
# Steps of the sizes users train, without a C++ counterpart in lt_bench_step.
LARGE = ["resnet50"]


def build(torch, name):
    """(model, optimizer, x, y, vocab) of step `name`, drawn after torch.manual_seed(3); vocab
    is the language model's (its logits flatten to [-1, vocab]) or None."""
    nn = torch.nn
    ResNet20, Gpt = example_models.models(torch)
    torch.manual_seed(3)

    def labels(n):
        return torch.tensor([i * 7 % 10 for i in range(n)])

    def sgd(model):
        return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=False)

    if name == "mlp":
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                              nn.Linear(512, 10))
        return model, sgd(model), torch.randn(128, 784), labels(128), None
    if name == "cnn":
        model = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
        return model, sgd(model), torch.randn(64, 1, 28, 28), labels(64), None
    if name == "resnet":
        model = ResNet20().train()
        return model, sgd(model), torch.randn(32, 1, 32, 32), labels(32), None
    if name == "gpt":
        model = Gpt().train()
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01, foreach=False)
        return (model, opt, torch.randint(0, 256, (16, 64)), torch.randint(0, 256, (16 * 64,)),
                256)
    if name == "resnet50":
        model = example_models.resnet(torch, "resnet50").train()
        return (model, sgd(model), torch.randn(16, 3, 128, 128),
                torch.tensor([i * 7 % 1000 for i in range(16)]), None)
    raise ValueError(f"unknown step {name!r} (known: {', '.join(NAMES + LARGE)})")
