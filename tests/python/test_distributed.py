"""lazytrain.distributed, DistributedDataParallel, SyncBatchNorm and DistributedSampler: one
rank against PyTorch's single-process results and names, and 2 Python ranks under lt-launch
following 1 rank."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import lazytrain as lt
from conftest import assert_close

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
CIFAR_STYLE = os.path.join(ROOT, "examples", "python", "train_cifar_style.py")
LT_LAUNCH = os.environ.get("LT_LAUNCH", os.path.join(ROOT, "build", "tools", "lt-launch"))


def test_a_script_alone_is_a_job_of_one_rank(mode):
    lt.distributed.init_process_group()
    dist = lt.distributed
    assert dist.is_available() and dist.is_initialized()
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "single")
    t = lt.tensor([1.5, -2.0])
    assert dist.all_reduce(t) is None
    assert dist.all_reduce(t, op=dist.ReduceOp.MAX, async_op=True).wait()
    out = [lt.zeros(2)]
    dist.all_gather(out, t)
    dist.broadcast(t, src=0)
    dist.barrier()
    assert t.tolist() == [1.5, -2.0] and out[0].tolist() == [1.5, -2.0]


def test_distributed_errors_name_the_argument():
    dist = lt.distributed
    with pytest.raises(ValueError, match=r"world_size=2, but the job has 1 ranks"):
        dist.init_process_group(world_size=2)
    with pytest.raises(ValueError, match=r"all_reduce: op must be one of"):
        dist.all_reduce(lt.zeros(2), op="prod")
    with pytest.raises(TypeError, match=r"all_reduce: expected a lazytrain Tensor, got ndarray"):
        dist.all_reduce(np.zeros(2))
    with pytest.raises(ValueError, match=r"tensor_list has 2 tensors, the job 1 ranks"):
        dist.all_gather([lt.zeros(2), lt.zeros(2)], lt.zeros(2))
    with pytest.raises(ValueError, match=r"broadcast: src=1 is not a rank of the job of 1"):
        dist.broadcast(lt.zeros(2), src=1)


COLLECTIVES = """
import sys
import lazytrain as lt
dist = lt.distributed
dist.init_process_group()
r, w = dist.get_rank(), dist.get_world_size()
with (lt.lazy() if sys.argv[1] == "lazy" else lt.eager()):
    # The rank enters as data: the ranks trace one graph (a number 1 would be folded in).
    x = lt.arange(4 * w, dtype=lt.float64).reshape(2 * w, 2) * lt.tensor([r + 1.0])
    out = lt.zeros(2, 2, dtype=lt.float64)
    dist.reduce_scatter_tensor(out, x)
    mean = lt.zeros(2, 2, dtype=lt.float64)
    dist.reduce_scatter(mean, list(x.chunk(w, 0)), op=dist.ReduceOp.AVG)
    gathered = lt.zeros(2 * w, dtype=lt.float64)
    dist.all_gather_into_tensor(gathered, lt.tensor([float(r)] * 2, dtype=lt.float64))
    lt.mark_step()
    signed = x * (1.0 - 2.0 * (lt.arange(2 * w, dtype=lt.float64).reshape(2 * w, 1) % 2))
    most, least = lt.zeros(2, 2, dtype=lt.float64), lt.zeros(2, 2, dtype=lt.float64)
    dist.reduce_scatter_tensor(most, signed, op=dist.ReduceOp.MAX)
    dist.reduce_scatter(least, list(signed.chunk(w, 0)), op=dist.ReduceOp.MIN)
    lt.mark_step()
with open(f"{sys.argv[2]}/rank{r}.txt", "w") as f:  # one file per rank: prints interleave
    f.write(f"{out.flatten().tolist()} {mean.flatten().tolist()} {gathered.tolist()} "
            f"{most.flatten().tolist()} {least.flatten().tolist()}")
"""


@pytest.mark.skipif(not os.access(LT_LAUNCH, os.X_OK), reason="lt-launch is not built")
@pytest.mark.parametrize("how", ["eager", "lazy"])
def test_reduce_scatter_and_all_gather_into_tensor_on_two_ranks(tmp_path, how):
    script = tmp_path / "collectives.py"
    script.write_text(COLLECTIVES)
    out = subprocess.run([LT_LAUNCH, "-n", "2", "--oversubscribe", "--", sys.executable,
                          str(script), how, str(tmp_path)], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    got = [(tmp_path / f"rank{r}.txt").read_text() for r in (0, 1)]
    # x on rank r is (r + 1) * arange(8) as [4, 2]: the sum over ranks is 3 * arange(8). Its
    # odd rows negated: the max over ranks is rank 1's on even rows and rank 0's on odd ones,
    # the min the other way round.
    assert got == ["[0.0, 3.0, 6.0, 9.0] [0.0, 1.5, 3.0, 4.5] [0.0, 0.0, 1.0, 1.0] "
                   "[0.0, 2.0, -2.0, -3.0] [0.0, 1.0, -4.0, -6.0]",
                   "[12.0, 15.0, 18.0, 21.0] [6.0, 7.5, 9.0, 10.5] [0.0, 0.0, 1.0, 1.0] "
                   "[8.0, 10.0, -6.0, -7.0] [4.0, 5.0, -12.0, -14.0]"]


def test_reduce_scatter_alone_is_the_input_and_checks_shapes(mode):
    dist = lt.distributed
    out, x = lt.zeros(3, 2), lt.arange(6, dtype=lt.float32).reshape(3, 2)
    dist.reduce_scatter_tensor(out, x)
    gathered = lt.zeros(3, 2)
    dist.all_gather_into_tensor(gathered, x)
    assert out.tolist() == gathered.tolist() == x.tolist()
    with pytest.raises(ValueError, match=r"input of shape \[3, 2\] does not split into 1 "
                                         r"blocks of the output's shape \[2, 2\]"):
        dist.reduce_scatter_tensor(lt.zeros(2, 2), x)
    dist.reduce_scatter_tensor(out, -x, op=dist.ReduceOp.MAX)
    assert out.tolist() == (-x).tolist()
    with pytest.raises(ValueError, match="op must be one of ReduceOp.SUM, AVG, MAX, MIN"):
        dist.reduce_scatter_tensor(out, x, op="prod")
    with pytest.raises(ValueError, match="input_list has 2 tensors, the job 1 ranks"):
        dist.reduce_scatter(out, [x, x])


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (9, 3, False),
                                                  (2, 4, False), (7, 2, True), (11, 4, False)])
def test_distributed_sampler_reads_what_torchs_reads_unshuffled(n, replicas, drop_last):
    data = list(range(n))
    for rank in range(replicas):
        ours = lt.utils.data.DistributedSampler(data, replicas, rank, shuffle=False,
                                                drop_last=drop_last)
        theirs = torch.utils.data.DistributedSampler(data, replicas, rank, shuffle=False,
                                                     drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs), (n, replicas, rank)


def test_distributed_sampler_shuffles_one_order_for_all_ranks_per_epoch():
    data = list(range(12))
    samplers = [lt.utils.data.DistributedSampler(data, 3, r, seed=5) for r in range(3)]
    first = [list(s) for s in samplers]
    assert sorted(sum(first, [])) == data  # the ranks split one permutation
    for s in samplers:
        s.set_epoch(1)
    second = [list(s) for s in samplers]
    assert sorted(sum(second, [])) == data and second != first
    assert [list(s) for s in samplers] == second  # the epoch, not the call, picks the order
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval "
                                         r"\[0, 2\]"):
        lt.utils.data.DistributedSampler(data, 3, 3)


def _bn_net(nn):
    return nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.Sequential(nn.Flatten(), nn.BatchNorm1d(16)), nn.Linear(16, 3))


def test_convert_sync_batchnorm_is_torchs_tree_with_the_same_tensors():
    net = _bn_net(lt.nn)
    bn_weight = net[1].weight
    converted = lt.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    ref = torch.nn.SyncBatchNorm.convert_sync_batchnorm(_bn_net(torch.nn))
    assert repr(converted) == repr(ref)
    assert list(converted.state_dict()) == list(ref.state_dict())
    assert converted[1].weight is bn_weight  # the parameters themselves, not copies


def test_sync_batchnorm_alone_is_batchnorm(mode):
    x = np.random.default_rng(0).standard_normal((4, 3, 2, 2))
    ours = lt.nn.SyncBatchNorm(3).double()
    theirs = torch.nn.BatchNorm2d(3).double()
    xl, xt = lt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    yl, yt = ours(xl), theirs(xt)
    (yl * yl).sum().backward()
    (yt * yt).sum().backward()
    lt.mark_step()
    assert_close(yl, yt)
    assert_close(xl.grad, xt.grad)
    assert_close(ours.running_var, theirs.running_var)
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        ours(lt.zeros(3))


def test_ddp_alone_trains_as_the_module_and_names_its_state_as_torchs(mode):
    rng = np.random.default_rng(1)
    model = lt.nn.Sequential(lt.nn.Linear(4, 3), lt.nn.ReLU(), lt.nn.Linear(3, 2))
    plain = lt.nn.Sequential(lt.nn.Linear(4, 3), lt.nn.ReLU(), lt.nn.Linear(3, 2))
    plain.load_state_dict(model.state_dict())
    ddp = lt.nn.parallel.DistributedDataParallel(model)
    assert list(ddp.state_dict()) == ["module." + k for k in model.state_dict()]
    x = lt.tensor(rng.standard_normal((5, 4)).astype(np.float32))
    ddp(x).square().sum().backward()
    plain(x).square().sum().backward()
    lt.mark_step()
    for a, b in zip(model.parameters(), plain.parameters()):
        assert a.grad.tolist() == b.grad.tolist()
    with ddp.no_sync():
        ddp(x).sum().backward()
    lt.mark_step()


def _losses(ranks, *flags):
    cmd = [sys.executable, CIFAR_STYLE, "--dtype", "float64", "--epochs", "1", "--max-steps", "3",
           "--batch-size", "32", "--train-limit", "512", "--sync-bn", *flags]
    if ranks > 1:
        cmd = [LT_LAUNCH, "-n", str(ranks), "--oversubscribe", "--"] + cmd
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    return [float(line.split()[-1]) for line in out.stdout.splitlines()
            if line.startswith("epoch")]


@pytest.mark.skipif(not os.access(LT_LAUNCH, os.X_OK), reason="lt-launch is not built")
@pytest.mark.parametrize("flags", [[], ["--compiler-opt"]])
def test_two_python_ranks_follow_one(flags):
    """DistributedSampler halves, SyncBatchNorm's statistics over both, DDP's mean gradient:
    2 ranks with 16 examples each take the steps 1 rank takes with 32."""
    one, two = _losses(1, *flags), _losses(2, *flags)
    assert len(one) == 3 and len(two) == 3
    for a, b in zip(two, one):
        assert abs(a - b) <= 1e-12 * abs(b), (flags, two, one)


@pytest.mark.skipif(not os.access(LT_LAUNCH, os.X_OK), reason="lt-launch is not built")
@pytest.mark.parametrize("stage", [1, 2])
def test_zero_redundancy_optimizer_follows_plain_data_parallelism(stage):
    """ZeroRedundancyOptimizer (each rank keeping half of SGD's momentum) on 2 ranks takes the
    steps of the plain optimizer on 2 ranks, lazily, in float64."""
    plain = _losses(2, "--compiler-opt")
    zero = _losses(2, "--compiler-opt", "--zero", str(stage))
    assert len(zero) == 3
    for a, b in zip(zero, plain):
        assert abs(a - b) <= 1e-12 * abs(b), (stage, zero, plain)


def test_zero_redundancy_optimizer_alone_consolidates_the_unsharded_state(mode):
    from lazytrain.distributed.optim import ZeroRedundancyOptimizer
    w = lt.tensor([[1.0, -2.0, 0.5]], requires_grad=True)
    zero = ZeroRedundancyOptimizer([w], lt.optim.Adam, stage=2, lr=0.1)
    plain_w = lt.tensor([[1.0, -2.0, 0.5]], requires_grad=True)
    plain = lt.optim.Adam([plain_w], lr=0.1)
    for opt, p in ((zero, w), (plain, plain_w)):
        (p * p).sum().backward()
        opt.step()
        lt.mark_step()
    assert w.grad is None  # stage 2 keeps no full gradient
    with pytest.raises(RuntimeError, match="has not been consolidated on this rank"):
        zero.state_dict()
    zero.consolidate_state_dict(to=0)
    got, want = zero.state_dict(), plain.state_dict()
    assert got["param_groups"] == want["param_groups"]
    for slot, t in want["state"][0].items():
        np.testing.assert_allclose(got["state"][0][slot].numpy(), t.numpy(), rtol=1e-6)
    np.testing.assert_allclose(w.detach().numpy(), plain_w.detach().numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="stage must be 1 or 2, got 3"):
        ZeroRedundancyOptimizer([w], lt.optim.Adam, stage=3)
