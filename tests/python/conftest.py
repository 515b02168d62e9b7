"""Shared fixtures: the mode each test runs in, and comparisons against PyTorch."""
import numpy as np
import pytest
import torch

import lazytrain as lt

torch.set_default_dtype(torch.float32)


@pytest.fixture(params=["eager", "lazy"])
def mode(request):
    """Runs the test in eager and in lazy mode (values read back sync the pending graph)."""
    with (lt.lazy() if request.param == "lazy" else lt.eager()):
        yield request.param
        lt.mark_step()


def tol(dtype):
    return dict(rtol=1e-10, atol=1e-12) if dtype == torch.float64 else dict(rtol=2e-5, atol=2e-6)


def assert_close(got, want, **kw):
    """got: a lazytrain tensor (or number); want: a torch tensor (or number)."""
    if isinstance(want, torch.Tensor):
        assert isinstance(got, lt.Tensor), f"expected a lazytrain tensor, got {type(got)}"
        assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
        assert str(got.dtype).split(".")[1] == str(want.dtype).split(".")[1], (got.dtype,
                                                                               want.dtype)
        want = want.detach().numpy()
        got = got.detach().numpy()
    if not kw:
        kw = dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got, want, **kw)


def pair(array, requires_grad=False):
    """The same values as a lazytrain tensor and a torch tensor."""
    a = np.asarray(array)
    t = torch.tensor(a, requires_grad=requires_grad)
    x = lt.tensor(a, requires_grad=requires_grad)
    return x, t
