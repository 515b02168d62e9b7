"""Tensors from Python values and back; dtypes, shapes, repr and creation against PyTorch."""
import contextlib
import re

import numpy as np
import pytest
import torch

import lazytrain as lt
from conftest import assert_close


DTYPES = ["float32", "float64", "bfloat16", "float16", "int64", "int32", "bool"]


@pytest.mark.parametrize("name", DTYPES)
def test_dtypes_have_pytorch_names(name):
    dt = getattr(lt, name)
    assert repr(dt) == repr(getattr(torch, name)).replace("torch.", "lazytrain.")
    assert dt.is_floating_point == getattr(torch, name).is_floating_point
    assert lt.zeros(2, dtype=dt).dtype is dt


def test_aliases():
    assert lt.float is lt.float32 and lt.double is lt.float64 and lt.long is lt.int64
    assert lt.half is lt.float16 and lt.int is lt.int64


@pytest.mark.parametrize("data", [[1.5, 2.0], [[1, 2], [3, 4]], [True, False], 3.25, 7, True,
                                  [[1, 2.5]]])
def test_tensor_from_python_infers_dtypes_as_torch(data):
    got, want = lt.tensor(data), torch.tensor(data)
    assert_close(got, want)
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.int64, np.int32, np.bool_,
                                      np.float16])
def test_from_numpy_and_numpy(np_dtype):
    a = (np.arange(6).reshape(2, 3) % 3).astype(np_dtype)
    t = lt.from_numpy(a)
    assert str(t.dtype) == str(torch.from_numpy(a).dtype).replace("torch", "lazytrain")
    back = t.numpy()
    assert back.dtype == a.dtype and back.shape == a.shape
    np.testing.assert_array_equal(back, a)


@pytest.mark.parametrize("mode", ["eager", "lazy"])
def test_from_numpy_shares_the_arrays_memory_as_torch(mode):
    ours, theirs = np.arange(12.0).reshape(3, 4), np.arange(12.0).reshape(3, 4)
    a = lt.from_numpy(ours[1:])  # an offset view: no 64-byte alignment
    b = torch.from_numpy(theirs[1:])
    with lt.lazy() if mode == "lazy" else contextlib.nullcontext():
        ours[1, 0] = theirs[1, 0] = 50.0
        assert a.sum().item() == b.sum().item()
        for t in (a, b):
            t.mul_(2)
            t[0, 1:3] = -1.0
            t.add_(t.sum())
        if mode == "lazy":
            assert ours[1, 0] == 50.0  # written when the step runs
            lt.mark_step()
    np.testing.assert_array_equal(ours, theirs)
    assert np.shares_memory(a.numpy(), ours)  # numpy() gives the memory back, as torch's


def test_from_numpy_copies_arrays_it_cannot_share():
    a = np.arange(12.0).reshape(3, 4)
    frozen = np.arange(3.0)
    frozen.flags.writeable = False
    for array in (a.T, frozen):
        t = lt.from_numpy(array)
        np.testing.assert_array_equal(t.numpy(), array)
        assert not np.shares_memory(t.numpy(), array)
    t = lt.from_numpy(a.T)
    a[0, 0] = 100.0
    assert t[0, 0].item() == 0.0


def test_as_tensor_shares_where_torch_does():
    a = np.zeros(3, dtype=np.float32)
    assert np.shares_memory(lt.as_tensor(a).numpy(), a)
    assert np.shares_memory(torch.as_tensor(a).numpy(), a)
    widened = lt.as_tensor(a, dtype=lt.float64)
    assert widened.dtype is lt.float64 and not np.shares_memory(widened.numpy(), a)
    t = lt.ones(2)
    assert lt.as_tensor(t) is t and lt.as_tensor(t, dtype=lt.float64).dtype is lt.float64
    assert lt.as_tensor([1, 2]).dtype is lt.int64


def test_from_dlpack_shares_a_torch_tensors_memory():
    theirs = torch.arange(4.0)
    ours = lt.from_dlpack(theirs)
    ours.add_(1)
    assert theirs.tolist() == [1.0, 2.0, 3.0, 4.0]
    theirs[0] = 10.0
    assert ours[0].item() == 10.0


def test_array_likes_are_accepted_as_tensors():
    x = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    got = lt.as_tensor(x) + 1
    assert_close(got, x + 1)
    assert_close(lt.tensor(np.ones((2, 2))) * x[:, :2].numpy(), torch.ones(2, 2,
                 dtype=torch.float64) * x[:, :2])
    w = torch.ones(3, requires_grad=True)
    assert_close(lt.tensor(w), w.detach())


def test_item_tolist_numpy_types():
    assert lt.tensor(2.5).item() == 2.5 and isinstance(lt.tensor(3).item(), int)
    assert lt.tensor(True).item() is True
    assert lt.tensor([[1, 2]]).tolist() == [[1, 2]]
    with pytest.raises(RuntimeError, match="item"):
        lt.ones(2).item()
    with pytest.raises(RuntimeError, match="requires grad"):
        lt.ones(2, requires_grad=True).numpy()
    with pytest.raises(TypeError, match="BFloat16"):
        lt.ones(2, dtype=lt.bfloat16).numpy()


def test_shape_size_dims():
    t = lt.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, lt.Size)
    assert repr(t.shape) == repr(torch.zeros(2, 3, 4).shape).replace("torch", "lazytrain")
    assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
    assert t.ndim == 3 and t.dim() == 3 and t.numel() == 24 and t.shape.numel() == 24
    assert lt.ones((2, 3)).shape == lt.ones([2, 3]).shape == lt.ones(t.shape[:2]).shape == (2, 3)
    assert len(t) == 2


@pytest.mark.parametrize("make", [
    lambda m: m.tensor([[1.5, -2.25, 3.0], [4.0, 5.125, -6.0]]),
    lambda m: m.tensor([1, 2, 3]),
    lambda m: m.tensor([True, False]),
    lambda m: m.tensor(2.5, dtype=m.float64),
    lambda m: m.tensor([1e-8, 1.0]),
    lambda m: m.arange(30, dtype=m.float64).reshape(5, 6) / 7,
    lambda m: m.tensor([1.0, 2.0], requires_grad=True),
    lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 2,
])
def test_repr_is_pytorchs(make):
    # grad_fn names carry no overload number (MulBackward, PyTorch's MulBackward0).
    want = re.sub(r"(Backward)\d+", r"\1", repr(make(torch)))
    assert repr(make(lt)).replace("lazytrain.", "torch.") == want


def test_is_leaf_and_grad_fn_are_torchs_and_read_no_value():
    """is_leaf and grad_fn as torch's (a leaf, a parameter, an op's result, a detached one, a
    tensor made under no_grad), in lazy mode without a sync."""
    got = {}
    for m in (torch, lt):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        c = m.tensor([3.0, 4.0])
        y = w * c
        with m.no_grad():
            z = w * 2
        cases = [w, c, y, y.detach(), z, y.sum()]
        got[m] = [(t.is_leaf, t.grad_fn is None) for t in cases]
        if m is lt:
            assert y.grad_fn.name() == "MulBackward"
            assert repr(y.grad_fn).startswith("<MulBackward object at 0x")
    assert got[lt] == got[torch]
    w = lt.nn.Parameter(lt.ones(3))
    with lt.lazy():
        y = (w * 2).sum()
        lt.debug.reset_metrics()
        assert w.is_leaf and not y.is_leaf and y.grad_fn is not None
        assert lt.debug.counter("sync") == 0 and lt.debug.is_pending(y)


def test_creation_functions(mode):
    assert_close(lt.zeros(2, 3), torch.zeros(2, 3))
    assert_close(lt.ones((2, 3), dtype=lt.float64), torch.ones((2, 3), dtype=torch.float64))
    assert_close(lt.full((2, 2), 7), torch.full((2, 2), 7))
    assert_close(lt.full((2,), 1.5), torch.full((2,), 1.5))
    assert_close(lt.arange(5), torch.arange(5))
    assert_close(lt.arange(1, 2, 0.25), torch.arange(1, 2, 0.25))
    assert_close(lt.empty(2, 2), torch.zeros(2, 2))  # lazytrain has no uninitialized memory
    x = lt.ones(2, 3, dtype=lt.float64)
    assert_close(lt.zeros_like(x), torch.zeros(2, 3, dtype=torch.float64))
    assert_close(lt.ones_like(x), torch.ones(2, 3, dtype=torch.float64))
    assert_close(lt.full_like(x, 3.0), torch.full((2, 3), 3.0, dtype=torch.float64))
    assert lt.rand_like(x).dtype is lt.float64 and lt.randn_like(x).shape == (2, 3)


def test_random_draws_follow_the_seed(mode):
    lt.manual_seed(3)
    a = lt.rand(100).numpy()
    b = lt.randn(4, 5).numpy()
    lt.manual_seed(3)
    np.testing.assert_array_equal(lt.rand(100).numpy(), a)
    np.testing.assert_array_equal(lt.randn(4, 5).numpy(), b)
    assert 0 <= a.min() and a.max() < 1 and abs(a.mean() - 0.5) < 0.15


def test_casts():
    x = lt.tensor([1.7, -2.2])
    assert x.long().tolist() == torch.tensor([1.7, -2.2]).long().tolist()
    assert x.double().dtype is lt.float64 and x.to(lt.float64).dtype is lt.float64
    assert x.to("cpu") is x and x.to("cpu", lt.int32).dtype is lt.int32
    assert x.half().float().dtype is lt.float32 and x.bool().dtype is lt.bool
    assert x.to(dtype=lt.bfloat16).dtype is lt.bfloat16
    with pytest.raises(ValueError, match="CPU"):
        x.to("cuda")
    dev = lt.device("cuda" if lt.cuda.is_available() else "cpu")
    assert x.to(dev) is x and x.to(device=dev, dtype=lt.float64).dtype is lt.float64
    assert repr(dev) == repr(torch.device("cpu")) and str(dev) == "cpu"
    model = lt.nn.Linear(2, 2).to(dev)
    assert model.to("cpu", lt.float64).weight.dtype is lt.float64
    with pytest.raises(ValueError, match="CPU"):
        model.to("cuda:0")


def test_array_likes_feed_ops_and_modules():
    """A torch batch or a numpy array goes where lazytrain takes a tensor (copied)."""
    torch.manual_seed(0)
    t_lin = torch.nn.Linear(3, 2).double()
    lin = lt.nn.Linear(3, 2).double()
    lin.load_state_dict(t_lin.state_dict())
    batch = torch.randn(4, 3, dtype=torch.float64)
    assert_close(lin(batch), t_lin(batch).detach())
    assert_close(lin(batch.numpy()), t_lin(batch).detach())
    assert_close(lt.exp(batch.numpy()), batch.exp())
    assert_close(lt.matmul(batch, batch.numpy().T), batch @ batch.T)
    assert_close(lt.tensor([1.0, 2.0], dtype=lt.float64).sum() + lt.sum(batch), batch.sum() + 3)
    with pytest.raises(TypeError):
        lt.sum("not an array")


def test_the_package_runs_without_torch():
    import subprocess
    import sys
    program = ("import sys; sys.modules['torch'] = None\n"  # any import of torch fails
               "import lazytrain as lt\n"
               "m = lt.nn.Linear(3, 2); opt = lt.optim.AdamW(m.parameters())\n"
               "m(lt.ones(4, 3)).sum().backward(); opt.step()\n"
               "print(m(lt.ones(1, 3)).shape)")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "lazytrain.Size([1, 2])"


def test_dlpack_both_ways_with_torch_and_numpy():
    t = lt.tensor([[1.5, -2.0], [3.0, 4.25]])
    theirs = torch.from_dlpack(t)
    assert theirs.dtype == torch.float32 and theirs.tolist() == t.tolist()
    assert np.from_dlpack(t).tolist() == t.tolist()
    assert t.__dlpack_device__() == (1, 0)
    back = lt.from_dlpack(torch.arange(6, dtype=torch.int32).reshape(2, 3))
    assert back.dtype == lt.int32 and back.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert lt.from_dlpack(torch.ones(2).__dlpack__()).tolist() == [1.0, 1.0]  # a capsule

    class Producer:  # DLPack only, no __array__: taken where a tensor is
        def __dlpack__(self, stream=None):
            return np.arange(3.0).__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)
    assert (lt.ones(3, dtype=lt.float64) + Producer()).tolist() == [1.0, 2.0, 3.0]
    assert lt.tensor(Producer()).tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(BufferError, match="bfloat16"):
        lt.ones(2, dtype=lt.bfloat16).__dlpack__()
