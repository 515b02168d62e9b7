"""torch.nn.utils: gradient clipping, in the graph (no sync), as the C++ API does."""
from .. import _C


def _params(parameters):
    if isinstance(parameters, _C.Tensor):
        return [parameters]
    return list(parameters)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Returns the total norm as a 0-d tensor (reading it is a sync point in lazy mode)."""
    if error_if_nonfinite:
        raise NotImplementedError("clip_grad_norm_: error_if_nonfinite needs a sync; not there")
    return _C.clip_grad_norm_(_params(parameters), float(max_norm), float(norm_type))


def clip_grad_value_(parameters, clip_value):
    _C.clip_grad_value_(_params(parameters), float(clip_value))


def parameters_to_vector(parameters):
    return _C.concat([_C.reshape(p, [-1]) for p in parameters], 0)


__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector"]
