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


@pytest.mark.parametrize("workers", [0, 2])
def test_concat_dataset_and_batch_sampler_match_torch(workers):
    """ConcatDataset's indexing and a BatchSampler passed as batch_sampler, as torch's."""
    got = {}
    for m in (torch, lt):
        data = m.utils.data
        first = data.TensorDataset(m.tensor(X[:20]), m.tensor(Y[:20]))
        both = data.ConcatDataset([first, data.TensorDataset(m.tensor(X[20:]), m.tensor(Y[20:]))])
        plus = first + both
        sampler = data.BatchSampler(data.SequentialSampler(both), batch_size=6, drop_last=False)
        loader = data.DataLoader(both, batch_sampler=sampler,
                                 **({"num_workers": workers} if m is lt else {}))
        got[m] = (len(both), both.cumulative_sizes, len(plus), len(loader), both[-1], both[21],
                  list(data.BatchSampler(range(7), 3, True)), [b for b in loader])
    assert got[lt][:3] == got[torch][:3] and got[lt][3] == got[torch][3] == 6
    for a, b in zip(got[lt][4] + got[lt][5], got[torch][4] + got[torch][5]):
        assert_close(a, b)
    assert got[lt][6] == got[torch][6] == [[0, 1, 2], [3, 4, 5]]
    for (x, y), (x_t, y_t) in zip(got[lt][7], got[torch][7]):
        assert_close(x, x_t)
        assert_close(y, y_t)
    ds = lt.utils.data.TensorDataset(lt.tensor(X))
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        lt.utils.data.DataLoader(ds, batch_size=4, batch_sampler=[[0, 1]])
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but "
                                         "got batch_size=0"):
        lt.utils.data.BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="absolute value of index should not exceed"):
        lt.utils.data.ConcatDataset([ds])[-36]


def test_random_sampler_draws_a_new_seeded_order_each_epoch():
    ds = lt.utils.data.TensorDataset(lt.arange(20))
    lt.manual_seed(3)
    sampler = lt.utils.data.RandomSampler(ds)
    first, second = list(sampler), list(sampler)
    assert sorted(first) == sorted(second) == list(range(20)) and first != second
    lt.manual_seed(3)
    assert list(lt.utils.data.RandomSampler(ds)) == first
    assert list(lt.utils.data.RandomSampler(ds, generator=3)) == first
    loader = lt.utils.data.DataLoader(ds, batch_size=5, sampler=lt.utils.data.RandomSampler(
        ds, generator=3))
    assert [int(v) for (b,) in loader for v in b.tolist()] == first
    shuffled = lt.utils.data.DataLoader(ds, batch_size=20, shuffle=True, seed=3)
    assert [next(iter(shuffled))[0].tolist() for _ in range(2)] == [first, second]
    longer = list(lt.utils.data.RandomSampler(ds, num_samples=50, generator=3))
    assert longer[:20] == first and sorted(longer[20:40]) == list(range(20))
    drawn = list(lt.utils.data.RandomSampler(ds, replacement=True, num_samples=200, generator=1))
    assert len(drawn) == 200 and set(drawn) == set(range(20))  # repeats: 200 draws of 20
    subset = lt.utils.data.SubsetRandomSampler([3, 5, 7, 9], generator=2)
    assert sorted(subset) == [3, 5, 7, 9] and len(subset) == 4


def test_weighted_random_sampler_follows_the_weights():
    weights = [0.0, 1.0, 3.0, 0.0]
    drawn = list(lt.utils.data.WeightedRandomSampler(weights, 4000, generator=5))
    counts = np.bincount(drawn, minlength=4)
    assert counts[0] == counts[3] == 0 and 2.6 < counts[2] / counts[1] < 3.4
    once = list(lt.utils.data.WeightedRandomSampler(lt.tensor(weights), 2, replacement=False))
    assert sorted(once) == [1, 2]
    # PyTorch 1.13 then returns some index of weight 0; lazytrain refuses.
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist"):
        lt.utils.data.WeightedRandomSampler(weights, 3, replacement=False)
    for m in (torch, lt):
        with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
            m.utils.data.WeightedRandomSampler(weights, 0)


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


class Slow(lt.utils.data.Dataset):
    """Items made with lazytrain ops, at uneven speeds, so that workers finish out of order."""

    def __len__(self):
        return 24

    def __getitem__(self, i):
        import time
        time.sleep(0.002 * (i % 3))
        return lt.full((2,), float(i)) * 2, i


@pytest.mark.parametrize("workers", [1, 3])
def test_workers_give_the_batches_of_no_workers_in_order(workers):
    ds = Slow()
    plain = [(x.tolist(), y.tolist()) for x, y in
             lt.utils.data.DataLoader(ds, batch_size=5, shuffle=True, seed=2)]
    started = []
    loader = lt.utils.data.DataLoader(ds, batch_size=5, shuffle=True, seed=2,
                                      num_workers=workers, prefetch_factor=2,
                                      worker_init_fn=started.append)
    assert [(x.tolist(), y.tolist()) for x, y in loader] == plain
    assert sorted(started) == list(range(workers))  # worker_init_fn once per worker


def test_workers_make_data_while_the_loop_traces_lazily():
    """A worker's ops run eagerly: its batches are data, not ops in the step's graph, and the
    stepping thread's lazy mode is left as it was."""
    with lt.lazy():
        for x, i in lt.utils.data.DataLoader(Slow(), batch_size=4, num_workers=2):
            assert not lt.debug.is_pending(x) and not x.requires_grad
            y = x + 1
            assert lt.debug.is_pending(y)
            lt.mark_step()


class Broken(lt.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise KeyError(f"no item {i}")
        return np.zeros(2)


def test_a_workers_error_is_raised_at_its_batch():
    loader = lt.utils.data.DataLoader(Broken(), batch_size=2, num_workers=2)
    got = []
    with pytest.raises(KeyError, match="no item 5"):
        for b in loader:
            got.append(b)
    assert len(got) == 2
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        lt.utils.data.DataLoader(Broken(), num_workers=-1)


class InWorker(lt.utils.data.Dataset):
    """Items that say which worker process made them; item 13 ends its process."""

    def __init__(self, fail=False):
        self.fail = fail

    def __len__(self):
        return 24

    def __getitem__(self, i):
        import os
        if self.fail and i == 13:
            os._exit(3)
        info = lt.utils.data.get_worker_info()
        return np.full(2, float(i), np.float32), i, info.id


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_worker_processes_give_the_batches_of_no_workers_in_order(context):
    plain = [(x.tolist(), y.tolist()) for x, y in
             lt.utils.data.DataLoader(Slow(), batch_size=5, shuffle=True, seed=2)]
    loader = lt.utils.data.DataLoader(Slow(), batch_size=5, shuffle=True, seed=2,
                                      num_workers=2, multiprocessing_context=context)
    assert [(x.tolist(), y.tolist()) for x, y in loader] == plain  # lazytrain ops in workers
    batches = list(lt.utils.data.DataLoader(InWorker(), batch_size=4, num_workers=3,
                                            multiprocessing_context=context))
    x, i, worker = batches[1]
    assert x.dtype is lt.float32 and x.tolist() == [[4.0, 4.0], [5.0, 5.0], [6.0, 6.0],
                                                    [7.0, 7.0]]
    assert i.dtype is lt.int64 and i.tolist() == [4, 5, 6, 7]
    assert [b[2].tolist() for b in batches] == [[w] * 4 for w in (0, 1, 2, 0, 1, 2)]
    assert lt.utils.data.get_worker_info() is None


def test_a_worker_processs_error_and_death_reach_the_loop():
    loader = lt.utils.data.DataLoader(Broken(), batch_size=2, num_workers=2,
                                      multiprocessing_context="fork")
    got = []
    with pytest.raises(KeyError) as e:
        for b in loader:
            got.append(b)
    assert len(got) == 2
    text = str(e.value)
    assert text.startswith("Caught KeyError in DataLoader worker process 0.\nOriginal "
                           "Traceback (most recent call last):")
    assert "no item 5" in text
    dies = lt.utils.data.DataLoader(InWorker(fail=True), batch_size=4, num_workers=2,
                                    multiprocessing_context="fork")
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid \d+\) exited unexpectedly "
                                           r"with exit code 3"):
        list(dies)
    with pytest.raises(ValueError, match="multiprocessing_context can only be used with "
                                         "multi-process loading"):
        lt.utils.data.DataLoader(Broken(), multiprocessing_context="fork")
    with pytest.raises(ValueError, match="should specify a valid start method"):
        lt.utils.data.DataLoader(Broken(), num_workers=1, multiprocessing_context="threads")


@pytest.mark.parametrize("workers", [0, 2])
def test_batch_size_none_yields_converted_samples_as_torch(workers):
    """No automatic batching: each sample through default_convert (arrays and numpy scalars
    become tensors, a tuple a list, strings and Python numbers stay), in the sampler's order."""
    got = {}
    for m in (torch, lt):
        loader = m.utils.data.DataLoader(Pairs(), batch_size=None, shuffle=False,
                                         **({"num_workers": workers} if m is lt else {}))
        got[m] = (len(loader), list(loader))
        conv = m.utils.data.default_convert
        got[m] += (conv((np.float32(2.5), 3, ["a", np.arange(2)])),)
    assert got[lt][0] == got[torch][0] == 10
    for a, b in zip(got[lt][1], got[torch][1]):
        assert_close(a["x"], b["x"])
        assert a["y"] == b["y"] and a["name"] == b["name"]
    conv_lt, conv_t = got[lt][2], got[torch][2]
    assert type(conv_lt) is type(conv_t) is list and conv_lt[1] == 3 and conv_lt[2][0] == "a"
    assert_close(conv_lt[0], conv_t[0])
    assert_close(conv_lt[2][1], conv_t[2][1])
    with pytest.raises(ValueError, match="mutually exclusive with drop_last"):
        lt.utils.data.DataLoader(Pairs(), batch_size=None, drop_last=True)


def test_random_split_lengths_and_fractions_as_torch():
    """The same lengths as torch's (fractions: floors, the remainder from the first), disjoint
    splits covering the dataset, fixed by the seed."""
    ds = lt.utils.data.TensorDataset(lt.arange(11))
    for lengths in ([3, 8], [0.3, 0.3, 0.4], [0.5, 0.5]):
        ours = lt.utils.data.random_split(ds, lengths, generator=5)
        theirs = torch.utils.data.random_split(range(11), lengths)
        assert [len(s) for s in ours] == [len(s) for s in theirs]
        items = sorted(int(s[i][0].item()) for s in ours for i in range(len(s)))
        assert items == list(range(11))
    again = lt.utils.data.random_split(ds, [3, 8], generator=5)
    assert again[0].indices == lt.utils.data.random_split(ds, [3, 8], generator=5)[0].indices
    assert again[0].indices != lt.utils.data.random_split(ds, [3, 8], generator=6)[0].indices
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the "
                                         "input dataset!"):
        lt.utils.data.random_split(ds, [3, 7])
