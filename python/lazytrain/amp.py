"""Mixed precision: autocast (torch.autocast on the CPU) and GradScaler, sync-free: the scale,
the inf/NaN check and the skipped steps are computed in the step graph."""
import numbers

from . import _C
from . import _dtype as D
from ._modes import _Switch


class autocast(_Switch):
    """Ops on the lower-precision list (matmul, conv2d) run on `dtype` copies of their f32
    operands inside the scope (context manager or decorator); dtype bfloat16 or float16."""

    def __init__(self, device_type="cpu", dtype=D.bfloat16, enabled=True, cache_enabled=None):
        if isinstance(device_type, D.dtype):  # lt.amp.autocast(lt.bfloat16)
            device_type, dtype = "cpu", device_type
        self._args = (device_type, dtype, enabled)
        self._dtype, self._enabled = dtype, enabled
        self._scopes = []

    def __enter__(self):
        scope = _C.AutocastScope(self._dtype._code, self._enabled)
        scope.enter()
        self._scopes.append(scope)
        return self

    def __exit__(self, *exc):
        self._scopes.pop().exit()
        return False


def is_autocast_enabled():
    return _C.autocast_enabled()


class GradScaler:
    """torch.cuda.amp.GradScaler's methods and arguments; the scale is a tensor in the graph
    (get_scale() reads it: a sync point in lazy mode)."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._cpp = _C.GradScaler(float(init_scale), float(growth_factor), float(backoff_factor),
                                  int(growth_interval), bool(enabled))

    def scale(self, outputs):
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        return self._cpp.scale(outputs)

    def unscale_(self, optimizer):
        self._cpp.unscale_(optimizer._cpp)

    def step(self, optimizer, *args, **kwargs):
        if not self.is_enabled():
            return optimizer.step(*args, **kwargs)
        if args or kwargs:  # PyTorch refuses a closure too
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        optimizer._sync_options()
        self._cpp.step(optimizer._cpp)

    def update(self, new_scale=None):
        """The scale's update in the graph; new_scale (a number, or a one-element float tensor
        that does not require grad) sets it instead, as PyTorch's."""
        if new_scale is None:
            self._cpp.update()
        elif isinstance(new_scale, _C.Tensor):
            self._cpp.update_to_tensor(new_scale)
        elif isinstance(new_scale, numbers.Real) and not isinstance(new_scale, bool):
            self._cpp.update_to(float(new_scale))
        else:
            raise TypeError(f"GradScaler.update: new_scale should be a float or a 1-element "
                            f"float tensor with requires_grad=False, got "
                            f"{type(new_scale).__name__}")

    def found_inf(self, optimizer):
        """lazytrain's own: a 0-d f32 tensor, 1 where unscale_() or step() found a gradient of
        `optimizer` that is not finite (so that its step was skipped), else 0; from that call
        until update(). Summed over steps and read once, it counts the skipped steps."""
        return self._cpp.found_inf(optimizer._cpp)

    def get_scale(self):
        return self._cpp.get_scale().item() if self._cpp.is_enabled() else 1.0

    def is_enabled(self):
        return self._cpp.is_enabled()

    def state_dict(self):
        """PyTorch's keys; "scale" and "_growth_tracker" as numbers (reading them syncs)."""
        if not self.is_enabled():
            return {}
        t = self._cpp.state_tensors()
        return {"scale": t["scaler.scale"].item(),
                "_growth_tracker": t["scaler.growth_tracker"].item()}

    def load_state_dict(self, state_dict):
        if not state_dict:
            return
        from ._convert import tensor
        self._cpp.load_state_tensors({
            "scaler.scale": tensor(float(state_dict["scale"])),
            "scaler.growth_tracker": tensor(int(state_dict["_growth_tracker"]), dtype=D.int32)})
