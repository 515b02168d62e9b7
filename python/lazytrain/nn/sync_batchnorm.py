"""nn.SyncBatchNorm: batch normalization whose training statistics are over every rank's batch
(lazytrain.distributed), all-reduced inside the step, so W ranks with batch B / W normalize as
one process with batch B. In eval mode, or in a job of one rank, it is BatchNorm."""
from .. import _C
from . import functional as F
from .layers import _BatchNorm


class SyncBatchNorm(_BatchNorm):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        if process_group is not None:
            raise NotImplementedError("SyncBatchNorm: process groups other than the whole job "
                                      "are not supported")

    def forward(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.shape[1] != self.num_features:
            raise ValueError(f"SyncBatchNorm({self.num_features}): input has {input.shape[1]} "
                             "channels")
        momentum = self._count_batch()
        batch_stats = self.training or not self.track_running_stats
        if batch_stats and _C.dist.world_size() > 1:
            update = self.training and self.track_running_stats
            return _C.dist.sync_batch_norm(input, self.weight, self.bias,
                                           self.running_mean if update else None,
                                           self.running_var if update else None,
                                           momentum, self.eps)
        return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                            batch_stats, momentum, self.eps)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """The module with every BatchNorm1d/2d in it replaced by a SyncBatchNorm holding the
        same parameters and buffers (PyTorch's: the module itself when it is not a BatchNorm,
        with its children converted)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            for name in ("weight", "bias"):
                if getattr(module, name, None) is not None:
                    setattr(out, name, getattr(module, name))
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                if getattr(module, name, None) is not None:
                    setattr(out, name, getattr(module, name))
            out.training = module.training
        for name, child in list(module.named_children()):
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
