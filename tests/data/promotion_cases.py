#!/usr/bin/python3
"""Writes promotion_cases.json next to this script: PyTorch's result dtype and values (or its
error) for binary ops over every dtype pair, C++-number and 0-d operands, where, sum and mean,
in-place ops, the unary ops over every dtype, pow and fmod, the rounding ops, prod and the
reductions of f16 and bf16, clamp's bounds, cat and stack of mixed dtypes, and matmul's refusal
of them and its integer form. tests/unit/frontend/promotion_test.cpp runs every case through lazytrain.

Run: /usr/bin/python3 tests/data/promotion_cases.py (needs torch; the file records the version)."""
import json
import os

import torch

DTYPES = {
    "f32": torch.float32, "f64": torch.float64, "bf16": torch.bfloat16, "f16": torch.float16,
    "i64": torch.int64, "i32": torch.int32, "bool": torch.bool,
}
NAMES = {v: k for k, v in DTYPES.items()}

# Values every dtype holds exactly (bf16 keeps 8 significant bits); a float operand of 0.1 shows
# whether the f32 or the f64 value of it was used.
VALUES = {
    "f32": [1.5, -2.25, 0.1], "f64": [0.75, 3.0, 0.1], "bf16": [2.5, -1.0, 0.375],
    "f16": [-0.5, 1.25, 6.0], "i64": [3, -7, 2], "i32": [-4, 5, 1], "bool": [True, False, True],
}
# Divisors without zeros, so that integer operands divide.
DIVISORS = {
    "f32": [2.0, -0.5, 3.0], "f64": [4.0, 0.3, -8.0], "bf16": [0.5, 3.0, -2.0],
    "f16": [2.0, -4.0, 0.25], "i64": [2, -3, 5], "i32": [-2, 4, 3], "bool": [True, True, True],
}
COND = [True, False, True]
# Transcendental results are compared to a few units in the last place of their dtype.
RTOL = {"f32": 1e-6, "f64": 1e-13, "bf16": 8e-3, "f16": 1e-3}

BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
    "maximum": torch.maximum, "minimum": torch.minimum, "eq": torch.eq, "ne": torch.ne,
    "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge,
}
# The ops lazytrain takes a C++ number for (operators + - * / < <= > >= and where).
SCALAR_OPS = ["add", "sub", "mul", "div", "lt", "le", "gt", "ge"]


def tensor(dt, values):
    return torch.tensor(values, dtype=DTYPES[dt])


def operand(kind, dt, values):
    """A case operand: a tensor, a 0-d tensor or a Python number (kind int, float, bool)."""
    return {"kind": kind, "dtype": dt, "values": values}


def torch_operand(o):
    if o["kind"] == "tensor":
        return tensor(o["dtype"], o["values"])
    if o["kind"] == "zero_dim":
        return torch.tensor(o["values"][0], dtype=DTYPES[o["dtype"]])
    return {"int": int, "float": float, "bool": bool}[o["kind"]](o["values"][0])


def outcome(fn):
    try:
        r = fn()
    except RuntimeError as e:
        # A kernel PyTorch lacks for a dtype names that kernel ("GeluKernelImpl" not implemented
        # for 'Long'): lazytrain must refuse too, in its own words.
        if "not implemented for" in str(e):
            return {"refused": True}
        return {"error": str(e)}
    flat = r.reshape(-1)  # the values in row-major order, whatever the shape
    vals = flat.double().tolist() if r.dtype != torch.bool else flat.tolist()
    return {"dtype": NAMES[r.dtype], "values": vals}


cases = []


def add_case(op, operands, fn):
    cases.append({"op": op, "operands": operands, **outcome(fn)})


def binary(op, a, b):
    ta, tb = torch_operand(a), torch_operand(b)
    if op in BINARY:
        add_case(op, [a, b], lambda: BINARY[op](ta, tb))
    else:  # in place: the first operand is updated
        add_case(op, [a, b], lambda: getattr(ta.clone(), op)(tb))


def num(kind, v):
    return operand(kind, {"int": "i64", "float": "f64", "bool": "bool"}[kind], [v])


# Every op over every pair of tensor dtypes.
for op in BINARY:
    for x in DTYPES:
        for y in DTYPES:
            right = DIVISORS[y] if op == "div" else VALUES[y]
            binary(op, operand("tensor", x, VALUES[x]), operand("tensor", y, right))

# C++ numbers on either side: a number promotes only across categories.
for op in SCALAR_OPS:
    for x in DTYPES:
        for kind, v in [("int", 3), ("float", 2.5), ("float", 0.1), ("bool", True)]:
            binary(op, operand("tensor", x, VALUES[x]), num(kind, v))
            if op in ("add", "sub", "mul", "div"):
                left = DIVISORS[x] if op == "div" else VALUES[x]
                ta = torch_operand(num(kind, v))
                tb = tensor(x, left)
                add_case(op, [num(kind, v), operand("tensor", x, left)],
                         lambda ta=ta, tb=tb: BINARY[op](ta, tb))

# 0-d tensors: like numbers, but with their own dtype within a category.
for op in ["add", "mul", "div", "lt"]:
    for x in DTYPES:
        for y in DTYPES:
            right = DIVISORS[y][:1] if op == "div" else VALUES[y][:1]
            binary(op, operand("tensor", x, VALUES[x]), operand("zero_dim", y, right))
# Two 0-d tensors, and a 0-d tensor with a number.
for x in DTYPES:
    for y in DTYPES:
        binary("add", operand("zero_dim", x, VALUES[x][:1]), operand("zero_dim", y, VALUES[y][:1]))
    for kind, v in [("int", 3), ("float", 2.5)]:
        binary("mul", operand("zero_dim", x, VALUES[x][:1]), num(kind, v))

# where: the branches promote like a binary op; the condition stays bool.
cond = operand("tensor", "bool", COND)
for x in DTYPES:
    for y in DTYPES:
        a, b = operand("tensor", x, VALUES[x]), operand("tensor", y, VALUES[y])
        add_case("where", [cond, a, b],
                 lambda a=a, b=b: torch.where(tensor("bool", COND), torch_operand(a),
                                              torch_operand(b)))
    for kind, v in [("int", 3), ("float", 0.5), ("bool", False)]:
        a, s = operand("tensor", x, VALUES[x]), num(kind, v)
        add_case("where", [cond, a, s],
                 lambda a=a, s=s: torch.where(tensor("bool", COND), torch_operand(a),
                                              torch_operand(s)))
        add_case("where", [cond, s, a],
                 lambda a=a, s=s: torch.where(tensor("bool", COND), torch_operand(s),
                                              torch_operand(a)))

# Reductions: sum of bool and integers is i64; mean takes floats only. Float values whose sums
# are exact, so that the order of summation does not matter.
SUMMABLE = {"f32": [1.5, -2.25, 3.0], "f64": [0.75, 3.0, -6.5]}
for x in ["bool", "i32", "i64", "f32", "f64"]:
    t = operand("tensor", x, SUMMABLE.get(x, VALUES[x]))
    add_case("sum", [t], lambda t=t: torch.sum(torch_operand(t)))
    add_case("mean", [t], lambda t=t: torch.mean(torch_operand(t)))

# In place: the result is cast back to the tensor's dtype when it can be, else refused.
for op in ["add_", "sub_", "mul_"]:
    for x in DTYPES:
        for y in DTYPES:
            binary(op, operand("tensor", x, VALUES[x]), operand("tensor", y, VALUES[y]))
for op in ["add_", "mul_"]:
    for x in DTYPES:
        for kind, v in [("int", 3), ("float", 0.5), ("bool", True)]:
            binary(op, operand("tensor", x, VALUES[x]), num(kind, v))

# Unary ops: the float-only ones read integers and bool as f32; f16 and bf16 keep their dtype.
# Values inside every op's domain; bool without False where the op has a pole at 0.
UNARY = {
    "exp": torch.exp, "expm1": torch.expm1, "log": torch.log, "log1p": torch.log1p,
    "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "sin": torch.sin, "cos": torch.cos, "reciprocal": torch.reciprocal, "erf": torch.erf,
    "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu, "relu": torch.relu,
    "abs": torch.abs, "neg": torch.neg, "isfinite": torch.isfinite,
}
POSITIVE = {
    "f32": [1.5, 0.25, 3.0], "f64": [0.75, 3.0, 0.1], "bf16": [2.5, 1.0, 0.375],
    "f16": [0.5, 1.25, 6.0], "i64": [3, 7, 2], "i32": [4, 5, 1], "bool": [True, False, True],
}
POLE_AT_ZERO = {"log", "rsqrt", "reciprocal"}
for op, fn in UNARY.items():
    for x in DTYPES:
        vals = [True, True, True] if (x == "bool" and op in POLE_AT_ZERO) else POSITIVE[x]
        a = operand("tensor", x, vals)
        if x == "f16":
            # PyTorch 1.13's CPU kernels lack f16 for most of these (its CUDA ones compute in
            # f32 and round): the f32 result rounded to f16 is the reference.
            case = outcome(lambda fn=fn, a=a: fn(torch_operand(a).float()).half()
                           if fn(torch_operand(a).float()).dtype == torch.float32
                           else fn(torch_operand(a).float()))
        else:
            case = outcome(lambda fn=fn, a=a: fn(torch_operand(a)))
        if "dtype" in case and case["dtype"] in RTOL and op not in ("relu", "abs", "neg"):
            case["rtol"] = RTOL[case["dtype"]]
        cases.append({"op": op, "operands": [a], **case})

# pow, fmod over every pair: exponents integral where the base may be negative (no NaN), and
# negative integer exponents of integer bases (PyTorch's powi: 0 but for bases 1 and -1).
EXPONENTS = {
    "f32": [3.0, 2.0, 1.5], "f64": [-2.0, 2.0, 0.5], "bf16": [2.0, 3.0, 0.5],
    "f16": [1.0, 2.0, 0.5], "i64": [2, 3, -1], "i32": [3, 0, 2], "bool": [True, False, True],
}
BINARY.update({"pow": torch.pow, "fmod": torch.fmod})
for x in DTYPES:
    for y in DTYPES:
        binary("pow", operand("tensor", x, VALUES[x]), operand("tensor", y, EXPONENTS[y]))
        binary("fmod", operand("tensor", x, VALUES[x]), operand("tensor", y, DIVISORS[y]))
for x in DTYPES:
    for kind, v in [("int", 2), ("int", 0), ("int", -1), ("float", 2.0), ("float", 0.5)]:
        base = [abs(b) for b in VALUES[x]] if kind == "float" else VALUES[x]
        binary("pow", operand("tensor", x, base), num(kind, v))
    for kind, v in [("int", 2), ("int", -3), ("float", 1.5)]:
        binary("fmod", operand("tensor", x, VALUES[x]), num(kind, v))
# A float pow is libm's (or a vectorized one, compiled) where PyTorch special-cases some
# exponents (sqrt for 0.5, a reciprocal for -1): a few units in the last place.
for c in cases:
    if c["op"] == "pow" and c.get("dtype") in RTOL:
        c["rtol"] = RTOL[c["dtype"]]


def low_via_f32(fn, operands):
    """fn on the operands, or where PyTorch 1.13's CPU lacks the f16/bf16 kernel, on them in f32
    rounded back (what its CUDA kernels and lazytrain compute)."""
    low = [o for o in operands if o["kind"] == "tensor" and o["dtype"] in ("f16", "bf16")]
    case = outcome(lambda: fn(*[torch_operand(o) for o in operands]))
    if "refused" not in case or not low:
        return case
    dt = DTYPES[low[0]["dtype"]]
    wide = [torch_operand(o).float() if o in low else torch_operand(o) for o in operands]
    return outcome(lambda: fn(*wide).to(dt))


def add_low_case(op, operands, fn):
    cases.append({"op": op, "operands": operands, **low_via_f32(fn, operands)})


# The rounding ops keep integers, refuse bool.
for op in ["floor", "ceil", "round", "trunc"]:
    for x in DTYPES:
        add_low_case(op, [operand("tensor", x, VALUES[x])], getattr(torch, op))

# prod (bool and integers in i64) and the reductions of f16 and bf16 (in f32, rounded once).
PRODUCTS = {"f32": [1.5, -2.25, 3.0], "f64": [0.75, 3.0, -6.5], "bf16": [2.5, -1.0, 0.375],
            "f16": [-0.5, 1.25, 6.0]}
for x in DTYPES:
    add_low_case("prod", [operand("tensor", x, PRODUCTS.get(x, VALUES[x]))], torch.prod)
for x in ["bf16", "f16"]:
    for op in ["sum", "mean", "max", "min"]:
        add_low_case(op, [operand("tensor", x, PRODUCTS[x])], getattr(torch, op))

# clamp's bounds promote with the tensor as numbers do; clamp_ refuses a higher category (its
# message names the dtype by its C++ name, "long int", where add_'s says "Long": the case keeps
# the words before the name).
for x in DTYPES:
    a = operand("tensor", x, VALUES[x])
    for kind, v in [("int", 0), ("float", 0.5)]:
        add_low_case("clamp_min", [a, num(kind, v)], lambda t, v: torch.clamp(t, min=v))
        add_low_case("clamp_max", [a, num(kind, v)], lambda t, v: torch.clamp(t, max=v))
    for lo, hi in [(("int", -1), ("int", 2)), (("int", -1), ("float", 1.5)),
                   (("float", -1.0), ("float", 1.5))]:
        bounds = [num(*lo), num(*hi)]
        add_low_case("clamp", [a] + bounds, torch.clamp)
        case = low_via_f32(lambda t, lo, hi: t.clone().clamp_(lo, hi), [a] + bounds)
        if "error" in case:
            case["error"] = case["error"][:case["error"].index("output type") + len("output type")]
        cases.append({"op": "clamp_", "operands": [a] + bounds, **case})

# matmul of integers (PyTorch's CPU kernel wraps); bool has none.
for x in ["i64", "i32", "bool"]:
    a = operand("matrix", x, VALUES[x][:2] * 2)
    b = operand("matrix", x, VALUES[x][1:] * 2)
    add_case("matmul", [a, b], lambda a=a, b=b: torch.matmul(
        tensor(a["dtype"], a["values"]).reshape(2, 2), tensor(b["dtype"], b["values"]).reshape(2, 2)))

# cat and stack promote all their operands together (none is 0-d).
for op, fn in [("cat", torch.cat), ("stack", torch.stack)]:
    for x in DTYPES:
        for y in DTYPES:
            if op == "stack" and x > y:
                continue
            a, b = operand("tensor", x, VALUES[x]), operand("tensor", y, VALUES[y])
            add_case(op, [a, b], lambda fn=fn, a=a, b=b: fn([torch_operand(a), torch_operand(b)]))
for trio in [("i64", "f32", "bool"), ("bool", "i32", "i64"), ("bf16", "f16", "bf16"),
             ("f32", "bf16", "f64")]:
    ops3 = [operand("tensor", d, VALUES[d]) for d in trio]
    add_case("cat", ops3, lambda ops3=ops3: torch.cat([torch_operand(o) for o in ops3]))

# matmul refuses mixed dtypes, as PyTorch's library ops do.
for x, y in [("f32", "f64"), ("f64", "f32"), ("bf16", "f32"), ("f32", "bf16"), ("f64", "bf16")]:
    a = operand("matrix", x, VALUES[x][:2] * 2)
    b = operand("matrix", y, VALUES[y][:2] * 2)
    add_case("matmul", [a, b], lambda a=a, b=b: torch.matmul(
        tensor(a["dtype"], a["values"]).reshape(2, 2), tensor(b["dtype"], b["values"]).reshape(2, 2)))

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "promotion_cases.json")
with open(out, "w") as f:  # one case a line, so that a change shows as the cases it changes
    f.write('{"torch": %s, "cases": [\n' % json.dumps(torch.__version__))
    f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
    f.write("\n]}\n")
print(f"{len(cases)} cases -> {out}")
