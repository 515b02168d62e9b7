"""The examples' models written once against PyTorch's API: models(torch) returns the classes
with `torch` the PyTorch module or lazytrain, so the same lines build either (the trainers here
and bench/step_models.py use them).

  ResNet20  CIFAR-style ResNet-20 (three stages of three basic blocks, 16/32/64 channels, a 1x1
            projection shortcut where the shape changes) on [N, 1, 32, 32] images, 10 classes.
  Gpt       a byte-level GPT in GPT-2's layout: token and learned position embeddings,
            pre-LayerNorm blocks (causal multi-head self-attention, a 4x MLP with exact GELU),
            a final LayerNorm and an untied head to 256 byte logits; dropout on embeddings,
            attention weights and residuals.

resnet(torch, arch) builds torchvision's ResNet-18/34/50/101 (torchvision.models.resnet: its
module names, so a torchvision state_dict loads strictly, and its initialization)."""


def models(torch):
    nn = torch.nn
    F = nn.functional

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
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

    class ResNet20(nn.Module):
        def __init__(self, num_classes=10):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(16)
            blocks, cin = [], 16
            for stage in range(3):
                for b in range(3):
                    blocks.append(BasicBlock(cin, 16 << stage, 2 if stage > 0 and b == 0 else 1))
                    cin = 16 << stage
            self.blocks = nn.Sequential(*blocks)
            self.fc = nn.Linear(64, num_classes)

        def forward(self, x):
            h = self.blocks(torch.relu(self.bn1(self.conv1(x))))
            return self.fc(torch.flatten(F.adaptive_avg_pool2d(h, 1), 1))

    class Block(nn.Module):
        def __init__(self, d, heads, dropout):
            super().__init__()
            self.heads, self.dropout = heads, dropout
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
            self.drop = nn.Dropout(dropout)

        def attn(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(x).split(c, dim=2)
            q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                       for z in (q, k, v))
            scores = (q @ k.transpose(-2, -1)) * (1.0 / (c // self.heads) ** 0.5)
            future = torch.ones(t, t, dtype=torch.bool).triu(1)
            att = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
            att = F.dropout(att, self.dropout, self.training)
            return self.proj((att @ v).transpose(1, 2).reshape(b, t, c))

        def forward(self, x):
            x = x + self.drop(self.attn(self.ln1(x)))
            return x + self.drop(self.mlp(self.ln2(x)))

    class Gpt(nn.Module):
        def __init__(self, vocab=256, context=64, d=128, layers=2, heads=4, dropout=0.0):
            super().__init__()
            self.context = context
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(context, d)
            self.drop = nn.Dropout(dropout)
            self.blocks = nn.Sequential(*[Block(d, heads, dropout) for _ in range(layers)])
            self.ln_f, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

        def forward(self, ids):
            x = self.drop(self.tok(ids) + self.pos(torch.arange(ids.shape[1])))
            return self.head(self.ln_f(self.blocks(x)))

    return ResNet20, Gpt


RESNET_LAYERS = {"resnet18": ("basic", [2, 2, 2, 2]), "resnet34": ("basic", [3, 4, 6, 3]),
                 "resnet50": ("bottleneck", [3, 4, 6, 3]),
                 "resnet101": ("bottleneck", [3, 4, 23, 3])}


def resnet(torch, arch, num_classes=1000):
    """torchvision.models.<arch>(num_classes=...), written against `torch` (PyTorch or
    lazytrain)."""
    if arch not in RESNET_LAYERS:
        raise ValueError(f"unknown arch {arch!r} (known: {', '.join(RESNET_LAYERS)})")
    nn = torch.nn
    kind, layers = RESNET_LAYERS[arch]

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU()
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = downsample

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            identity = x if self.downsample is None else self.downsample(x)
            return self.relu(out + identity)

    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(planes * 4)
            self.relu = nn.ReLU()
            self.downsample = downsample

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            identity = x if self.downsample is None else self.downsample(x)
            return self.relu(out + identity)

    block = BasicBlock if kind == "basic" else Bottleneck

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.inplanes = 64
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU()
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            self.layer1 = self._layer(64, layers[0])
            self.layer2 = self._layer(128, layers[1], 2)
            self.layer3 = self._layer(256, layers[2], 2)
            self.layer4 = self._layer(512, layers[3], 2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512 * block.expansion, num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)

        def _layer(self, planes, blocks, stride=1):
            downsample = None
            if stride != 1 or self.inplanes != planes * block.expansion:
                downsample = nn.Sequential(
                    nn.Conv2d(self.inplanes, planes * block.expansion, 1, stride, bias=False),
                    nn.BatchNorm2d(planes * block.expansion))
            out = [block(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes * block.expansion
            out += [block(self.inplanes, planes) for _ in range(1, blocks)]
            return nn.Sequential(*out)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return ResNet()
