"""SGD, Adam and AdamW step for step against torch.optim, eagerly and lazily, with param_groups
that a user edits between steps."""
import numpy as np
import pytest
import torch

import lazytrain as lt
from conftest import assert_close


def _run(opt_name, kwargs, steps=4, lr_schedule=None):
    rng = np.random.default_rng(0)
    w0, b0 = rng.standard_normal((3, 4)), rng.standard_normal(3)
    x, y = rng.standard_normal((5, 4)), rng.standard_normal((5, 3))
    out = {}
    for m in (torch, lt):
        w = m.nn.Parameter(m.tensor(w0))
        b = m.nn.Parameter(m.tensor(b0))
        opt = getattr(m.optim, opt_name)([{"params": [w]}, {"params": [b], "lr": 0.05}],
                                         **kwargs)
        losses = []
        for step in range(steps):
            if lr_schedule:
                for g in opt.param_groups:
                    g["lr"] = lr_schedule(step)
            opt.zero_grad(set_to_none=True)
            loss = m.nn.functional.mse_loss(m.tensor(x) @ w.t() + b, m.tensor(y))
            loss.backward()
            opt.step()
            if m is lt:
                lt.mark_step()
            losses.append(loss.item())
        out[m] = (w, b, losses)
    return out


CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.5, dampening=0.1)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, weight_decay=0.1, eps=1e-6)),
]


@pytest.mark.parametrize("name, kwargs", CONFIGS, ids=[f"{n}-{k}" for n, k in CONFIGS])
def test_steps_match_torch(name, kwargs, mode):
    out = _run(name, kwargs)
    (w, b, losses), (w_t, b_t, losses_t) = out[lt], out[torch]
    assert_close(w, w_t.detach(), rtol=1e-10, atol=1e-12)
    assert_close(b, b_t.detach(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(losses, losses_t, rtol=1e-12)


@pytest.mark.parametrize("name", ["SGD", "AdamW"])
def test_edited_lr_takes_effect_like_torch(name, mode):
    out = _run(name, dict(lr=0.1, momentum=0.9) if name == "SGD" else dict(lr=0.1),
               lr_schedule=lambda s: 0.1 / (1 + s))
    assert_close(out[lt][0], out[torch][0].detach(), rtol=1e-10, atol=1e-12)


def test_edited_lr_does_not_recompile():
    w = lt.nn.Parameter(lt.ones(4, dtype=lt.float64))
    opt = lt.optim.SGD([w], lr=0.1, momentum=0.9)
    lt._C.clear_graph_cache()
    lt._C.set_debug(True)
    try:
        with lt.lazy():
            for step in range(4):
                opt.param_groups[0]["lr"] = 0.1 * (step + 1)
                opt.zero_grad()
                (w * w).sum().backward()
                opt.step()
                lt.mark_step()
        log = lt._C.take_debug_log()
    finally:
        lt._C.set_debug(False)
    runs = [line for line in log if "cache=" in line]
    assert len(runs) == 4, log
    # The optimizer's state exists from its construction: every step is the first one's graph.
    assert "cache=miss" in runs[0] and all("cache=hit" in line for line in runs[1:]), runs


def test_zero_grad_set_to_none_false():
    w = lt.nn.Parameter(lt.ones(2))
    opt = lt.optim.SGD([w], lr=0.1)
    (w * 3).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None


def test_constructor_errors_are_torchs():
    w = lt.nn.Parameter(lt.ones(2))
    for args, kwargs, match in [((), dict(lr=-1), "Invalid learning rate"),
                                ((), dict(lr=0.1, momentum=-1), "Invalid momentum"),
                                ((), dict(lr=0.1, nesterov=True), "Nesterov")]:
        with pytest.raises(ValueError, match=match):
            lt.optim.SGD([w], *args, **kwargs)
        with pytest.raises(ValueError, match=match):
            torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], *args, **kwargs)
    with pytest.raises(ValueError, match="Invalid beta"):
        lt.optim.Adam([w], betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="empty parameter list"):
        lt.optim.AdamW([])
