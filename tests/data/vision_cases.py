#!/usr/bin/python3
"""Writes vision_cases.json next to this script: torchvision's resized_crop, resize (bilinear,
antialias=True: PIL's filter on tensors) and center_crop of a fixed f32 image [3, 13, 17], and
the pixels PIL decodes from a fixed RGB image it encoded at quality 95 (the file's bytes as well,
so that the test decodes the same file). tests/unit/vision/transforms_reference_test.cpp
runs every case through lt::vision.

Run: /usr/bin/python3 tests/data/vision_cases.py (needs torch and torchvision; the file records
their versions)."""
import io
import json
import os

import numpy as np
import torch
import torchvision
import torchvision.transforms.functional as F
from PIL import Image

c, h, w = 3, 13, 17
ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32),
                        torch.arange(w, dtype=torch.float32), indexing="ij")
image = torch.stack([torch.sin(0.7 * xs + 0.3 * ys), torch.cos(0.4 * xs * ys / 10),
                     (xs - ys) / 17]).float()


def tensor_json(t):
    return {"shape": list(t.shape), "values": t.reshape(-1).tolist()}


cases = []
# (top, left, height, width) -> (out_h, out_w): shrinking by several factors, growing, both.
for box, out in [((0, 0, 13, 17), (5, 7)), ((2, 3, 9, 11), (4, 4)), ((1, 1, 6, 5), (12, 10)),
                 ((0, 4, 13, 9), (13, 3)), ((3, 0, 4, 17), (8, 6)), ((0, 0, 13, 17), (13, 17))]:
    y = F.resized_crop(image, *box, list(out), F.InterpolationMode.BILINEAR, antialias=True)
    cases.append({"op": "resized_crop", "box": list(box), "out": list(out),
                  "output": tensor_json(y)})
for size in (8, 20, 13):
    cases.append({"op": "resize", "size": size,
                  "output": tensor_json(F.resize(image, size, antialias=True))})
for size in (9, 12, 13):
    cases.append({"op": "center_crop", "size": size,
                  "output": tensor_json(F.center_crop(image, size))})

rng = np.random.default_rng(7)
pixels = np.clip(np.add.outer(np.arange(24), np.arange(32))[:, :, None] * [4, 7, 3] % 256
                 + rng.integers(-20, 20, (24, 32, 3)), 0, 255).astype(np.uint8)
buf = io.BytesIO()
Image.fromarray(pixels).save(buf, format="JPEG", quality=95)
decoded = np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))

out = {"torch": torch.__version__, "torchvision": torchvision.__version__,
       "image": tensor_json(image), "cases": cases,
       "jpeg": {"bytes": list(buf.getvalue()), "source_rgb": pixels.reshape(-1).tolist(),
                "decoded_rgb": decoded.reshape(-1).tolist(), "height": 24, "width": 32}}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vision_cases.json")
with open(path, "w") as f:
    json.dump(out, f)
print(f"wrote {len(cases)} cases to {path}")
