#!/usr/bin/python3
"""Writes torch_checkpoint_model.safetensors next to this script: a small model using
ConvTranspose2d, GroupNorm, LSTM and MultiheadAttention, trained for three SGD steps in PyTorch
(float32), saved by its state_dict names, with a fixed input ("data.input") and the trained
model's output for it ("data.output"). tests/unit/nn/torch_checkpoint_test.cpp builds the same
model with lt::nn, loads the checkpoint strictly and compares the outputs.

Run: /usr/bin/python3 tests/data/torch_checkpoint_model.py (needs torch)."""
import json
import os
import struct

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1)
        self.norm = nn.GroupNorm(2, 4)
        self.rnn = nn.LSTM(4, 8, batch_first=True)
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        h = torch.relu(self.norm(self.up(x)))  # [N, 4, 8, 8]
        h = h.flatten(2).transpose(1, 2)  # [N, 64, 4]
        h, _ = self.rnn(h)  # [N, 64, 8]
        a, _ = self.attn(h, h, h)
        return self.head((h + a).mean(1))  # [N, 5]


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous().to(torch.float32)
        data = struct.pack("<%df" % t.numel(), *t.reshape(-1).tolist())
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def main():
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        x = torch.randn(4, 3, 4, 4)
        y = torch.randint(0, 5, (4,))
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    x = torch.randn(2, 3, 4, 4)
    with torch.no_grad():
        out = model(x)
    tensors = dict(model.state_dict())
    tensors["data.input"] = x
    tensors["data.output"] = out
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "torch_checkpoint_model.safetensors")
    write_safetensors(path, tensors)


if __name__ == "__main__":
    main()
