"""torch.distributed.optim.ZeroRedundancyOptimizer over lazytrain's sharded optimizer state
(ZeRO, docs/DISTRIBUTED.md): each rank keeps the state of its 1/N chunk of every parameter,
updates that chunk and all-gathers the parameters inside the step graph. stage=1 (PyTorch's
ZeroRedundancyOptimizer) takes the gradients as DistributedDataParallel averaged them; stage=2
(DeepSpeed's) reduce-scatters them itself, so the model needs no DDP wrapper's all-reduce, and
drops them after each step."""
from ..optim.optimizer import Optimizer
from . import get_rank

__all__ = ["ZeroRedundancyOptimizer"]


class ZeroRedundancyOptimizer(Optimizer):
    def __init__(self, params, optimizer_class, process_group=None,
                 parameters_as_bucket_view=False, overlap_with_ddp=False, stage=1, **defaults):
        if process_group is not None:
            raise NotImplementedError("ZeroRedundancyOptimizer: process_group: lazytrain's "
                                      "collectives span every rank of the job")
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer: overlap_with_ddp: in lazy mode "
                                      "the step graph overlaps the collectives itself")
        if stage not in (1, 2):
            raise ValueError(f"ZeroRedundancyOptimizer: stage must be 1 or 2, got {stage!r}")
        self.optim = optimizer_class(params, **defaults)
        self.optim._cpp.shard_state(stage)
        self._cpp = self.optim._cpp  # what lt.amp.GradScaler steps
        self.defaults = self.optim.defaults
        self.param_groups = self.optim.param_groups
        self.state = self.optim.state
        self._consolidated = None

    def step(self, closure=None):
        return self.optim.step(closure)

    def add_param_group(self, param_group):
        raise NotImplementedError("ZeroRedundancyOptimizer.add_param_group: the sharded state "
                                  "is laid out at construction; pass every group then")

    def consolidate_state_dict(self, to=0):
        """Gathers the full state (collective: every rank calls it); `to`'s state_dict() then
        returns it, in the unsharded layout any optimizer of the class loads."""
        state = self.optim.state_dict()
        self._consolidated = state if get_rank() == to else None

    def state_dict(self):
        if self._consolidated is None:
            raise RuntimeError("Optimizer state has not been consolidated on this rank. Please "
                               "call `consolidate_state_dict(to=...)` on all ranks beforehand "
                               "making sure that `to` matches this rank")
        return self._consolidated

    def load_state_dict(self, state_dict):
        """The unsharded state (of a ZeroRedundancyOptimizer or of optimizer_class itself);
        collective: every rank calls it."""
        self.optim.load_state_dict(state_dict)
        self._consolidated = None

    def __repr__(self):
        return "ZeroRedundancyOptimizer(" + repr(self.optim) + ")"
