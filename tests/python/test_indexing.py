"""t[key] and t[key] = v against PyTorch: views that write through, index tensors, masks."""
import numpy as np
import pytest
import torch

import lazytrain as lt
from conftest import assert_close

KEYS = [
    1, -1, (0, 2), (1, -1, 3), slice(1, 3), (slice(None), 2),
    (slice(None, None, 2), slice(1, None)),
    (Ellipsis, 1), (None, 0), (slice(None), None, 1), (0, Ellipsis, None), (Ellipsis,),
    (slice(-3, -1), slice(None, None, 3)), (1, slice(5, 9)), (slice(10, 2),),
]


def _base(m):
    return m.arange(60, dtype=m.float64).reshape(3, 4, 5)


@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
def test_basic_indexing_is_torchs(key, mode):
    assert_close(_base(lt)[key], _base(torch)[key])


@pytest.mark.parametrize("key", KEYS[:-1], ids=[repr(k) for k in KEYS[:-1]])
def test_assignment_writes_through(key, mode):
    x, x_t = _base(lt), _base(torch)
    x[key] = -1.0
    x_t[key] = -1.0
    assert_close(x, x_t)
    shape = tuple(x_t[key].shape)
    v = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) + 100
    x[key] = lt.tensor(v)
    x_t[key] = torch.tensor(v)
    assert_close(x, x_t)


def test_views_write_through_both_ways(mode):
    x, x_t = _base(lt), _base(torch)
    v, v_t = x[1, :, ::2], x_t[1, :, ::2]
    v += 1000
    v_t += 1000
    assert_close(x, x_t)
    x[1, 0] = 0.5
    x_t[1, 0] = 0.5
    assert_close(v, v_t)
    r, r_t = x.view(12, 5)[3:5], x_t.view(12, 5)[3:5]
    r.mul_(2)
    r_t.mul_(2)
    assert_close(x, x_t)
    d, d_t = x.detach(), x_t.detach()
    d[0, 0, 0] = 42.0
    d_t[0, 0, 0] = 42.0
    assert_close(x, x_t)


def test_writes_through_a_slice_of_an_expand_reach_the_base(mode):
    x, x_t = _base(lt), _base(torch)
    for t in (x, x_t):
        e = t[0:1].expand(3, 4, 5)
        e[2, 1:3] = -7.0
        t[:, 0, 0].unsqueeze(1).expand(3, 6)[:, 4:5].mul_(10)
    assert_close(x, x_t)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        x[0:1].expand(3, 4, 5).add_(1)


def test_augmented_assignment_through_an_index(mode):
    x, x_t = _base(lt), _base(torch)
    for m, t in ((lt, x), (torch, x_t)):
        t[0] += 1
        t[1, ::2] *= m.arange(5, dtype=m.float64)
        t[..., -1] -= 7
        t[2, 3, 4] /= 2
    assert_close(x, x_t)


def test_broadcast_assignment(mode):
    x, x_t = _base(lt), _base(torch)
    x[:, 1] = lt.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    x_t[:, 1] = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    assert_close(x, x_t)


@pytest.mark.parametrize("key", [
    lambda m: m.tensor([2, 0, 2]), lambda m: [1, 0], lambda m: (slice(None), m.tensor([3, 1])),
    lambda m: (Ellipsis, m.tensor([[0, 4], [1, 1]])), lambda m: (1, m.tensor([0, 3]), 2)])
def test_integer_tensor_indexing(key, mode):
    assert_close(_base(lt)[key(lt)], _base(torch)[key(torch)])


# Several advanced indices (PyTorch's placement of the broadcast dims: where the first one
# stood when they are adjacent, first otherwise), bool masks among them, ints beside them.
ADVANCED = [
    lambda m: (m.tensor([2, 0, 1]), m.tensor([1, 3, -1])),
    lambda m: (m.tensor([[0], [2]]), slice(None), m.tensor([4, 0, 1])),
    lambda m: (slice(None), m.tensor([0, 3]), m.tensor([[1, 2], [4, 0]])),
    lambda m: (m.tensor([1, 1]), m.tensor([2, 0]), m.tensor([3, 4])),
    lambda m: (1, m.tensor([0, 3]), m.tensor([1, 2])),
    lambda m: (m.tensor([0, 2]), 1, m.tensor([1, 2])),
    lambda m: (Ellipsis, m.tensor([3, 0]), m.tensor([1, 1])),
    lambda m: (m.tensor([True, False, True]), m.tensor([0, 3])),
    lambda m: (slice(None), m.tensor([True, False, True, True])),
    lambda m: (m.tensor([[True, False, True, False]] * 3), m.tensor([0, 1, 2, 3, 4, 0])),
    lambda m: (None, m.tensor([2, 0]), slice(1, 3), [1, 4]),
]


@pytest.mark.parametrize("key", ADVANCED, ids=[str(i) for i in range(len(ADVANCED))])
def test_several_advanced_indices_are_torchs(key, mode):
    assert_close(_base(lt)[key(lt)], _base(torch)[key(torch)])
    x, x_t = _base(lt), _base(torch)
    x[key(lt)] = -1.0
    x_t[key(torch)] = -1.0
    assert_close(x, x_t)
    shape = tuple(x_t[key(torch)].shape)
    v = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) + 100
    x[key(lt)] = lt.tensor(v)
    x_t[key(torch)] = torch.tensor(v)
    assert_close(x, x_t)


def test_picking_each_rows_label_trains_as_torchs(mode):
    logits = np.linspace(-1, 1, 12).reshape(4, 3)
    labels = [2, 0, 1, 1]
    grads = {}
    for m in (lt, torch):
        x = m.tensor(logits, requires_grad=True)
        picked = x.log_softmax(1)[m.arange(4), m.tensor(labels)]
        (-picked.mean()).backward()
        grads[m] = (picked, x.grad)
    for got, want in zip(grads[lt], grads[torch]):
        assert_close(got, want.detach())
    x, x_t = _base(lt), _base(torch)
    v, v_t = x[1:], x_t[1:]  # written through a view, into its base
    v[lt.tensor([0, 1]), :, lt.tensor([4, 2])] = 0.25
    v_t[torch.tensor([0, 1]), :, torch.tensor([4, 2])] = 0.25
    assert_close(x, x_t)


def test_bool_mask_selects_and_fills():
    x, x_t = _base(lt), _base(torch)
    assert_close(x[x > 41.5], x_t[x_t > 41.5])
    rows = np.array([True, False, True])
    assert_close(x[lt.tensor(rows)], x_t[torch.tensor(rows)])
    x[x > 50] = 0.0
    x_t[x_t > 50] = 0.0
    assert_close(x, x_t)
    x[lt.tensor(rows)] = -2.0
    x_t[torch.tensor(rows)] = -2.0
    assert_close(x, x_t)


def test_gradient_flows_through_indexing(mode):
    x_np = np.arange(12.0).reshape(3, 4)
    x, x_t = lt.tensor(x_np, requires_grad=True), torch.tensor(x_np, requires_grad=True)
    for m, t in ((lt, x), (torch, x_t)):
        y = t[1:, ::2] * 2 + t[0][None].sum() + t[m.tensor([2, 2])].sum() + t[t > 5].sum()
        y.sum().backward()
    assert_close(x.grad, x_t.grad)


def test_index_errors_are_torchs():
    x = _base(lt)
    for key in [3, (0, 4), (0, 0, -6)]:
        with pytest.raises(IndexError, match="out of bounds"):
            x[key]
    with pytest.raises(IndexError, match="index 5 out of range"):
        x.select(1, 5)
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError, match="valid indices"):
        x["a"]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(IndexError, match="out of bounds for dimension 1 with size 4"):
        x[lt.tensor([0]), lt.tensor([4])]
    with pytest.raises(IndexError, match=r"could not be broadcast together with shapes \[2\], "
                                         r"\[3\]"):
        x[lt.tensor([0, 1]), lt.tensor([0, 1, 2])]
    with pytest.raises(IndexError, match=r"The shape of the mask \[3\] at index 0 does not match "
                                         r"the shape of the indexed tensor \[3, 4, 5\] at index 1"):
        x[:, lt.tensor([True, False, True])]
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[3\] cannot "
                                           r"be broadcast to indexing result of shape \[2, 5\]"):
        x[lt.tensor([0, 1]), lt.tensor([1, 2])] = lt.ones(3, dtype=lt.float64)


def test_negative_index_entries_and_writes_through_an_index(mode):
    x, x_t = _base(lt), _base(torch)
    assert_close(x[lt.tensor([-1, 0, -3])], x_t[torch.tensor([-1, 0, -3])])
    assert_close(x[:, [-1, 1]], x_t[:, [-1, 1]])
    for m, t in ((lt, x), (torch, x_t)):
        t[m.tensor([2, 0])] = m.full((2, 4, 5), 7.0, dtype=m.float64)
        t[m.tensor([-2])] = 1.5
    assert_close(x, x_t)


def test_mask_assignment_of_a_tensor(mode):
    x, x_t = _base(lt), _base(torch)
    rows = np.array([True, False, True])
    values = np.arange(40.0).reshape(2, 4, 5)
    x[lt.tensor(rows)] = lt.tensor(values)
    x_t[torch.tensor(rows)] = torch.tensor(values)
    assert_close(x, x_t)
    picked = x > 30
    x[picked] = lt.arange(int(picked.sum().item()), dtype=lt.float64)
    x_t[x_t > 30] = torch.arange(int((x_t > 30).sum().item()), dtype=torch.float64)
    assert_close(x, x_t)


@pytest.mark.parametrize("key", [True, False, (True, 1), (0, False), (Ellipsis, True),
                                 (slice(None), True, 2)], ids=repr)
def test_python_bools_index_as_torch(key, mode):
    assert_close(_base(lt)[key], _base(torch)[key])
    x, x_t = _base(lt), _base(torch)
    x[key] = -3.0
    x_t[key] = -3.0
    assert_close(x, x_t)
