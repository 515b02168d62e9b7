#!/usr/bin/python3
"""Writes rnn_attention_cases.json next to this script: torch.nn.LSTM, torch.nn.GRU and
torch.nn.MultiheadAttention on fixed float64 inputs. Each case holds the module's arguments, its
weights by state_dict name (drawn by PyTorch's own initialization from a fixed seed), the inputs,
the outputs, a cotangent per output and the gradients of sum(output * cotangent) over all outputs
with respect to every float input and every parameter.
tests/unit/nn/rnn_attention_reference_test.cpp runs every case through lazytrain.

Run: /usr/bin/python3 tests/data/rnn_attention_cases.py (needs torch; the file records the
version)."""
import json
import os

import torch

torch.manual_seed(20261203)
D = torch.float64


def tensor_json(t):
    out = {"shape": list(t.shape), "values": t.detach().reshape(-1).double().tolist()}
    if t.dtype == torch.bool:
        out["dtype"] = "bool"
    return out


def randn(*shape):
    return torch.randn(shape, dtype=D)


def finish(name, kind, args, module, inputs, outputs, leaves):
    """outputs: name -> tensor (None: not returned); leaves: name -> input that gets a gradient."""
    cots = {k: randn(*v.shape) for k, v in outputs.items() if v is not None}
    loss = sum((outputs[k] * c).sum() for k, c in cots.items())
    loss.backward()
    grads = {"input." + k: tensor_json(v.grad) for k, v in leaves.items()}
    for k, p in module.named_parameters():
        grads["param." + k] = tensor_json(p.grad)
    return {"name": name, "module": kind, "args": args,
            "state": {k: tensor_json(v) for k, v in module.state_dict().items()},
            "inputs": {k: tensor_json(v) for k, v in inputs.items() if v is not None},
            "outputs": {k: tensor_json(v) for k, v in outputs.items() if v is not None},
            "cotangents": {k: tensor_json(c) for k, c in cots.items()}, "grads": grads}


def rnn_case(name, kind, input_size, hidden_size, x_shape, with_state, **kw):
    cls = torch.nn.LSTM if kind == "LSTM" else torch.nn.GRU
    m = cls(input_size, hidden_size, **kw).double()
    x = randn(*x_shape).requires_grad_()
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional", False) else 1)
    batched = len(x_shape) == 3
    n = (x_shape[0] if kw.get("batch_first", False) else x_shape[1]) if batched else None
    state_shape = (layers, n, hidden_size) if batched else (layers, hidden_size)
    inputs, leaves = {"x": x}, {"x": x}
    if with_state:
        leaves["h0"] = inputs["h0"] = randn(*state_shape).requires_grad_()
        if kind == "LSTM":
            leaves["c0"] = inputs["c0"] = randn(*state_shape).requires_grad_()
    if kind == "LSTM":
        out, (h, c) = m(x, (inputs["h0"], inputs["c0"]) if with_state else None)
        outputs = {"output": out, "h_n": h, "c_n": c}
    else:
        out, h = m(x, inputs.get("h0"))
        outputs = {"output": out, "h_n": h}
    args = dict(kw, input_size=input_size, hidden_size=hidden_size)
    return finish(name, kind, args, m, inputs, outputs, leaves)


def mha_case(name, e, h, q_shape, s, self_attention=False, kpm=None, attn_mask=None,
             need_weights=True, average_attn_weights=True, **kw):
    """kpm, attn_mask: functions of (n, l, s) giving the mask, or None."""
    m = torch.nn.MultiheadAttention(e, h, **kw).double()
    # PyTorch zeroes the biases: give them values, so that their use is checked too.
    with torch.no_grad():
        for k, p in m.named_parameters():
            if "bias" in k:
                p.copy_(torch.randn(p.shape, dtype=D) * 0.3)
    batched = len(q_shape) == 3
    bf = kw.get("batch_first", False)
    l = q_shape[1 if bf else 0] if batched else q_shape[0]
    n = q_shape[0 if bf else 1] if batched else 1
    kdim, vdim = kw.get("kdim") or e, kw.get("vdim") or e

    def seq_shape(length, feat):
        if not batched:
            return (length, feat)
        return (n, length, feat) if bf else (length, n, feat)
    q = randn(*q_shape).requires_grad_()
    inputs, leaves = {"query": q}, {"query": q}
    if self_attention:
        k = v = q
    else:
        k = randn(*seq_shape(s, kdim)).requires_grad_()
        v = randn(*seq_shape(s, vdim)).requires_grad_()
        inputs.update(key=k, value=v)
        leaves.update(key=k, value=v)
    mask_k = kpm(n, l, s) if kpm else None
    if mask_k is not None and not batched:
        mask_k = mask_k[0]
    mask_a = attn_mask(n, l, s) if attn_mask else None
    inputs["key_padding_mask"], inputs["attn_mask"] = mask_k, mask_a
    out, w = m(q, k, v, key_padding_mask=mask_k, need_weights=need_weights, attn_mask=mask_a,
               average_attn_weights=average_attn_weights)
    args = dict(kw, embed_dim=e, num_heads=h, self_attention=self_attention,
                need_weights=need_weights, average_attn_weights=average_attn_weights)
    return finish(name, "MultiheadAttention", args, m, inputs,
                  {"attn_output": out, "attn_weights": w}, leaves)


def pad_mask(n, l, s):
    """Key padding: sample b ignores its last b keys (never all)."""
    return torch.arange(s).expand(n, s) >= (s - torch.arange(n)).unsqueeze(1)


def causal_bool(n, l, s):
    return torch.ones(l, s, dtype=torch.bool).triu(1 + s - l)


cases = [
    rnn_case("LSTM 2 layers bidirectional batch_first", "LSTM", 3, 4, (2, 5, 3), False,
             num_layers=2, bidirectional=True, batch_first=True, dropout=0.0),
    rnn_case("LSTM 2 layers bidirectional batch_first initial state", "LSTM", 3, 4, (2, 5, 3),
             True, num_layers=2, bidirectional=True, batch_first=True, dropout=0.0),
    rnn_case("LSTM 1 layer no bias initial state", "LSTM", 4, 3, (6, 3, 4), True, bias=False),
    rnn_case("LSTM unbatched bidirectional initial state", "LSTM", 3, 2, (4, 3), True,
             bidirectional=True),
    rnn_case("LSTM unbatched batch_first", "LSTM", 3, 2, (4, 3), False, batch_first=True),
    rnn_case("GRU 1 layer", "GRU", 3, 4, (5, 2, 3), False),
    rnn_case("GRU 1 layer initial state", "GRU", 3, 4, (5, 2, 3), True),
    rnn_case("GRU 2 layers", "GRU", 3, 4, (4, 3, 3), False, num_layers=2),
    rnn_case("GRU 2 layers bidirectional batch_first initial state", "GRU", 2, 3, (2, 4, 2), True,
             num_layers=2, bidirectional=True, batch_first=True),
    rnn_case("GRU unbatched initial state", "GRU", 3, 4, (5, 3), True),
    rnn_case("GRU unbatched 2 layers", "GRU", 3, 2, (3, 3), False, num_layers=2),
    mha_case("MHA self-attention", 8, 2, (4, 3, 8), 4, self_attention=True),
    mha_case("MHA key_padding_mask", 8, 2, (3, 3, 8), 5, kpm=pad_mask),
    mha_case("MHA bool attn_mask and key_padding_mask", 8, 4, (4, 2, 8), 5, kpm=pad_mask,
             attn_mask=causal_bool),
    mha_case("MHA bool attn_mask self-attention", 6, 3, (5, 2, 6), 5, self_attention=True,
             attn_mask=causal_bool),
    mha_case("MHA float attn_mask 2-D", 8, 2, (3, 2, 8), 4,
             attn_mask=lambda n, l, s: torch.randn(l, s, dtype=D)),
    mha_case("MHA float attn_mask 3-D and bool key_padding_mask", 8, 2, (3, 3, 8), 4,
             kpm=pad_mask, attn_mask=lambda n, l, s: torch.randn(n * 2, l, s, dtype=D)),
    mha_case("MHA float key_padding_mask", 8, 2, (3, 2, 8), 4,
             kpm=lambda n, l, s: torch.randn(n, s, dtype=D)),
    mha_case("MHA kdim vdim batch_first", 8, 2, (2, 3, 8), 4, kdim=5, vdim=6, batch_first=True,
             kpm=pad_mask),
    mha_case("MHA kdim vdim need_weights false", 8, 2, (3, 2, 8), 4, kdim=5, vdim=6,
             need_weights=False),
    mha_case("MHA per-head weights", 8, 2, (3, 2, 8), 4, average_attn_weights=False),
    mha_case("MHA no bias need_weights false", 8, 4, (3, 2, 8), 4, bias=False,
             need_weights=False),
    mha_case("MHA unbatched key_padding_mask", 8, 2, (3, 8), 4, kpm=pad_mask,
             attn_mask=lambda n, l, s: torch.randn(2, l, s, dtype=D)),
    mha_case("MHA batch_first self-attention", 8, 2, (2, 4, 8), 4, self_attention=True,
             batch_first=True),
]

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rnn_attention_cases.json")
with open(path, "w") as f:
    json.dump({"torch": torch.__version__, "cases": cases}, f)
    f.write("\n")
print(f"{len(cases)} cases -> {path}")
