#!/usr/bin/python3
"""Writes view_cases.json next to this script: for each small program that writes through views
(or reads a base through them), the values PyTorch gives, or its error. Every program starts
from x = torch.arange(12.).reshape(3, 4) in float64 (and w, a leaf that requires grad, with the
same values, for the autograd cases). tests/unit/frontend/views_test.cpp runs the same programs,
by name, eagerly and lazily.

Run: /usr/bin/python3 tests/data/view_cases.py (needs torch; the file records the version)."""
import json
import os

import torch


def x0():
    return torch.arange(12.0, dtype=torch.float64).reshape(3, 4)


def w0():
    return x0().requires_grad_()


def t(v):
    return {"shape": list(v.shape), "values": v.detach().reshape(-1).tolist()}


def slice_zero():
    x = x0()
    x[0:2].zero_()
    return {"x": x}


def reshape_mul():
    x = x0()
    x.reshape(12).mul_(2)
    return {"x": x}


def select_fill():
    x = x0()
    x.select(1, 2).fill_(7)
    return {"x": x}


def transpose_add():
    x = x0()
    x.t().add_(torch.arange(12.0, dtype=torch.float64).reshape(4, 3))
    return {"x": x}


def expand_clone():
    x = x0()
    y = x[0:1].expand(3, 4).clone()
    y.zero_()
    return {"x": x, "y": y}


def chain_of_two():
    x = x0()
    x.t()[1:3].mul_(10)
    return {"x": x}


def slice_steps():
    x = x0()
    x[:, ::2].copy_(-torch.ones(3, 2, dtype=torch.float64))
    x[::2, 1::2].add_(100)
    return {"x": x}


def base_write_seen():
    x = x0()
    v = x[1]
    t_ = x.t()
    x.add_(100)
    return {"v": v, "t": t_}


def siblings():
    x = x0()
    a = x[0:2]
    b = x[1:3]
    a.fill_(5)
    return {"b": b, "x": x}


def chunk_unbind():
    x = x0()
    c = x.chunk(2, 1)
    c[1].zero_()
    rows = x.unbind(0)
    rows[2].mul_(-1)
    parts = x.split(1, 0)
    parts[0].add_(0.5)
    return {"x": x, "c0": c[0]}


def narrow_masked_fill():
    x = x0()
    mask = torch.tensor([[True, False], [False, True], [True, True]])
    x.narrow(1, 1, 2).masked_fill_(mask, -1)
    return {"x": x}


def flat_clamp():
    x = x0()
    x.view(-1)[2:9].clamp_(3, 6)
    return {"x": x}


def noncontiguous_reshape_copies():
    x = x0()
    y = x.t().reshape(12)
    y.zero_()
    z = x.t().flatten()
    z.add_(1)
    return {"x": x, "y": y, "z": z}


def view_error():
    x = x0()
    try:
        x.t().view(12)
    except RuntimeError as e:
        return {"error": str(e)}
    return {}


def contiguous_alias_or_copy():
    x = x0()
    x.contiguous().add_(1)
    x.t().contiguous().zero_()
    return {"x": x}


def detach_writes():
    x = x0()
    x.detach().mul_(3)
    return {"x": x}


def index_ops_through_view():
    x = x0()
    x[1:3].index_add_(1, torch.tensor([0, 3]), torch.ones(2, 2, dtype=torch.float64))
    x[0].scatter_(0, torch.tensor([1, 2]), torch.tensor([-5.0, -6.0], dtype=torch.float64))
    return {"x": x}


def squeeze_unsqueeze():
    x = x0()
    x.unsqueeze(0).squeeze(0)[2].zero_()
    x.unsqueeze(2)[0].sub_(1)
    return {"x": x}


def permuted_3d():
    z = torch.arange(24.0, dtype=torch.float64).reshape(2, 3, 4)
    z.permute(2, 0, 1)[1:3, :, 0].fill_(-1)
    z.transpose(0, 1).reshape(3, 8).add_(1000)  # a copy: z unchanged by this line
    z.transpose(1, 2)[0].reshape(12).mul_(0)     # a copy too
    z[1].transpose(0, 1).reshape(12)             # (reading only)
    return {"z": z}


def grad_through_view_write():
    w = w0()
    x = w * 1
    x[0:2].mul_(3)
    (x * x).sum().backward()
    return {"x": x, "grad": w.grad}


def grad_copy_into_view():
    w = w0()
    x = w * 2
    x[1].copy_(torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64))
    (x * x).sum().backward()
    return {"x": x, "grad": w.grad}


def grad_view_of_written_base():
    w = w0()
    x = w * 1
    v = x[:, 1]
    x.mul_(2)
    (v * v).sum().backward()
    return {"v": v, "grad": w.grad}


def grad_value_into_view():
    w = w0()
    x = torch.zeros(3, 4, dtype=torch.float64)
    x[0:2].copy_(w[1:3] * w[1:3])
    x.sum().backward()
    return {"x": x, "grad": w.grad}


def version_error_view_saved():
    w = w0()
    x = w * 1
    v = x[0:2]
    y = v * v
    x.zero_()
    try:
        y.sum().backward()
    except RuntimeError as e:
        return {"error": str(e)}
    return {}


def version_error_result_saved():
    w = w0()
    y = (w * 1).exp()
    y.add_(1)
    try:
        y.sum().backward()
    except RuntimeError as e:
        return {"error": str(e)}
    return {}


def inplace_own_operand_fine():
    w = w0()
    u = torch.full((3, 4), 0.5, dtype=torch.float64, requires_grad=True)
    x = w * 1
    x.mul_(u)
    b = x + 1
    x.zero_()  # b's add saved nothing
    (b * b).sum().backward()
    return {"grad": w.grad, "grad_u": u.grad}


def leaf_view_error():
    w = w0()
    try:
        w[0].zero_()
    except RuntimeError as e:
        return {"error": str(e)}
    return {}


def expand_write_error():
    x = x0()
    try:
        x[0:1].expand(3, 4).add_(1)
    except RuntimeError as e:
        return {"error": str(e)}
    return {}


def expand_without_repeats_writes():
    x = x0()
    x[1].expand(1, 4).mul_(2)
    x[0:1].expand(1, 1, 4)[0].sub_(1)
    return {"x": x}


def write_through_slice_of_expand():
    x = x0()
    e = x[0:1].expand(3, 4)
    e[1:2].add_(1)
    x[:, 0].unsqueeze(1).expand(3, 5)[:, 2:3].mul_(10)
    x[2].expand(2, 4).t()[1:3, 1].sub_(100)
    return {"x": x, "e": e}


def grad_through_slice_of_expand():
    w = w0()
    x = w * 1
    x[0:1].expand(3, 4)[2].mul_(w[1] + 1)
    (x * x).sum().backward()
    return {"x": x, "grad": w.grad}


def diagonal_fill():
    x = x0()
    x.diagonal().fill_(-1)
    x.diagonal(1).add_(100)
    x.t().diagonal(-2).mul_(0)
    return {"x": x}


def diagonal_sees_base():
    x = x0()
    d = x.diagonal(-1)
    x[2].zero_()
    z = torch.arange(24.0, dtype=torch.float64).reshape(2, 3, 4)
    e = z.diagonal(0, 2, 0)
    e.sub_(1000)
    return {"d": d, "z": z, "e": e}


def grad_through_diagonal_write():
    w = w0()
    x = w * 1
    x.diagonal(1).mul_(w.diagonal() + 1)
    (x * x).sum().backward()
    return {"x": x, "grad": w.grad}


CASES = [slice_zero, reshape_mul, select_fill, transpose_add, expand_clone, chain_of_two,
         slice_steps, base_write_seen, siblings, chunk_unbind, narrow_masked_fill, flat_clamp,
         noncontiguous_reshape_copies, view_error, contiguous_alias_or_copy, detach_writes,
         index_ops_through_view, squeeze_unsqueeze, permuted_3d, grad_through_view_write,
         grad_copy_into_view, grad_view_of_written_base, grad_value_into_view,
         version_error_view_saved, version_error_result_saved, inplace_own_operand_fine,
         leaf_view_error, expand_write_error, expand_without_repeats_writes,
         write_through_slice_of_expand, grad_through_slice_of_expand,
         diagonal_fill, diagonal_sees_base,
         grad_through_diagonal_write]


def main():
    out = {"torch": torch.__version__, "cases": {}}
    for case in CASES:
        r = case()
        out["cases"][case.__name__] = {k: (v if k == "error" else t(v)) for k, v in r.items()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "view_cases.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
