#!/usr/bin/python3
"""Writes selection_cases.json next to this script: the ops whose result's shape depends on
values (nonzero, masked_select, indexing by a bool mask or an integer tensor, index_put, unique)
in PyTorch, in float64: the result, and for the differentiable ones the gradient of
(result * cot).sum() in each float input, for a seeded cot of the result's shape; or PyTorch's
error. tests/unit/frontend/selection_reference_test.cpp runs each case eagerly and lazily.

Run: /usr/bin/python3 tests/data/selection_cases.py (needs torch; the file records the version)."""
import json
import os

import torch


def t(v):
    return {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", ""),
            "values": v.detach().reshape(-1).tolist()}


def x0():
    return (torch.arange(12.0, dtype=torch.float64).reshape(3, 4) - 5).requires_grad_()


def mask0():
    return torch.tensor([[True, False, True, False], [False, False, False, False],
                         [True, True, False, True]])


def ids(v):
    return torch.tensor(v, dtype=torch.int64)


def f64(v):
    return torch.tensor(v, dtype=torch.float64)


# name: (function of the inputs, inputs); float inputs require grad.
CASES = {
    "nonzero_float": (lambda x: torch.nonzero(x), [x0()]),
    "nonzero_bool_3d": (lambda m: torch.nonzero(m),
                        [torch.tensor([[[True, False], [False, True]],
                                       [[False, False], [True, True]]])]),
    "nonzero_none": (lambda x: torch.nonzero(x), [torch.zeros(2, 3, dtype=torch.float64)]),
    "nonzero_scalar": (lambda x: torch.nonzero(x), [torch.tensor(3.0, dtype=torch.float64)]),
    "masked_select": (lambda x, m: torch.masked_select(x, m), [x0(), mask0()]),
    "masked_select_broadcast": (lambda x, m: torch.masked_select(x, m),
                                [x0(), torch.tensor([False, True, True, False])]),
    "masked_select_none": (lambda x, m: torch.masked_select(x, m),
                           [x0(), torch.zeros(3, 4, dtype=torch.bool)]),
    "index_mask_full": (lambda x, m: x[m], [x0(), mask0()]),
    "index_mask_rows": (lambda x, m: x[m], [x0(), torch.tensor([True, False, True])]),
    "index_mask_computed": (lambda x: x[x > 0], [x0()]),
    "index_ints": (lambda x, i: x[i], [x0(), ids([2, 0, 2])]),
    "index_ints_negative": (lambda x, i: x[i], [x0(), ids([-1, 1])]),
    "index_ints_2d": (lambda x, i: x[i], [x0(), ids([[0, 1], [2, 2]])]),
    "index_put_mask": (lambda x, m, v: x.index_put((m,), v),
                       [x0(), mask0(), torch.tensor(7.0, dtype=torch.float64).requires_grad_()]),
    "index_put_rows_broadcast": (lambda x, m, v: x.index_put((m,), v),
                                 [x0(), torch.tensor([False, True, True]),
                                  f64([1.0, 2.0, 3.0, 4.0]).requires_grad_()]),
    "index_put_ints": (lambda x, i, v: x.index_put((i,), v),
                       [x0(), ids([2, 0]),
                        torch.arange(8.0, dtype=torch.float64).reshape(2, 4).requires_grad_()]),
    "index_put_accumulate": (lambda x, i, v: x.index_put((i,), v, accumulate=True),
                             [x0(), ids([1, 1, -1]),
                              torch.ones(3, 4, dtype=torch.float64).requires_grad_()]),
    "unique_ints": (lambda x: torch.unique(x, return_inverse=True, return_counts=True),
                    [ids([[3, 1, 2], [3, -1, 1]])]),
    "unique_floats": (lambda x: torch.unique(x, return_inverse=True, return_counts=True),
                      [torch.tensor([2.5, -1.0, 2.5, 0.0, -0.0, 7.0], dtype=torch.float64)]),
    "unique_bool": (lambda x: torch.unique(x), [torch.tensor([True, True, False])]),
    "err_mask_shape": (lambda x, m: x[m], [x0(), torch.tensor([True, False])]),
    "err_masked_select_dtype": (lambda x, m: torch.masked_select(x, m), [x0(), ids([1, 0, 1, 0])]),
    "err_index_dtype": (lambda x, i: x[i], [x0(), torch.tensor([0.0, 1.0], dtype=torch.float64)]),
    "err_index_put_shape": (lambda x, i, v: x.index_put((i,), v),
                            [x0(), ids([0, 1]), torch.ones(3, 4, dtype=torch.float64)]),
}


def run(name, f, inputs):
    case = {"inputs": [t(i) for i in inputs]}
    try:
        out = f(*inputs)
    except Exception as e:
        case["error"] = str(e).split("\n")[0]
        return case
    outs = list(out) if isinstance(out, tuple) else [out]
    case["outs"] = [t(o) for o in outs]
    if outs[0].requires_grad:
        gen = torch.Generator().manual_seed(sum(map(ord, name)))
        cot = torch.randn(outs[0].shape, generator=gen, dtype=torch.float64)
        (outs[0] * cot).sum().backward()
        case["cot"] = t(cot)
        case["grads"] = [t(i.grad) if i.requires_grad else None for i in inputs]
    return case


def main():
    cases = {name: run(name, f, inputs) for name, (f, inputs) in CASES.items()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "selection_cases.json")
    with open(path, "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
