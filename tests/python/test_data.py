"""lt.utils.data against torch.utils.data: the same batches without shuffling, permutations
fixed by a seed with it."""
import numpy as np
import pytest
import torch

import lazytrain as lt
from conftest import assert_close

X = np.arange(70, dtype=np.float32).reshape(35, 2)
Y = np.arange(35) % 3


@pytest.mark.parametrize("drop_last", [False, True])
def test_tensor_dataset_batches_match_torch(drop_last):
    ds = lt.utils.data.TensorDataset(lt.tensor(X), torch.tensor(Y))  # array-likes too
    ds_t = torch.utils.data.TensorDataset(torch.tensor(X), torch.tensor(Y))
    loader = lt.utils.data.DataLoader(ds, batch_size=8, drop_last=drop_last)
    loader_t = torch.utils.data.DataLoader(ds_t, batch_size=8, drop_last=drop_last)
    assert len(loader) == len(loader_t) and len(ds) == 35
    batches = list(loader)
    assert len(batches) == len(list(loader_t))
    for (x, y), (x_t, y_t) in zip(batches, loader_t):
        assert_close(x, x_t)
        assert_close(y, y_t)


class Pairs(lt.utils.data.Dataset):
    def __len__(self):
        return 10

    def __getitem__(self, i):
        return {"x": np.full(3, i, dtype=np.float64), "y": i % 2, "name": f"s{i}"}


def test_custom_dataset_collates_as_torch():
    got = next(iter(lt.utils.data.DataLoader(Pairs(), batch_size=4)))
    want = next(iter(torch.utils.data.DataLoader(Pairs(), batch_size=4)))
    assert_close(got["x"], want["x"])
    assert_close(got["y"], want["y"])
    assert got["name"] == list(want["name"])


def test_shuffle_is_seeded_per_epoch():
    ds = lt.utils.data.TensorDataset(lt.arange(20))
    loader = lt.utils.data.DataLoader(ds, batch_size=5, shuffle=True, seed=3)
    epochs = [[v for (b,) in loader for v in b.tolist()] for _ in range(2)]
    assert sorted(epochs[0]) == list(range(20)) and sorted(epochs[1]) == list(range(20))
    assert epochs[0] != epochs[1] and epochs[0] != list(range(20))
    again = lt.utils.data.DataLoader(ds, batch_size=5, shuffle=True, seed=3)
    assert [v for (b,) in again for v in b.tolist()] == epochs[0]


def test_loader_feeds_a_lazy_training_loop():
    lt.manual_seed(0)
    ds = lt.utils.data.TensorDataset(lt.randn(64, 4), lt.randn(64, 1))
    model = lt.nn.Linear(4, 1)
    opt = lt.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    with lt.lazy():
        for _ in range(5):
            for x, y in lt.utils.data.DataLoader(ds, batch_size=16, drop_last=True):
                opt.zero_grad()
                loss = lt.nn.functional.mse_loss(model(x), y)
                loss.backward()
                opt.step()
                lt.mark_step()
                losses.append(loss.item())
    assert losses[-1] < losses[0]
