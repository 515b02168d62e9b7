"""SGD, Adam and AdamW step for step against torch.optim, eagerly and lazily, with param_groups
that a user edits between steps."""
import contextlib

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
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1, alpha=0.9)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
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


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_add_param_group_continues_as_torch(name, mode):
    """Fine-tuning's habit: train the head, then add the body with a smaller rate."""
    rng = np.random.default_rng(8)
    w0, v0, x = rng.standard_normal((4, 2)), rng.standard_normal((4, 4)), rng.standard_normal(
        (3, 4))
    runs = {}
    for m in (torch, lt):
        w, v = m.nn.Parameter(m.tensor(w0)), m.nn.Parameter(m.tensor(v0))
        kwargs = dict(lr=0.1, momentum=0.9) if name == "SGD" else dict(lr=0.1)
        opt = getattr(m.optim, name)([w], **kwargs)
        for step in range(4):
            if step == 2:
                opt.add_param_group({"params": v, "lr": 0.01})
            opt.zero_grad()
            ((m.tanh(m.tensor(x) @ v) @ w).tanh() ** 2).sum().backward()
            opt.step()
            if m is lt:
                lt.mark_step()
        runs[m] = (w, v, [{k: g[k] for k in ("lr",)} for g in opt.param_groups])
        with pytest.raises(ValueError, match="some parameters appear in more than one "
                                             "parameter group"):
            opt.add_param_group({"params": [w]})
        with pytest.raises(TypeError, match="Please use a list instead"):
            opt.add_param_group({"params": {m.nn.Parameter(m.ones(2))}})
    assert runs[lt][2] == runs[torch][2]
    for got, want in zip(runs[lt][:2], runs[torch][:2]):
        assert_close(got, want.detach(), rtol=1e-10, atol=1e-12)


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


STATE_CONFIGS = [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.01, amsgrad=True)),
                 ("AdamW", dict(lr=0.01, weight_decay=0.1)),
                 ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)), ("Adagrad", dict(lr=0.1))]


def _loss(m, w, x):
    return ((m.tensor(x) @ w).tanh() ** 2).sum()


@pytest.mark.parametrize("name, kwargs", STATE_CONFIGS, ids=[n for n, _ in STATE_CONFIGS])
def test_torch_state_dict_continues_step_for_step(name, kwargs, mode):
    """Two steps in torch, its weights and optimizer state loaded, two more steps in both."""
    rng = np.random.default_rng(2)
    w0, x = rng.standard_normal((4, 2)), rng.standard_normal((3, 4))
    w_t = torch.nn.Parameter(torch.tensor(w0))
    opt_t = getattr(torch.optim, name)([w_t], **kwargs)
    for _ in range(2):
        opt_t.zero_grad()
        _loss(torch, w_t, x).backward()
        opt_t.step()
    w = lt.nn.Parameter(lt.tensor(w_t.detach().numpy()))
    opt = getattr(lt.optim, name)([w], **kwargs)
    opt.load_state_dict(opt_t.state_dict())
    for _ in range(2):
        for m, p, o in ((torch, w_t, opt_t), (lt, w, opt)):
            o.zero_grad()
            _loss(m, p, x).backward()
            o.step()
        lt.mark_step()
        assert_close(w, w_t.detach(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, kwargs", STATE_CONFIGS, ids=[n for n, _ in STATE_CONFIGS])
def test_state_dict_round_trip(name, kwargs):
    rng = np.random.default_rng(3)
    w0, x = rng.standard_normal((4, 2)), rng.standard_normal((3, 4))
    ws = [lt.nn.Parameter(lt.tensor(w0)) for _ in range(2)]
    opts = [getattr(lt.optim, name)([w], **kwargs) for w in ws]
    for _ in range(2):
        opts[0].zero_grad()
        _loss(lt, ws[0], x).backward()
        opts[0].step()
    sd = opts[0].state_dict()
    assert sorted(sd) == ["param_groups", "state"] and sd["param_groups"][0]["params"] == [0]
    assert sd["param_groups"][0]["lr"] == kwargs["lr"]
    want_slots = {"SGD": {"momentum_buffer", "step"},
                  "Adam": {"exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"},
                  "AdamW": {"exp_avg", "exp_avg_sq", "step"},
                  "RMSprop": {"square_avg", "momentum_buffer", "grad_avg", "step"},
                  "Adagrad": {"sum", "step"}}[name]
    assert set(sd["state"][0]) == want_slots
    with lt.no_grad():
        ws[1].copy_(ws[0])
    sd["param_groups"][0]["lr"] = kwargs["lr"] / 2
    opts[1].load_state_dict(sd)
    assert opts[1].param_groups[0]["lr"] == kwargs["lr"] / 2
    opts[0].param_groups[0]["lr"] = kwargs["lr"] / 2
    for w, o in zip(ws, opts):
        o.zero_grad()
        _loss(lt, w, x).backward()
        o.step()
    np.testing.assert_array_equal(ws[1].detach().numpy(), ws[0].detach().numpy())
    with pytest.raises(ValueError, match="number of parameter groups"):
        opts[1].load_state_dict({"state": {}, "param_groups": []})


SCHEDULES = {
    "StepLR": lambda s, o: s.StepLR(o, step_size=3, gamma=0.5),
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, milestones=[2, 5, 5], gamma=0.3),
    "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.9),
    "LinearLR": lambda s, o: s.LinearLR(o, start_factor=0.25, total_iters=4),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=4, eta_min=0.01),
    "LambdaLR": lambda s, o: s.LambdaLR(o, lambda epoch: 1 / (1 + epoch)),
    "ConstantLR": lambda s, o: s.ConstantLR(o, factor=0.5, total_iters=3),
    "SequentialLR": lambda s, o: s.SequentialLR(o, [s.LinearLR(o, 0.1, total_iters=3),
                                                    s.CosineAnnealingLR(o, T_max=5)], [3]),
    "MultiplicativeLR": lambda s, o: s.MultiplicativeLR(o, lambda epoch: 0.9 if epoch % 2 else 1),
    "PolynomialLR": lambda s, o: s.PolynomialLR(o, total_iters=6, power=2.0),
    "CyclicLR": lambda s, o: s.CyclicLR(o, 0.01, 0.2, step_size_up=3, mode="triangular2"),
    "CyclicLR-exp_range": lambda s, o: s.CyclicLR(o, 0.01, 0.2, step_size_up=2,
                                                  step_size_down=3, mode="exp_range", gamma=0.9),
    "CosineAnnealingWarmRestarts": lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2,
                                                                               eta_min=0.01),
    "OneCycleLR": lambda s, o: s.OneCycleLR(o, max_lr=0.3, total_steps=10),
    "OneCycleLR-three_phase": lambda s, o: s.OneCycleLR(o, 0.3, epochs=2, steps_per_epoch=6,
                                                        anneal_strategy="linear",
                                                        three_phase=True),
    "ChainedScheduler": lambda s, o: s.ChainedScheduler([s.ConstantLR(o, 0.1, total_iters=2),
                                                         s.ExponentialLR(o, gamma=0.9)]),
}


@pytest.mark.filterwarnings("ignore:The epoch parameter")  # torch's SequentialLR calls step(0)
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedules_match_torch(name, mode):
    """The rates agree to the bit, and so do the weights they train."""
    rng = np.random.default_rng(6)
    w0, x = rng.standard_normal((4, 2)), rng.standard_normal((3, 4))
    runs = {}
    for m in (torch, lt):
        w = m.nn.Parameter(m.tensor(w0))
        opt = m.optim.SGD([w], lr=0.2, momentum=0.5)
        sched = SCHEDULES[name](m.optim.lr_scheduler, opt)
        lrs = []
        for _ in range(10):
            opt.zero_grad()
            _loss(m, w, x).backward()
            opt.step()
            sched.step()
            if m is lt:
                lt.mark_step()
            lrs.append((sched.get_last_lr(), opt.param_groups[0]["momentum"]))
        runs[m] = (w, lrs)
    assert runs[lt][1] == runs[torch][1]
    assert_close(runs[lt][0], runs[torch][0].detach(), rtol=1e-10, atol=1e-12)


def test_one_cycle_cycles_adams_beta1_as_torch_without_recompiling():
    rng = np.random.default_rng(7)
    w0, x = rng.standard_normal((4, 2)), rng.standard_normal((3, 4))
    runs = {}
    lt._C.clear_graph_cache()
    lt._C.set_debug(True)
    try:
        for m in (torch, lt):
            w = m.nn.Parameter(m.tensor(w0))
            opt = m.optim.AdamW([w], lr=0.1)
            sched = m.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=6)
            betas = []
            with (lt.lazy() if m is lt else contextlib.nullcontext()):
                for _ in range(6):
                    opt.zero_grad()
                    _loss(m, w, x).backward()
                    opt.step()
                    sched.step()
                    if m is lt:
                        lt.mark_step()
                    betas.append(opt.param_groups[0]["betas"])
            runs[m] = (w, betas)
        log = lt._C.take_debug_log()
    finally:
        lt._C.set_debug(False)
    assert runs[lt][1] == runs[torch][1]
    assert_close(runs[lt][0], runs[torch][0].detach(), rtol=1e-10, atol=1e-12)
    runs = [line for line in log if "cache=" in line]
    assert len(runs) == 6 and all("cache=hit" in line for line in runs[1:]), runs
    with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of total "
                                         "steps is 1"):
        sched = lt.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=1)
        sched.step()
        sched.step()


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.95, 0.96, 0.97, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1]
    lrs = {}
    for m in (torch, lt):
        opt = m.optim.SGD([m.nn.Parameter(m.ones(2))], lr=1.0)
        sched = m.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1, cooldown=1,
                                                       min_lr=0.1)
        lrs[m] = []
        for v in metrics:
            sched.step(m.tensor(v))
            lrs[m].append(opt.param_groups[0]["lr"])
    assert lrs[lt] == lrs[torch] and min(lrs[lt]) < 1.0
