#!/usr/bin/python3
"""Writes spatial_cases.json next to this script: PyTorch's outputs and gradients for conv1d,
conv_transpose2d, interpolate (nearest, bilinear), the adaptive pools and max_pool2d with indices
and dilation on fixed float64 inputs.
Each case holds its inputs, a cotangent c and the gradients of sum(y * c) with respect to every
float input. tests/unit/frontend/spatial_reference_test.cpp runs every case through lazytrain.

Run: /usr/bin/python3 tests/data/spatial_cases.py (needs torch; the file records the version)."""
import json
import math
import os

import torch
import torch.nn.functional as F

torch.manual_seed(20261202)
D = torch.float64


def tensor_json(t):
    return {"shape": list(t.shape), "values": t.detach().reshape(-1).tolist()}


def run(name, op, args, inputs, f):
    """inputs: name -> tensor (float inputs get gradients); f(**inputs) -> output or tuple."""
    leaves = {k: v.clone().requires_grad_(v.is_floating_point()) for k, v in inputs.items()}
    out = f(**leaves)
    indices = None
    if isinstance(out, tuple):
        out, indices = out
    c = torch.randn(out.shape, dtype=D)
    grads = {}
    if out.numel() > 0:
        (out * c).sum().backward()
        grads = {k: tensor_json(v.grad if v.grad is not None else torch.zeros_like(v))
                 for k, v in leaves.items() if v.is_floating_point()}
    case = {"name": name, "op": op, "args": args,
            "inputs": {k: tensor_json(v) for k, v in inputs.items()},
            "output": tensor_json(out), "cotangent": tensor_json(c), "grads": grads}
    if indices is not None:
        case["indices"] = tensor_json(indices)
    return case


def randn(*shape):
    return torch.randn(shape, dtype=D)


cases = []

# conv1d: x [N, C, L], w [O, C / groups, K]
for (n, c, l, o, k, stride, padding, dilation, groups, bias) in [
        (2, 3, 7, 4, 3, 1, 0, 1, 1, True),
        (2, 4, 9, 6, 3, 2, 1, 2, 2, True),
        (1, 2, 5, 2, 2, 3, 2, 1, 1, False),
        (1, 6, 8, 3, 1, 1, 0, 1, 3, True)]:
    inputs = {"x": randn(n, c, l), "w": randn(o, c // groups, k)}
    if bias:
        inputs["b"] = randn(o)
    args = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    cases.append(run(f"conv1d {args} bias={bias}", "conv1d", args, inputs,
                     lambda x, w, b=None, a=args: F.conv1d(x, w, b, **a)))
# unbatched [C, L]
inputs = {"x": randn(3, 6), "w": randn(2, 3, 3), "b": randn(2)}
args = {"stride": 1, "padding": 1, "dilation": 1, "groups": 1}
cases.append(run("conv1d unbatched", "conv1d", args, inputs,
                 lambda x, w, b, a=args: F.conv1d(x, w, b, **a)))

# conv_transpose2d: x [N, Cin, H, W], w [Cin, Cout / groups, kH, kW]
for (n, cin, h, w_, cout, kh, kw, stride, padding, out_pad, groups, dilation, bias) in [
        (2, 3, 4, 5, 2, 3, 3, [1, 1], [0, 0], [0, 0], 1, [1, 1], True),
        (1, 4, 3, 4, 6, 3, 2, [2, 3], [1, 0], [1, 2], 2, [1, 1], True),
        (2, 2, 3, 3, 2, 2, 3, [2, 2], [1, 1], [1, 0], 1, [2, 1], False),
        (1, 2, 4, 3, 3, 3, 2, [1, 2], [0, 1], [1, 1], 1, [2, 2], True),  # output_padding >= stride
        (1, 2, 3, 3, 2, 2, 2, [1, 1], [2, 0], [1, 0], 1, [3, 1], True),  # ... and > padding
        (1, 6, 2, 3, 3, 1, 1, [3, 2], [0, 0], [2, 1], 3, [1, 1], True)]:
    inputs = {"x": randn(n, cin, h, w_), "w": randn(cin, cout // groups, kh, kw)}
    if bias:
        inputs["b"] = randn(cout)
    args = {"stride": stride, "padding": padding, "output_padding": out_pad, "groups": groups,
            "dilation": dilation}
    cases.append(run(f"conv_transpose2d {args} bias={bias}", "conv_transpose2d", args, inputs,
                     lambda x, w, b=None, a=args: F.conv_transpose2d(x, w, b, **a)))
inputs = {"x": randn(2, 3, 3), "w": randn(2, 2, 2, 2), "b": randn(2)}
args = {"stride": [2, 2], "padding": [0, 0], "output_padding": [1, 1], "groups": 1,
        "dilation": [1, 1]}
cases.append(run("conv_transpose2d unbatched", "conv_transpose2d", args, inputs,
                 lambda x, w, b, a=args: F.conv_transpose2d(x, w, b, **a)))

# interpolate: size or scale_factor, nearest or bilinear (align_corners both ways)
SHAPES = [(1, 2, 3, 4), (2, 1, 5, 3)]
RESIZES = [
    {"size": [6, 8]}, {"size": [5, 7]}, {"size": [2, 3]}, {"size": [1, 1]}, {"size": [3, 10]},
    {"scale_factor": [2.0, 2.0]}, {"scale_factor": [1.5, 1.7]}, {"scale_factor": [0.5, 0.7]},
    {"scale_factor": [1.2, 3.4]}, {"scale_factor": [1.0, 0.9]},
]
for shape in SHAPES:
    x = randn(*shape)
    for r in RESIZES:
        for mode, ac in [("nearest", None), ("bilinear", False), ("bilinear", True)]:
            args = dict(r, mode=mode, align_corners=ac)
            kw = {"size": r.get("size"), "scale_factor": r.get("scale_factor"), "mode": mode,
                  "align_corners": ac}
            case = run(f"interpolate {list(shape)} {args}", "interpolate", args, {"x": x},
                       lambda x, kw=kw: F.interpolate(x, **kw))
            # PyTorch's nearest backward keeps a dim whose output size is the input's (or
            # doubles it) whatever the factor, where its forward maps by the factor: there its
            # gradient is not the forward's, and the case checks the output only.
            sf = r.get("scale_factor")
            if mode == "nearest" and sf and any(
                    math.floor(n * f) in (n, 2 * n) and f != math.floor(n * f) / n
                    for n, f in zip(shape[2:], sf)):
                case["grads"] = {}
            cases.append(case)

# adaptive pools, any output size (a value repeated in a window: ties go to the first)
for shape, size in [((2, 2, 5, 7), [3, 4]), ((1, 3, 4, 6), [2, 3]), ((1, 1, 3, 5), [5, 2]),
                    ((2, 1, 7, 4), [1, 1]), ((1, 2, 6, 6), [4, 4]), ((3, 5, 4), [2, 3])]:
    x = randn(*shape)
    args = {"output_size": size}
    cases.append(run(f"adaptive_avg_pool2d {list(shape)} -> {size}", "adaptive_avg_pool2d",
                     args, {"x": x}, lambda x, s=size: F.adaptive_avg_pool2d(x, s)))
    cases.append(run(f"adaptive_max_pool2d {list(shape)} -> {size}", "adaptive_max_pool2d",
                     args, {"x": x},
                     lambda x, s=size: F.adaptive_max_pool2d(x, s, return_indices=True)))
ties = torch.tensor([[0., 5., 1.], [5., 0., 5.], [2., 5., 3.]], dtype=D).reshape(1, 1, 3, 3)
for size in [[2, 2], [1, 1], [3, 2]]:
    args = {"output_size": size}
    cases.append(run(f"adaptive_max_pool2d ties -> {size}", "adaptive_max_pool2d", args,
                     {"x": ties},
                     lambda x, s=size: F.adaptive_max_pool2d(x, s, return_indices=True)))

# max_pool2d with indices (the flat position h W + w of each window's first maximum), dilation,
# padding and ceil_mode; args as pairs.
for shape, k, st, p, d, ceil in [
        ((2, 2, 7, 8), [3, 3], [2, 2], [1, 1], [1, 1], False),
        ((2, 2, 7, 8), [3, 3], [1, 1], [1, 1], [2, 2], False),
        ((1, 3, 7, 7), [2, 2], [2, 2], [0, 0], [1, 1], True),
        ((1, 2, 9, 8), [3, 3], [2, 2], [1, 1], [2, 2], True),
        ((2, 1, 8, 6), [3, 2], [2, 1], [1, 0], [2, 1], False),
        ((2, 5, 5), [2, 2], [1, 1], [1, 1], [2, 2], False)]:
    args = {"kernel": k, "stride": st, "padding": p, "dilation": d, "ceil_mode": ceil}
    cases.append(run(f"max_pool2d_with_indices {list(shape)} {args}", "max_pool2d_with_indices",
                     args, {"x": randn(*shape)},
                     lambda x, a=args: F.max_pool2d(x, a["kernel"], a["stride"], a["padding"],
                                                    a["dilation"], a["ceil_mode"], True)))
args = {"kernel": [2, 2], "stride": [1, 1], "padding": [1, 1], "dilation": [1, 1],
        "ceil_mode": False}
cases.append(run("max_pool2d_with_indices ties", "max_pool2d_with_indices", args, {"x": ties},
                 lambda x: F.max_pool2d(x, 2, 1, 1, 1, False, True)))

out = {"torch": torch.__version__, "cases": cases}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spatial_cases.json")
with open(path, "w") as f:
    # One case a line, so that a regenerated file diffs case by case.
    f.write(f'{{"torch": {json.dumps(out["torch"])}, "cases": [\n')
    f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
    f.write("\n]}\n")
print(f"{len(cases)} cases -> {path}")
