"""autograd.Function subclasses written once for torch and for lazytrain: values and gradients
against torch's, eagerly and lazily; saved tensors, non-tensor arguments, needs_input_grad,
None gradients, a straight-through estimator; torch's errors."""
import numpy as np
import pytest
import torch

import lazytrain as lt
from conftest import assert_close


def functions(m):
    class Exp(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class ScaledMul(m.autograd.Function):
        """a * b * scale, with a non-tensor argument and two outputs."""

        @staticmethod
        def forward(ctx, a, scale, b):
            ctx.scale = scale
            ctx.save_for_backward(a, None, b)
            return a * b * scale, a + b

        @staticmethod
        def backward(ctx, g_prod, g_sum):
            a, none, b = ctx.saved_tensors
            assert none is None
            ga = g_prod * b * ctx.scale + g_sum if ctx.needs_input_grad[0] else None
            gb = g_prod * a * ctx.scale + g_sum if ctx.needs_input_grad[2] else None
            return ga, None, gb

    class RoundStraightThrough(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.round()

        @staticmethod
        def backward(ctx, g):
            return g

    return Exp, ScaledMul, RoundStraightThrough


def test_functions_give_torchs_values_and_gradients(mode):
    rng = np.random.default_rng(4)
    a0, b0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    got = {}
    for m in (torch, lt):
        Exp, ScaledMul, Round = functions(m)
        a = m.tensor(a0, requires_grad=True)
        b = m.tensor(b0, requires_grad=True)
        frozen = m.tensor(b0)  # needs no gradient
        prod, total = ScaledMul.apply(a, 2.5, b)
        y = Exp.apply(prod).sum() + (total * total).sum() + (Round.apply(a * 3) * b).sum()
        y = y + ScaledMul.apply(a, -1.0, frozen)[0].sum()
        y.backward()
        got[m] = (y, prod, a.grad, b.grad)
    for g, w in zip(got[lt], got[torch]):
        assert_close(g, w.detach())


def test_mark_non_differentiable_outputs_do_not_require_grad(mode):
    """A sort returning its values and their indices, the indices and a mask marked
    non-differentiable: they do not require grad, their gradients in backward are zeros, and
    the values' gradient is torch's."""
    x0 = np.random.default_rng(5).standard_normal((2, 5))
    got = {}
    for m in (torch, lt):
        class Sort(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                values, indices = x.sort(dim=1)
                mask = values > 0
                ctx.mark_non_differentiable(indices, mask)
                ctx.save_for_backward(indices)
                return values, indices, mask

            @staticmethod
            def backward(ctx, g_values, g_indices, g_mask):
                (indices,) = ctx.saved_tensors
                assert int((g_indices != 0).sum()) == 0 and int((g_mask != 0).sum()) == 0
                return m.zeros_like(g_values).scatter(1, indices, g_values)

        x = m.tensor(x0, requires_grad=True)
        values, indices, mask = Sort.apply(x)
        got[m] = (values.requires_grad, indices.requires_grad, mask.requires_grad)
        (values * m.arange(5.0)).sum().backward()
        got[m] += (indices.tolist(), mask.tolist(), x.grad.numpy())
    assert got[lt][:5] == got[torch][:5] == (True, False, False) + got[torch][3:5]
    np.testing.assert_allclose(got[lt][5], got[torch][5], rtol=1e-12)


def test_function_errors_are_torchs():
    class WrongCount(lt.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g

    class Raising(lt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("raised in backward")

    x = lt.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"function WrongCountBackward returned an incorrect "
                                           r"number of gradients \(expected 2, got 1\)"):
        WrongCount.apply(x, 2.0).sum().backward()
    with pytest.raises(ValueError, match="raised in backward"):
        Raising.apply(x).sum().backward()
    with pytest.raises(NotImplementedError, match="You must implement the forward function"):
        lt.autograd.Function.apply(x)
    class Identity(lt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x  # torch's output is a new tensor all the same

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x.grad = None
    Identity.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]
    with pytest.raises(RuntimeError, match="IdentityBackward: a backward with create_graph "
                                           "reaches this custom function"):
        lt.autograd.grad(Identity.apply(x).sum(), x, create_graph=True)
    # Without an input that requires grad, apply is the forward alone.
    y = Raising.apply(lt.ones(3))
    assert not y.requires_grad and y.tolist() == [2.0, 2.0, 2.0]
