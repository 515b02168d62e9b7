"""torch.distributed's names over lazytrain's replicas: a job of ranks started by lt-launch
(mpirun), each a copy of the same script. Started any other way a script is a job of one rank,
where every collective returns its input, so a script written for ranks runs unchanged alone.

Collectives are collective: every rank makes the same calls in the same order, with tensors of
the same shapes and dtypes. As PyTorch's, all_reduce, all_gather and broadcast run when they are
called and write into the tensors they are given; in lazy mode each reads its tensor's value (a
sync point). The all-reduces a training step needs inside its graph, sync-free, are the
gradients' (nn.parallel.DistributedDataParallel)."""
from .. import _C
from .._modes import eager, no_grad
from .._ops import cat

__all__ = ["ReduceOp", "is_available", "init_process_group", "is_initialized",
           "destroy_process_group", "get_rank", "get_world_size", "get_backend",
           "get_local_rank", "barrier", "all_reduce", "all_gather", "broadcast",
           "reduce_scatter_tensor", "reduce_scatter", "all_gather_into_tensor"]


class ReduceOp:
    SUM = "sum"
    AVG = "mean"
    MAX = "max"
    MIN = "min"


_OPS = {ReduceOp.SUM, ReduceOp.AVG, ReduceOp.MAX, ReduceOp.MIN}


class _Done:
    """What async_op=True returns: the collective has run (lazytrain's are issued in order and
    wait for nothing the caller could overlap from Python)."""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True


def is_available():
    return True


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None):
    """Joins the job lt-launch started (its ranks and size come from mpirun's environment);
    backend, init_method and store are accepted for PyTorch's scripts and not used. A world_size
    or rank given that is not the job's is an error."""
    _C.dist.init()
    if world_size not in (-1, None) and world_size != _C.dist.world_size():
        raise ValueError(f"init_process_group: world_size={world_size}, but the job has "
                         f"{_C.dist.world_size()} ranks (lt-launch -n sets it)")
    if rank not in (-1, None) and rank != _C.dist.rank():
        raise ValueError(f"init_process_group: rank={rank}, but this process is rank "
                         f"{_C.dist.rank()} of the job")


def is_initialized():
    return _C.dist.is_initialized()


def destroy_process_group(group=None):
    """The job ends with the processes (MPI finalizes at exit); nothing to release before."""


def get_rank(group=None):
    return _C.dist.rank()


def get_world_size(group=None):
    return _C.dist.world_size()


def get_local_rank():
    """The rank among this host's ranks (torchrun's LOCAL_RANK)."""
    return _C.dist.local_rank()


def get_backend(group=None):
    return _C.dist.backend()


def barrier(group=None, async_op=False, device_ids=None):
    _C.dist.barrier()
    return _Done() if async_op else None


def _check_tensor(tensor, what):
    if not isinstance(tensor, _C.Tensor):
        raise TypeError(f"{what}: expected a lazytrain Tensor, got {type(tensor).__name__}")


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Replaces `tensor` by the reduction of every rank's (sum, AVG, MAX or MIN)."""
    _check_tensor(tensor, "all_reduce")
    if op not in _OPS:
        raise ValueError(f"all_reduce: op must be one of ReduceOp.SUM, AVG, MAX, MIN; got {op!r}")
    if op in (ReduceOp.SUM, ReduceOp.AVG):
        result = _C.dist.reduce_value(tensor, op == ReduceOp.AVG)
    else:
        rows = _C.dist.all_gather(tensor)
        with eager():
            result = rows.amax(0) if op == ReduceOp.MAX else rows.amin(0)
    with no_grad(), eager():  # the value read left it materialized; so does the copy
        tensor.copy_(result)
    return _Done() if async_op else None


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Fills tensor_list[r] with rank r's `tensor`; the list has world_size tensors of its
    shape."""
    _check_tensor(tensor, "all_gather")
    if len(tensor_list) != get_world_size():
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors, the job "
                         f"{get_world_size()} ranks")
    rows = _C.dist.all_gather(tensor)
    with no_grad():
        for r, t in enumerate(tensor_list):
            t.copy_(rows[r])
    return _Done() if async_op else None


def broadcast(tensor, src=0, group=None, async_op=False):
    """Copies rank src's `tensor` into every rank's."""
    _check_tensor(tensor, "broadcast")
    if not 0 <= src < get_world_size():
        raise ValueError(f"broadcast: src={src} is not a rank of the job of "
                         f"{get_world_size()}")
    with no_grad():
        _C.dist.broadcast([tensor], src)
    return _Done() if async_op else None


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """output = the reduction over the ranks of block `rank` of input's dim 0 (world_size equal
    blocks): sum, mean, max or min. An op of the step graph in lazy mode (no sync), with a
    gradient for sum and mean."""
    _check_tensor(output, "reduce_scatter_tensor")
    _check_tensor(input, "reduce_scatter_tensor")
    if op not in _OPS:
        raise ValueError(f"reduce_scatter_tensor: op must be one of ReduceOp.SUM, AVG, MAX, MIN; "
                         f"got {op!r}")
    world = get_world_size()
    want = [input.shape[0] // world, *input.shape[1:]] if input.dim() else None
    if not input.dim() or input.shape[0] % world or list(output.shape) != want:
        raise ValueError(f"reduce_scatter_tensor: input of shape {list(input.shape)} does not "
                         f"split into {world} blocks of the output's shape "
                         f"{list(output.shape)}")
    result = _C.dist.reduce_scatter_tensor(input, op)
    with no_grad():
        output.copy_(result)
    return _Done() if async_op else None


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """output = the reduction over the ranks of input_list[rank] (world_size tensors of the
    output's shape)."""
    if len(input_list) != get_world_size():
        raise ValueError(f"reduce_scatter: input_list has {len(input_list)} tensors, the job "
                         f"{get_world_size()} ranks")
    for t in input_list:
        _check_tensor(t, "reduce_scatter")
    return reduce_scatter_tensor(output, cat(list(input_list), 0), op, group, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output_tensor = every rank's input_tensor along dim 0, rank r's at block r. An op of the
    step graph in lazy mode (no sync)."""
    _check_tensor(output_tensor, "all_gather_into_tensor")
    _check_tensor(input_tensor, "all_gather_into_tensor")
    world = get_world_size()
    want = [world * input_tensor.shape[0], *input_tensor.shape[1:]] if input_tensor.dim() else None
    if list(output_tensor.shape) != want:
        raise ValueError(f"all_gather_into_tensor: output of shape {list(output_tensor.shape)} "
                         f"is not {world} blocks of the input's shape "
                         f"{list(input_tensor.shape)}")
    result = _C.dist.all_gather_tensor(input_tensor)
    with no_grad():
        output_tensor.copy_(result)
    return _Done() if async_op else None
