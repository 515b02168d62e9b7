"""nn.parallel.DistributedDataParallel: every rank's replica of a module starts from rank 0's
weights, and after each backward() through it the gradients are replaced by their mean over the
ranks. Eagerly, float32 gradients are packed into buckets all-reduced while the backward pass
goes on (the C++ lt::dist::GradientReducer), other dtypes are all-reduced one by one after it;
in lazy mode backward() only traces, and the all-reduces are nodes of the step graph, bucketed
there, ahead of the optimizer's update (sync-free)."""
import contextlib
import weakref

from .. import _C
from .. import _dtype as D
from .. import _tensor
from .module import Module

# The replicas whose gradients the end of a backward() pass reduces (PyTorch's reducer runs
# from a callback of the autograd engine; here Tensor.backward calls _after_backward).
_live = weakref.WeakSet()


def _after_backward():
    for ddp in list(_live):
        ddp._finish_backward()


_tensor.post_backward_callbacks.append(_after_backward)


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=25,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        if process_group is not None:
            raise NotImplementedError("DistributedDataParallel: process groups other than the "
                                      "whole job are not supported")
        _C.dist.init()
        self.module = module
        self.broadcast_buffers = broadcast_buffers
        tensors = list(module.parameters()) + [b for b in module.buffers() if b is not None]
        _C.dist.broadcast(tensors, 0)
        params = [p for p in module.parameters() if p.requires_grad]
        bucketed = all(p.dtype is D.float32 for p in params)
        object.__setattr__(self, "_params", params)
        object.__setattr__(self, "_reducer", _C.dist.GradientReducer(params) if bucketed else None)
        object.__setattr__(self, "_sync", True)
        object.__setattr__(self, "_armed", False)
        _live.add(self)

    def forward(self, *args, **kwargs):
        object.__setattr__(self, "_armed", self._sync and _C.grad_enabled())
        return self.module(*args, **kwargs)

    def _finish_backward(self):
        if self._armed:
            object.__setattr__(self, "_armed", False)
            if self._reducer is not None:
                self._reducer.finish()
            else:
                _C.dist.all_reduce_gradients(self._params)

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients of the backward passes inside only accumulate on each rank; the first
        backward after it reduces the sum."""
        old = self._sync
        object.__setattr__(self, "_sync", False)
        if self._reducer is not None:
            self._reducer.set_sync(False)
        try:
            yield
        finally:
            object.__setattr__(self, "_sync", old)
            if self._reducer is not None:
                self._reducer.set_sync(old)
