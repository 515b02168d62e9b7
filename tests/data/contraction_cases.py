#!/usr/bin/python3
"""Writes contraction_cases.json next to this script: einsum, diagonal, diag and trace in PyTorch
for each case, in float64: the operands (seeded normal values), the result, and each operand's
gradient of (result * cot).sum() for a seeded cot of the result's shape; or the error PyTorch
raises. tests/unit/frontend/contraction_reference_test.cpp runs each case eagerly and lazily.

Run: /usr/bin/python3 tests/data/contraction_cases.py (needs torch; the file records its
version)."""
import json
import os

import torch


def t(v):
    return {"shape": list(v.shape), "values": v.detach().reshape(-1).tolist()}


EINSUM = [
    ("matmul", "ij,jk->ik", [(2, 3), (3, 4)]),
    ("matmul_implicit", "ij,jk", [(2, 3), (3, 4)]),
    ("batched", "bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("attention_scores", "bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("attention_values", "bhqk,bhkd->bhqd", [(1, 2, 3, 5), (1, 2, 5, 4)]),
    ("dot", "i,i->", [(5,), (5,)]),
    ("outer", "i,j->ij", [(3,), (4,)]),
    ("diagonal", "ii->i", [(4, 4)]),
    ("trace", "ii", [(3, 3)]),
    ("repeated_three", "iij->ji", [(3, 3, 2)]),
    ("transpose", "ij->ji", [(2, 3)]),
    ("sum_all", "ij->", [(2, 3)]),
    ("sum_one", "ijk->ik", [(2, 3, 4)]),
    ("ellipsis_broadcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("ellipsis_implicit", "...ij,...jk", [(3, 2, 3), (3, 2)]),
    ("ellipsis_summed", "...i->i", [(2, 3, 4)]),
    ("ellipsis_middle", "a...b->b...a", [(2, 3, 4, 5)]),
    ("bilinear", "bn,anm,bm->ba", [(3, 2), (4, 2, 5), (3, 5)]),
    ("size_one_broadcast", "i,i->i", [(3,), (1,)]),
    ("size_one_contracted", "ij,jk->ik", [(2, 1), (3, 4)]),
    ("uppercase", "Ab,ba", [(2, 3), (3, 5)]),
    ("spaces", " ij , jk -> ik ", [(2, 3), (3, 2)]),
    ("hadamard", "ij,ij->ij", [(2, 3), (2, 3)]),
    ("three_chain", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("scalar", "", [()]),
    ("scalar_times", ",ij->ij", [(), (2, 2)]),
    ("batch_kept_contracted", "bi,bi->b", [(4, 3), (4, 3)]),
    ("err_fewer", "ij,jk->ik", [(2, 3)]),
    ("err_more", "ij->ij", [(2, 3), (2, 3)]),
    ("err_size", "ij,jk", [(3, 4), (3, 4)]),
    ("err_output_twice", "ij->ii", [(3, 4)]),
    ("err_output_unknown", "ij->ijk", [(3, 4)]),
    ("err_dims", "i->", [(3, 4)]),
    ("err_more_subscripts", "...ijk->i", [(3, 4)]),
    ("err_subscript", "i1", [(3, 4)]),
    ("err_repeated_size", "ii->", [(3, 4)]),
    ("err_dot", "..i->i", [(2, 3)]),
    ("err_ellipsis", "...i,...i", [(2, 3), (5, 3)]),
]

# (name, kind, shape, args): diagonal(x, *args), diag(x, *args), trace(x)
DIAGONAL = [
    ("diagonal_main", "diagonal", (3, 4), [0, 0, 1]),
    ("diagonal_above", "diagonal", (3, 4), [1, 0, 1]),
    ("diagonal_below", "diagonal", (3, 4), [-1, 0, 1]),
    ("diagonal_empty", "diagonal", (3, 4), [5, 0, 1]),
    ("diagonal_dims", "diagonal", (3, 4, 5), [1, 0, 2]),
    ("diagonal_swapped", "diagonal", (3, 4, 5), [-1, 2, 0]),
    ("diagonal_negative_dims", "diagonal", (2, 3, 3), [0, -2, -1]),
    ("diag_vector", "diag", (3,), [0]),
    ("diag_vector_above", "diag", (3,), [1]),
    ("diag_vector_below", "diag", (2,), [-2]),
    ("diag_matrix", "diag", (3, 4), [1]),
    ("trace", "trace", (3, 4), []),
    ("err_diagonal_same", "diagonal", (3, 4), [0, 1, 1]),
    ("err_diagonal_rank", "diagonal", (3,), [0, 0, 1]),
    ("err_diag_rank", "diag", (2, 2, 2), [0]),
    ("err_trace_rank", "trace", (2, 2, 2), []),
]


def run(name, f, shapes):
    gen = torch.Generator().manual_seed(sum(map(ord, name)))
    ops = [torch.randn(s, generator=gen, dtype=torch.float64).requires_grad_() for s in shapes]
    case = {"name": name, "operands": [t(o) for o in ops]}
    try:
        out = f(*ops)
    except Exception as e:  # the message lazytrain must give
        case["error"] = str(e).split("\n")[0]
        return case
    cot = torch.randn(out.shape, generator=gen, dtype=torch.float64)
    (out * cot).sum().backward()
    case["out"] = t(out)
    case["cot"] = t(cot)
    case["grads"] = [t(o.grad) if o.grad is not None else None for o in ops]
    return case


def main():
    cases = []
    for name, eq, shapes in EINSUM:
        c = run("einsum_" + name, lambda *o, eq=eq: torch.einsum(eq, *o), shapes)
        c["equation"] = eq
        cases.append(c)
    for name, kind, shape, args in DIAGONAL:
        f = getattr(torch, kind)
        c = run(name, lambda x, f=f, args=args: f(x, *args), [shape])
        c["kind"], c["args"] = kind, args
        cases.append(c)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "contraction_cases.json")
    with open(path, "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
