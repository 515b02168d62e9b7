"""autocast and GradScaler against torch's CPU autocast and GradScaler's rules; lt.save/lt.load
round trips of nested training state."""
import argparse
import pickle

import numpy as np
import pytest
import torch

import lazytrain as lt
from conftest import assert_close


def test_autocast_runs_matmul_in_bfloat16_like_torch(mode):
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((8, 16)).astype(np.float32), rng.standard_normal(
        (16, 4)).astype(np.float32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = torch.tensor(a) @ torch.tensor(b)
    with lt.autocast("cpu", dtype=lt.bfloat16):
        assert lt.amp.is_autocast_enabled()
        got = lt.tensor(a) @ lt.tensor(b)
        lin = lt.nn.functional.linear(lt.tensor(a), lt.tensor(b.T.copy()))
    assert not lt.amp.is_autocast_enabled()
    # Inputs rounded to bf16, products accumulated in f32: torch rounds the result to bf16,
    # lazytrain gives the f32 accumulator back (lt/autocast.h).
    exact = a.astype(np.float64) @ b
    assert got.dtype is lt.float32 and want.dtype == torch.bfloat16
    np.testing.assert_allclose(got.numpy(), want.float().numpy(), rtol=2e-2, atol=5e-2)
    np.testing.assert_allclose(lin.numpy(), got.numpy(), rtol=1e-6)
    assert np.abs(got.numpy() - exact).max() > 1e-4  # bf16 operands, not f32 ones
    with lt.autocast(enabled=False):
        np.testing.assert_allclose((lt.tensor(a) @ lt.tensor(b)).numpy(), exact, rtol=1e-4,
                                   atol=1e-5)


def test_grad_scaler_skips_overflowing_steps_and_backs_off(mode):
    w = lt.nn.Parameter(lt.tensor([1.0, 2.0]))
    w_t = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    opt, opt_t = lt.optim.SGD([w], lr=0.1), torch.optim.SGD([w_t], lr=0.1)
    scaler = lt.amp.GradScaler(init_scale=1024.0, growth_interval=2)
    # torch's GradScaler needs CUDA; its rules, written out: skip on inf, scale *= 0.5;
    # grow by 2 after growth_interval finite steps.
    scale, finite_run = 1024.0, 0
    for step, factor in enumerate([1.0, float("inf"), 1.0, 1.0, 1.0]):
        opt.zero_grad()
        scaler.scale((w * w).sum() * factor).backward()
        scaler.step(opt)
        scaler.update()
        lt.mark_step()
        opt_t.zero_grad()
        ((w_t * w_t).sum() * factor).backward()
        if factor == 1.0:
            opt_t.step()
            finite_run += 1
            if finite_run == 2:
                scale, finite_run = scale * 2, 0
        else:
            scale, finite_run = scale * 0.5, 0
        assert scaler.get_scale() == scale, step
        assert_close(w.detach(), w_t.detach(), rtol=1e-6)
    state = scaler.state_dict()
    assert state == {"scale": scale, "_growth_tracker": finite_run}
    other = lt.amp.GradScaler()
    other.load_state_dict(state)
    assert other.state_dict() == state


def test_grad_scaler_update_with_new_scale_sets_it(mode):
    """update(new_scale), PyTorch's static scale: the scale set (the growth tracker kept), a
    non-finite step still skipped; found_inf counts the skipped steps."""
    w = lt.nn.Parameter(lt.tensor([1.0, 2.0]))
    opt = lt.optim.SGD([w], lr=0.1)
    scaler = lt.amp.GradScaler(init_scale=1024.0, growth_interval=1)
    skipped = lt.zeros(())
    want = np.array([1.0, 2.0])
    for step, factor in enumerate([1.0, float("inf"), 1.0]):
        opt.zero_grad()
        loss = (w * w).sum()
        scaled = scaler.scale(loss * factor)
        scaled.backward()
        scaler.step(opt)
        skipped = skipped + scaler.found_inf(opt)
        scaler.update(new_scale=64.0)  # after the step's scale was read: it keeps the old one
        lt.mark_step()
        if factor == 1.0:
            assert scaled.item() == loss.item() * (1024.0 if step == 0 else 64.0)
        if factor == 1.0:
            want = want - 0.1 * 2 * want
        assert scaler.get_scale() == 64.0
        np.testing.assert_allclose(w.detach().numpy(), want, rtol=1e-6)
    assert skipped.item() == 1.0 and scaler.state_dict()["_growth_tracker"] == 0
    scaler.update(lt.tensor([8.0], dtype=lt.float64))  # no step needed since the last update
    assert scaler.get_scale() == 8.0
    with pytest.raises(ValueError, match=r"GradScaler.update: new_scale must be > 0 and finite "
                                         r"in f32, got -1 at .*test_amp_io.py:\d+"):
        scaler.update(-1.0)
    with pytest.raises(ValueError, match="1-element float tensor with requires_grad=False, got "
                                         "f32\\[2\\]"):
        scaler.update(lt.ones(2))
    with pytest.raises(TypeError, match="got str"):
        scaler.update("2")
    assert scaler.get_scale() == 8.0


def test_save_load_round_trips_nested_state(tmp_path, mode):
    model = lt.nn.Sequential(lt.nn.Linear(3, 4), lt.nn.BatchNorm1d(4))
    opt = lt.optim.AdamW(model.parameters(), lr=0.01)
    model(lt.randn(5, 3)).sum().backward()
    opt.step()
    lt.mark_step()
    state = {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3,
             "meta": {"name": "run", "betas": (0.9, 0.999), "none": None}}
    lt.save(state, tmp_path / "ckpt.safetensors")
    back = lt.load(tmp_path / "ckpt.safetensors")
    assert back["epoch"] == 3 and back["meta"] == state["meta"]
    assert list(back["model"]) == list(state["model"])
    for k, v in state["model"].items():
        np.testing.assert_array_equal(back["model"][k].numpy(), v.numpy())
        assert back["model"][k].dtype is v.dtype
    assert back["optimizer"]["param_groups"] == state["optimizer"]["param_groups"]
    assert set(back["optimizer"]["state"]) == {0, 1, 2, 3}  # int keys survive
    model2 = lt.nn.Sequential(lt.nn.Linear(3, 4), lt.nn.BatchNorm1d(4))
    model2.load_state_dict(back["model"])
    opt2 = lt.optim.AdamW(model2.parameters(), lr=0.01)
    opt2.load_state_dict(back["optimizer"])
    x = lt.randn(5, 3)
    for m, o in ((model, opt), (model2, opt2)):
        o.zero_grad()
        m(x).sum().backward()
        o.step()
    for p, q in zip(model.parameters(), model2.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_other_objects_are_pickled_as_torch_save_does(tmp_path):
    args = argparse.Namespace(lr=0.1, arch="resnet50", milestones=[30, 60])
    state = {"args": args, "classes": {"cat", "dog"}, "w": lt.ones(2), "epoch": 4}
    lt.save(state, tmp_path / "ckpt.st")
    back = lt.load(tmp_path / "ckpt.st", map_location="cpu")
    assert back["args"] == args and back["classes"] == {"cat", "dog"} and back["epoch"] == 4
    assert back["w"].tolist() == [1.0, 1.0]
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        lt.load(tmp_path / "ckpt.st", weights_only=True)
    lt.save({"w": lt.ones(2)}, tmp_path / "plain.st")
    assert lt.load(tmp_path / "plain.st", weights_only=True)["w"].tolist() == [1.0, 1.0]


class Holder:
    def __init__(self, t):
        self.t, self.same, self.note = t, t, "kept"


def test_pickled_objects_keep_their_tensors_as_torch_save_does(tmp_path, mode):
    """A whole module (lt.save(model, f), torch.save's habit) and a tensor inside a custom
    class: the tensors go to the file's tensors, parameters come back as parameters that
    require grad, and two references to one tensor (tied weights) load as one."""
    lt.manual_seed(3)
    model = lt.nn.Sequential(lt.nn.Linear(3, 3), lt.nn.ReLU(), lt.nn.Linear(3, 3))
    model[2].weight = model[0].weight  # tied
    x = lt.randn(5, 3)
    want = model(x).detach().numpy()
    lt.save({"model": model, "holder": Holder(lt.arange(4.0))}, tmp_path / "obj.st")
    raw = lt._C.load(str(tmp_path / "obj.st"))[0]
    assert sorted(raw) == ["holder.t0", "model.t0", "model.t1", "model.t2"]
    back = lt.load(tmp_path / "obj.st")
    m = back["model"]
    np.testing.assert_array_equal(m(x).detach().numpy(), want)
    params = list(m.parameters())
    assert all(isinstance(p, lt.nn.Parameter) and p.requires_grad for p in params)
    assert m[0].weight is m[2].weight and len(params) == 3
    m(x).sum().backward()
    assert m[0].weight.grad is not None
    h = back["holder"]
    assert h.t is h.same and h.note == "kept" and h.t.tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        lt.load(tmp_path / "obj.st", weights_only=True)


def test_saved_tensors_are_plain_safetensors(tmp_path):
    lt.save({"w": lt.arange(6.0).reshape(2, 3), "n": lt.tensor([1, 2])}, tmp_path / "t.st")
    raw = lt._C.load(str(tmp_path / "t.st"))[0]
    assert sorted(raw) == ["n", "w"] and raw["w"].tolist() == [[0, 1, 2], [3, 4, 5]]
    lt._C.save(str(tmp_path / "plain.st"), {"a": lt.ones(2)}, {})
    assert lt.load(tmp_path / "plain.st")["a"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="cannot store a function at 'x': .* pickling it failed"):
        lt.save({"x": lambda: 1}, tmp_path / "bad.st")
    with pytest.raises(RuntimeError):
        lt.load(tmp_path / "missing.st")


def test_grad_scaler_step_with_a_closure_is_torchs():
    w = lt.nn.Parameter(lt.ones(2))
    opt = lt.optim.SGD([w], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    # Disabled, step is the optimizer's own, closure and all.
    assert lt.amp.GradScaler(enabled=False).step(opt, closure).item() == 2.0
    assert w.tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="Closure use is not currently supported if "
                                           "GradScaler is enabled."):
        lt.amp.GradScaler().step(opt, closure=closure)
