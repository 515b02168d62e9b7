"""Every bound op's values and gradients against PyTorch 1.13, in float64 and float32, eagerly
and lazily: each case is one function applied to both libraries (`m` is torch or lazytrain)."""
import contextlib

import numpy as np
import pytest
import torch
import torch.utils.checkpoint  # noqa: F401 - torch.utils.checkpoint as an attribute

import lazytrain as lt
from conftest import assert_close, pair, tol

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((3, 4))
POS = rng.uniform(0.5, 2.0, (3, 4))
SQ = rng.standard_normal((4, 4))
V = rng.standard_normal(4)
SEQ = rng.standard_normal((2, 4, 7))
W1D = rng.standard_normal((4, 3, 3))
IMG = rng.standard_normal((2, 8, 3, 4))

# name: (inputs, f(m, *tensors)); every input requires grad.
CASES = {
    "add": ([A, B], lambda m, a, b: m.add(a, b, alpha=2)),
    "sub": ([A, B], lambda m, a, b: a - b),
    "mul": ([A, B], lambda m, a, b: a * b),
    "div": ([A, POS], lambda m, a, b: a / b),
    "pow": ([POS, B], lambda m, a, b: a ** b),
    "pow_scalar": ([A], lambda m, a: a ** 2 + a ** 3.0),
    "rpow": ([A], lambda m, a: 2 ** a),
    "neg": ([A], lambda m, a: -a),
    "abs": ([A], lambda m, a: m.abs(a)),
    "exp": ([A], lambda m, a: m.exp(a)),
    "expm1": ([A], lambda m, a: m.expm1(a)),
    "log": ([POS], lambda m, a: m.log(a)),
    "log1p": ([POS], lambda m, a: a.log1p()),
    "sqrt": ([POS], lambda m, a: m.sqrt(a)),
    "rsqrt": ([POS], lambda m, a: m.rsqrt(a)),
    "tanh": ([A], lambda m, a: m.tanh(a)),
    "sigmoid": ([A], lambda m, a: m.sigmoid(a)),
    "relu": ([A], lambda m, a: m.relu(a)),
    "gelu": ([A], lambda m, a: m.nn.functional.gelu(a)),
    "gelu_tanh": ([A], lambda m, a: m.nn.functional.gelu(a, approximate="tanh")),
    "silu": ([A], lambda m, a: m.nn.functional.silu(a)),
    "leaky_relu": ([A], lambda m, a: m.nn.functional.leaky_relu(a, 0.2)),
    "elu": ([A], lambda m, a: m.nn.functional.elu(a)),
    "softplus": ([A], lambda m, a: m.nn.functional.softplus(a)),
    "sin_cos": ([A], lambda m, a: m.sin(a) * m.cos(a)),
    "reciprocal": ([POS], lambda m, a: a.reciprocal()),
    "erf": ([A], lambda m, a: m.erf(a)),
    "floor_ceil_round": ([A], lambda m, a: m.floor(a * 3) + a.ceil() * 2 + m.round(a * 5) + a),
    "remainder": ([A, POS], lambda m, a, b: m.remainder(a, b) + a % 0.7),
    "fmod_trunc": ([A, POS], lambda m, a, b: m.fmod(a, b) + a.fmod(0.7) + m.trunc(a * 3) + a),
    "prod": ([A], lambda m, a: m.prod(a) + a.prod(dim=1, keepdim=True).sum()),
    "maximum": ([A, B], lambda m, a, b: m.maximum(a, b)),
    "minimum": ([A, B], lambda m, a, b: m.minimum(a, b)),
    "where": ([A, B], lambda m, a, b: m.where(a > b, a, b)),
    "where_method": ([A, B], lambda m, a, b: a.where(a > 0, b)),
    "clamp": ([A], lambda m, a: m.clamp(a, -0.5, 0.5)),
    "clamp_min": ([A], lambda m, a: a.clamp(min=0.1)),
    "masked_fill": ([A], lambda m, a: a.masked_fill(a < 0, 0.5)),
    "scalars": ([A], lambda m, a: (3 - a) * 2.5 + 1 / (a * a + 1) - a / 4),
    "sum": ([A], lambda m, a: m.sum(a)),
    "sum_dim": ([A], lambda m, a: a.sum(dim=1, keepdim=True)),
    "sum_dims": ([A], lambda m, a: a.sum((0, 1))),
    "mean": ([A], lambda m, a: a.mean(dim=0)),
    "max": ([A], lambda m, a: a.max()),
    "max_dim": ([A], lambda m, a: m.max(a, dim=1).values),
    "min_dim": ([A], lambda m, a: a.min(0, keepdim=True)[0]),
    "amax": ([A], lambda m, a: m.amax(a, dim=1)),
    "logsumexp": ([A], lambda m, a: m.logsumexp(a, dim=1)),
    "var": ([A], lambda m, a: a.var(dim=1)),
    "std": ([A], lambda m, a: a.std(unbiased=False)),
    "cumsum": ([A], lambda m, a: a.cumsum(dim=1)),
    "softmax": ([A], lambda m, a: m.softmax(a, dim=1)),
    "log_softmax": ([A], lambda m, a: a.log_softmax(-1)),
    "reshape": ([A], lambda m, a: a.reshape(2, 6) * m.arange(6)),
    "view": ([A], lambda m, a: a.view(-1) * m.arange(12)),
    "permute": ([A], lambda m, a: a.reshape(3, 2, 2).permute(2, 0, 1) * m.arange(3).view(3, 1)),
    "transpose": ([A], lambda m, a: a.transpose(0, 1) @ a),
    "t_and_T": ([A], lambda m, a: a.t() * a.T),
    "expand": ([V], lambda m, a: a.unsqueeze(0).expand(3, 4) * m.arange(3).view(3, 1)),
    "squeeze": ([A], lambda m, a: a.reshape(1, 3, 1, 4).squeeze() * a),
    "flatten": ([A], lambda m, a: a.reshape(3, 2, 2).flatten(1) * a),
    "narrow": ([A], lambda m, a: a.narrow(1, 1, 2)),
    "select": ([A], lambda m, a: a.select(1, -1)),
    "cat": ([A, B], lambda m, a, b: m.cat([a, b], dim=1) * m.arange(8)),
    "stack": ([A, B], lambda m, a, b: m.stack([a, b * 2], dim=1)),
    "split": ([A], lambda m, a: a.split(2, dim=1)[1] * 3 + a.split([1, 3], 1)[0]),
    "chunk": ([A], lambda m, a: m.chunk(a, 2, dim=1)[0] - a.chunk(2, 1)[1]),
    "unbind": ([A], lambda m, a: a.unbind(1)[2] * a.unbind(0)[1][:3]),
    "gather": ([A], lambda m, a: a.gather(1, m.tensor([[0, 3], [1, 1], [2, 0]]))),
    "index_select": ([A], lambda m, a: a.index_select(1, m.tensor([3, 0, 0]))),
    "flip": ([A], lambda m, a: a.flip(1) * m.arange(4)),
    "roll": ([A], lambda m, a: a.roll(1, 1) * m.arange(4)),
    "tril": ([SQ], lambda m, a: a.tril() + a.triu(1) * 2),
    "matmul": ([A, SQ], lambda m, a, b: a @ b),
    "matvec": ([A, V], lambda m, a, b: m.matmul(a, b)),
    "bmm": ([A, B], lambda m, a, b: m.bmm(a.reshape(3, 2, 2), b.reshape(3, 2, 2))),
    "outer": ([V, V], lambda m, a, b: m.outer(a, b * 2)),
    "topk": ([A], lambda m, a: a.gather(1, a.topk(2, dim=1).indices) + a.topk(2).values.detach()),
    "vecmat": ([V, SQ], lambda m, a, b: a @ b + m.matmul(a, a)),
    "sort": ([A], lambda m, a: a.sort(dim=1, descending=True)[0]),
    "linear": ([A, SQ, V], lambda m, a, w, b: m.nn.functional.linear(a, w, b)),
    "mse_loss": ([A, B], lambda m, a, b: m.nn.functional.mse_loss(a, b)),
    "cross_entropy": ([A], lambda m, a: m.nn.functional.cross_entropy(a, m.tensor([0, 3, 1]))),
    "cross_entropy_smooth": ([A], lambda m, a: m.nn.functional.cross_entropy(
        a, m.tensor([0, 3, 1]), label_smoothing=0.1, reduction="sum")),
    "layer_norm": ([A, V, V], lambda m, a, w, b: m.nn.functional.layer_norm(a, (4,), w, b)),
    "l1_loss": ([A, B], lambda m, a, b: m.nn.functional.l1_loss(a, b)),
    "bce_logits": ([A, POS], lambda m, a, t: m.nn.functional.binary_cross_entropy_with_logits(
        a, t / 2)),
    "embedding": ([SQ], lambda m, w: m.nn.functional.embedding(m.tensor([[0, 2], [3, 2]]), w)),
    "nll_loss": ([A], lambda m, a: m.nn.functional.nll_loss(a.log_softmax(1), m.tensor([1, 0, 3]),
                                                             reduction="sum")),
    "cross_entropy_weight": ([A, POS], lambda m, a, p: m.nn.functional.cross_entropy(
        a, m.tensor([1, -100, 3]), weight=p[0].detach(), ignore_index=-100)),
    "smooth_l1_loss": ([A, B], lambda m, a, b: m.nn.functional.smooth_l1_loss(a, b, beta=0.5)),
    "hardswish": ([A], lambda m, a: m.nn.functional.hardswish(a * 4)),
    # PyTorch's kernel multiplies by 1.0f / 6.0f, an f32 constant, in float64 too.
    "hardsigmoid": ([A], lambda m, a: m.nn.functional.hardsigmoid(a * 4), dict(rtol=1e-7)),
    "mish": ([A], lambda m, a: m.nn.functional.mish(a)),
    "pad": ([A], lambda m, a: m.nn.functional.pad(a, (1, 2, 0, 1), value=0.5) * 3),
    "baddbmm": ([A, B, SQ], lambda m, i, a, b: m.baddbmm(
        i.reshape(3, 2, 2), a.reshape(3, 2, 2), b.reshape(4, 2, 2)[:3], beta=0.5, alpha=2)),
    "scatter_add": ([A, B], lambda m, a, b: a.scatter_add(1, m.tensor([[0, 1], [2, 2], [3, 0]]),
                                                          b[:, :2])),
    "index_add": ([A, B], lambda m, a, b: a.index_add(0, m.tensor([2, 0]), b[:2], alpha=2)),
    "adaptive_max_pool2d": ([A], lambda m, a: m.nn.functional.adaptive_max_pool2d(
        a.reshape(1, 1, 3, 4), (2, 2))),
    "clamp_tensors": ([A, B], lambda m, a, b: a.clamp(min=b, max=b + 1)),
    "var_correction": ([A], lambda m, a: m.var(a, dim=(0, 1), correction=0)),
    "amin": ([A], lambda m, a: a.amin(dim=(0,), keepdim=True)),
    "logaddexp": ([A, B], lambda m, a, b: m.logaddexp(a, b)),
    "split_sizes": ([A], lambda m, a: m.split(a, [1, 2], dim=0)[1] * 2),
    "swapaxes": ([A], lambda m, a: a.swapaxes(0, 1) * m.arange(3)),
    "squeeze_dim": ([A], lambda m, a: a.unsqueeze(1).squeeze(1) * a),
    "one_hot": ([A], lambda m, a: a * m.nn.functional.one_hot(m.tensor([0, 3, 1]), 4)),
    "relu6_hardtanh": ([A], lambda m, a: m.nn.functional.relu6(a * 5 + 0.01) +
                       m.nn.functional.hardtanh(a * 2 + 0.01, -0.5, 1.5)),
    "logsigmoid": ([A], lambda m, a: m.nn.functional.logsigmoid(a)),
    "normalize": ([A], lambda m, a: m.nn.functional.normalize(a, dim=1)),
    "cosine_similarity": ([A, B], lambda m, a, b: m.nn.functional.cosine_similarity(a, b)),
    "bce": ([POS, POS], lambda m, p, t: m.nn.functional.binary_cross_entropy(
        p / 2.5, t / 2.5, reduction="sum")),
    "kl_div": ([A, POS], lambda m, a, t: m.nn.functional.kl_div(
        a.log_softmax(1), (t * (t > 1)).detach() / 4, reduction="batchmean")),
    "kl_div_log": ([A, B], lambda m, a, b: m.nn.functional.kl_div(
        a.log_softmax(1), b.log_softmax(1), reduction="sum", log_target=True)),
    "loss_modules": ([A, B], lambda m, a, b: m.nn.L1Loss()(a, b) + m.nn.SmoothL1Loss(beta=0.5)(
        a, b) + m.nn.BCEWithLogitsLoss()(a, b.sigmoid()) + m.nn.NLLLoss()(
        a.log_softmax(1), m.tensor([0, 1, 3])) + m.nn.KLDivLoss(reduction="sum")(
        a.log_softmax(1), b.softmax(1)) + m.nn.BCELoss()(a.sigmoid(), b.sigmoid())),
    "activation_modules": ([A], lambda m, a: m.nn.ELU(0.5)(a) + m.nn.Softplus(2)(a) +
                           m.nn.Mish()(a) + m.nn.Hardswish()(a * 4) + m.nn.LogSigmoid()(a) +
                           m.nn.ReLU6()(a * 7 + 0.01) + m.nn.Hardtanh()(a * 2 + 0.01)),
    # Compositions (lazytrain/_composite.py).
    "stacks": ([A, B], lambda m, a, b: m.hstack([a, b]).sum(0) + m.vstack([a, b]).sum(1).sum()),
    "lerp_addc": ([A, B, POS], lambda m, a, b, p: m.lerp(a, b, 0.3) + a.lerp(b, p) +
                  m.addcmul(a, b, p, value=0.5) + a.addcdiv(b, p, value=2)),
    "addmm": ([A, SQ, SQ[:, :4]], lambda m, a, x, y: m.addmm(a[:, :4].T @ a, x, y, beta=0.5,
                                                              alpha=2)),
    "flips_tile": ([A], lambda m, a: m.fliplr(a) * 2 + m.flipud(a) + m.tile(a, (2,))[:, :4]),
    "repeat_interleave": ([A], lambda m, a: m.repeat_interleave(a, 2, dim=1)[:, ::2] +
                          a.repeat_interleave(m.tensor([1, 2, 1]), dim=0)[1:]),
    "repeat_interleave_flat": ([V], lambda m, v: v.repeat_interleave(3)),
    "log2_log10_exp2": ([POS], lambda m, p: m.log2(p) + p.log10() + m.exp2(p)),
    "hypot": ([A, B], lambda m, a, b: m.hypot(a, b)),
    "movedim_unflatten": ([A], lambda m, a: m.movedim(a.reshape(3, 2, 2), 0, -1).reshape(2, 6) +
                          m.unflatten(a, 1, (2, 2)).reshape(2, 6)),
    "take": ([A], lambda m, a: m.take(a, m.tensor([[0, 5], [11, 5]])) +
             m.take_along_dim(a, a.argsort(dim=1), dim=1)[:2, :2]),
    "std_var_mean": ([A], lambda m, a: m.std_mean(a, dim=1)[0] + m.var_mean(a, 1)[1] +
                     m.var_mean(a, dim=0, unbiased=False)[0][:3]),
    "tensordot": ([A, B], lambda m, a, b: m.tensordot(a, b, dims=([0], [0])) +
                  m.tensordot(a.reshape(3, 2, 2), b.reshape(2, 2, 3), dims=2).sum()),
    "kron": ([A[:2, :2], B[:2, :3]], lambda m, a, b: m.kron(a, b)),
    "cross": ([A[:, :3], B[:, :3]], lambda m, a, b: m.cross(a, b, dim=1) + a.cross(b)),
    "cdist_dist": ([A, B], lambda m, a, b: m.cdist(a, b + 3) + m.cdist(a, b, p=1) +
                   m.dist(a, b) + m.dist(a, b, 3)),
    "median": ([A], lambda m, a: m.median(a, dim=1).values + m.median(a) +
               a.median(0, keepdim=True)[0][0, :3]),
    "nan_to_num": ([A], lambda m, a: m.nan_to_num(m.log(a), nan=0.5, neginf=-7.0) +
                   m.isnan(m.log(a)).float() + m.isinf(1 / (a * 0)).float()),
    "unfold_index_fill_copy": ([A, B[:2]], lambda m, a, b: a.unfold(1, 2, 1).sum(-1)[:, :3] +
                               a.index_fill(1, m.tensor([0, 2]), -1.5)[:, :3] +
                               a.index_copy(0, m.tensor([2, 0]), b)[:, 1:]),
    # More of nn.functional (lazytrain/nn/_functional_more.py).
    "pool1d": ([SEQ], lambda m, x: m.nn.functional.max_pool1d(x, 3, 2, 1).sum(-1) +
               m.nn.functional.avg_pool1d(x, 3, 2, 1, count_include_pad=False).sum(-1) +
               m.nn.functional.adaptive_avg_pool1d(x, 3).sum(-1) +
               m.nn.functional.adaptive_max_pool1d(x, 2).sum(-1)),
    "conv_transpose1d": ([SEQ, W1D], lambda m, x, w: m.nn.functional.conv_transpose1d(
        x, w, stride=2, padding=1, output_padding=1)),
    "pixel_shuffle": ([IMG], lambda m, x: m.nn.functional.pixel_unshuffle(
        m.nn.functional.pixel_shuffle(x, 2) * 3, 2) + m.nn.functional.pixel_shuffle(x, 2).sum()),
    # celu's alpha is 0.5: PyTorch's CELU gradient rounds 1 / alpha to float32.
    "activations_more": ([A], lambda m, a: m.nn.functional.glu(a).sum() +
        m.nn.functional.hardshrink(a) + m.nn.functional.softshrink(a, 0.3) +
        m.nn.functional.tanhshrink(a) +
        m.nn.functional.threshold(a, 0.1, 2.0) + m.nn.functional.celu(a, 0.5) +
        m.nn.functional.selu(a) + m.nn.functional.softmin(a, 1) +
        m.nn.functional.softsign(a)),
    "unfold_fold": ([IMG], lambda m, x: m.nn.functional.fold(m.nn.functional.unfold(
        x, (2, 3), padding=1, stride=(1, 2)) * 2, (3, 4), (2, 3), padding=1, stride=(1, 2)) +
        m.nn.functional.unfold(x, 2, dilation=(1, 2)).sum() +
        m.nn.functional.fold(x.reshape(2, 8, 12)[:, :, :4], (3, 4), 2, stride=(1, 2)).sum()),
    "prelu": ([SEQ, V], lambda m, x, w: m.nn.functional.prelu(x, w)),
    "instance_norm": ([SEQ, V, V], lambda m, x, w, b: m.nn.functional.instance_norm(
        x, weight=w, bias=b)),
    "losses_more": ([A, B, POS], lambda m, a, b, p: m.nn.functional.huber_loss(a, b, delta=0.6) +
                    m.nn.functional.margin_ranking_loss(a, b, (b > 0).to(b.dtype) * 2 - 1, 0.2) +
                    m.nn.functional.hinge_embedding_loss(a, (b > 0).to(b.dtype) * 2 - 1) +
                    m.nn.functional.soft_margin_loss(a, (b > 0).to(b.dtype) * 2 - 1) +
                    m.nn.functional.multilabel_soft_margin_loss(a, (b > 0).to(b.dtype)) +
                    m.nn.functional.poisson_nll_loss(a, p) +
                    m.nn.functional.poisson_nll_loss(p, p * 3, log_input=False, full=True) +
                    m.nn.functional.gaussian_nll_loss(a, b, p, full=True)),
    "distance_losses": ([A, B, POS], lambda m, a, b, p: m.nn.functional.cosine_embedding_loss(
        a, b, m.tensor([1, -1, 1]), margin=0.1) + m.nn.functional.triplet_margin_loss(
        a, b, p, margin=2.0) + m.nn.functional.triplet_margin_loss(a, b, p, p=1, swap=True) +
        m.nn.functional.pairwise_distance(a, b, keepdim=True).sum()),
}


def _inputs(arrays, dtype, lib):
    if lib is torch:
        return [torch.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]
    ltd = lt.float64 if dtype == torch.float64 else lt.float32
    return [lt.tensor(a, dtype=ltd, requires_grad=True) for a in arrays]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients(name, dtype, mode):
    arrays, f, *loose = CASES[name]
    tols = {**tol(dtype), **(loose[0] if loose and dtype == torch.float64 else {})}
    xs_t, xs = _inputs(arrays, dtype, torch), _inputs(arrays, dtype, lt)
    want, got = f(torch, *xs_t), f(lt, *xs)
    assert_close(got.detach(), want.detach(), **tols)
    seed = torch.tensor(rng.standard_normal(tuple(want.shape)), dtype=dtype)
    want.backward(seed)
    got.backward(lt.tensor(seed))
    for x, x_t in zip(xs, xs_t):
        if x_t.grad is None:
            assert x.grad is None
        else:
            assert_close(x.grad, x_t.grad, **tols)


def test_conv_pool_batchnorm_values_and_gradients(mode):
    x_np = rng.standard_normal((2, 3, 8, 8))
    w_np = rng.standard_normal((4, 3, 3, 3))
    results = {}
    for m in (torch, lt):
        F = m.nn.functional
        x = m.tensor(x_np, requires_grad=True)
        w = m.tensor(w_np, requires_grad=True)
        b = m.tensor(V, requires_grad=True)
        y = F.conv2d(x, w, b, stride=1, padding=1)
        rm, rv = m.zeros(4, dtype=m.float64), m.ones(4, dtype=m.float64)
        y = F.batch_norm(y, rm, rv, training=True)
        y = F.max_pool2d(F.relu(y), 2)
        y = F.avg_pool2d(y, 2) + F.adaptive_avg_pool2d(y, 2)
        y = F.conv2d(y, w[:, :3, :2, :2].transpose(0, 1).contiguous(), stride=2, groups=1)
        loss = (y * y).sum()
        loss.backward()
        results[m] = (y, x.grad, w.grad, b.grad, rm, rv)
    for got, want in zip(results[lt], results[torch]):
        assert_close(got.detach(), want.detach(), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("a, b", [
    (np.array([1, 2], dtype=np.int32), 2), (np.array([1, 2], dtype=np.int64), 0.5),
    (np.array([True, False]), 1), (np.array([1.0, 2.0], dtype=np.float32), 2.5),
    (np.array([1.0, 2.0], dtype=np.float64), 3), (np.array([1, 2], dtype=np.int32), True),
])
def test_number_operands_promote_as_torch(a, b):
    x, x_t = lt.tensor(a), torch.tensor(a)
    for f in (lambda p, q: p + q, lambda p, q: q * p, lambda p, q: p / q, lambda p, q: q - p,
              lambda p, q: p > q, lambda p, q: p == q):
        try:
            want = f(x_t, b)
        except RuntimeError:  # bool subtraction: both refuse it
            with pytest.raises(RuntimeError, match="Subtraction.*bool"):
                f(x, b)
            continue
        assert_close(f(x, b), want)


def test_int_and_bool_ops():
    a, a_t = lt.tensor([3, -1, 4]), torch.tensor([3, -1, 4])
    assert_close(a * 2 - 1, a_t * 2 - 1)
    assert_close(a.argmax(), a_t.argmax())
    assert_close(lt.argmin(a, dim=0, keepdim=True), torch.argmin(a_t, dim=0, keepdim=True))
    assert_close(a.sum(), a_t.sum())
    assert_close(a.max(dim=0).indices, a_t.max(dim=0).indices)
    m, m_t = a > 0, a_t > 0
    n, n_t = a < 4, a_t < 4
    assert_close(~m, ~m_t)
    assert_close(m & n, m_t & n_t)
    assert_close(m | n, m_t | n_t)
    assert_close(m ^ n, m_t ^ n_t)
    assert_close(a.argsort(), a_t.argsort())
    assert_close(a.sort().indices, a_t.sort().indices)


def test_bitwise_ops_on_integers_and_bool_are_torchs(mode):
    """&, |, ^, ~ and the bitwise_* functions: integers in two's complement (i64, i32, mixed
    widths), bool as logic, an integer with a bool or a Python int, in place; a float operand is
    torch's error."""
    rng = np.random.default_rng(17)
    a64, b64 = rng.integers(-2**40, 2**40, (3, 4)), rng.integers(-1000, 1000, (4,))
    a32 = rng.integers(-2**30, 2**30, (3, 1)).astype(np.int32)
    m = rng.random((3, 4)) < 0.5
    got, want = [], []
    for M, out in ((lt, got), (torch, want)):
        x, y, z, b = M.tensor(a64), M.tensor(b64), M.tensor(a32), M.tensor(m)
        out += [x & y, x | y, x ^ y, ~x, z & y, z | x, ~z, b & x, b | y, b ^ b, ~b,
                x & 0xFF, 7 | y, y ^ -1, b & True, M.bitwise_and(x, y), M.bitwise_or(z, 3),
                M.bitwise_xor(b, ~b), M.bitwise_not(y), x.bitwise_and(y), z.bitwise_not()]
        w = x.clone()
        w &= y
        w |= 12
        w ^= z
        out.append(w)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == getattr(lt, str(w.dtype).split(".")[1]), (g.dtype, w.dtype)
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    f = lt.tensor([1.5, 2.0])
    with pytest.raises(RuntimeError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        f & lt.tensor([1, 2])
    with pytest.raises(RuntimeError, match="\"bitwise_not_cpu\" not implemented for 'Float'"):
        ~f
    with pytest.raises(RuntimeError, match="\"bitwise_or_cpu\" not implemented for 'Float'"):
        lt.tensor([1, 2]) | 2.5


def test_in_place_ops(mode):
    x, x_t = lt.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    for v, v_t in [(x, x_t)]:
        v += 1
        v_t += 1
        v *= lt.tensor([1.0, 2.0, 3.0])
        v_t *= torch.tensor([1.0, 2.0, 3.0])
        v -= 0.5
        v_t -= 0.5
        v /= 2
        v_t /= 2
        v.add_(lt.ones(2, 3), alpha=3)
        v_t.add_(torch.ones(2, 3), alpha=3)
    assert_close(x, x_t)
    x.clamp_(0, 4).masked_fill_(x > 3.5, -1.0)
    x_t.clamp_(0, 4).masked_fill_(x_t > 3.5, -1.0)
    assert_close(x, x_t)
    assert_close(x.zero_(), x_t.zero_())
    assert_close(x.fill_(2), x_t.fill_(2))
    i = lt.zeros(3, dtype=lt.int64)
    i += 2
    with pytest.raises(RuntimeError, match="Long"):
        i += 0.5


def test_backward_accumulates_and_hooks(mode):
    x = lt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    (x * x).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0, 9.0]
    assert seen == [[2.0, 4.0, 6.0], [3.0, 3.0, 3.0]]
    x.grad = None
    assert x.grad is None


def test_composed_ops_match_torch(mode):
    a_np = np.array([[1.5, -2.0, 0.0], [0.25, 3.0, -0.5]])
    results = {}
    for m in (torch, lt):
        a = m.tensor(a_np, requires_grad=True)
        outs = [m.square(a), a.sign(), m.norm(a), a.norm(p=1, dim=1), m.norm(a, p=3, dim=0),
                m.norm(a, p=float("inf")), m.all(a > -3), a.any(dim=1), (a > 0).all(dim=0),
                m.count_nonzero(a, dim=1), m.masked_select(a, a > 0), m.nonzero(a),
                m.isclose(a, a + 1e-9), m.eye(3, 4, dtype=m.float64),
                m.linspace(-1, 2, 7, dtype=m.float64), m.linspace(0, 1, 5)]
        (outs[0].sum() + outs[2] + outs[3].sum() + outs[4].sum() + outs[10].sum()).backward()
        results[m] = outs + [a.grad]
        assert m.allclose(a, a + 1e-9) and not m.allclose(a, a + 1)
        assert m.equal(a, a.clone()) and not m.equal(a, a[:1])
    for got, want in zip(results[lt], results[torch]):
        assert_close(got.detach(), want.detach(), rtol=1e-7, atol=1e-7)


def test_random_integers_and_permutations(mode):
    lt.manual_seed(5)
    r = lt.randint(-3, 4, (2000,))
    assert r.dtype is lt.int64 and set(r.tolist()) == set(range(-3, 4))
    assert lt.randint(5, (3, 2)).shape == (3, 2)
    p = lt.randperm(50)
    assert sorted(p.tolist()) == list(range(50)) and p.tolist() != list(range(50))
    lt.manual_seed(5)
    assert lt.randint(-3, 4, (2000,)).tolist() == r.tolist()


def test_common_script_idioms(mode):
    a_np = np.arange(6.0).reshape(2, 3)
    results = {}
    for m in (torch, lt):
        a = m.tensor(a_np, requires_grad=True)
        r = a.repeat(2, 1, 2) * m.arange(6.0)
        b = a.detach().clone()
        b.mul_(2).exp_().log_().sqrt_().pow_(2)
        c = m.nn.functional.relu(a - 2, inplace=False)
        r.sum().backward()
        results[m] = [r, b, c, a.grad, a.type(m.float32), a.cpu()]
        assert a.type() == "torch.DoubleTensor" and not a.is_cuda
        assert str(a.device) == "cpu"
    for got, want in zip(results[lt], results[torch]):
        assert_close(got.detach(), want.detach())
    lt.backends.cudnn.benchmark = True
    lt.cuda.manual_seed_all(0)
    with pytest.raises(ValueError, match="CPU"):
        lt.ones(1).cuda()


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ii", [(3, 3)]), ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]), ("bn,anm,bm->ba",
                                                                  [(3, 2), (4, 2, 5), (3, 5)])])
def test_einsum_values_and_gradients_are_torchs(equation, shapes, mode):
    rng = np.random.default_rng(len(equation))
    arrays = [rng.standard_normal(s) for s in shapes]
    ours = [lt.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, y_t = lt.einsum(equation, *ours), torch.einsum(equation, *theirs)
    assert_close(y, y_t)
    (y * y).sum().backward()
    (y_t * y_t).sum().backward()
    for a, b in zip(ours, theirs):
        assert_close(a.grad, b.grad)


def test_diagonal_is_a_view_and_diag_trace_unique_are_torchs(mode):
    x, x_t = pair(np.arange(12.0).reshape(3, 4))
    assert_close(x.diagonal(1), x_t.diagonal(1))
    x.diagonal().fill_(-1.0)
    x_t.diagonal().fill_(-1.0)
    assert_close(x, x_t)
    assert_close(lt.diag(lt.tensor([1.0, 2.0]), -1), torch.diag(torch.tensor([1.0, 2.0]), -1))
    assert_close(x.trace(), x_t.trace())
    u, u_t = pair(np.array([[3, 1, 2], [3, -1, 1]]))
    for got, want in zip(lt.unique(u, return_inverse=True, return_counts=True),
                         torch.unique(u_t, return_inverse=True, return_counts=True)):
        assert_close(got, want)
    assert_close(lt.nonzero(x > 5), torch.nonzero(x_t > 5))
    assert_close(lt.masked_select(x, x > 5), torch.masked_select(x_t, x_t > 5))


def test_python_division_operators_are_torchs():
    i, i_t = lt.tensor([7, -7, 7, -7, 0]), torch.tensor([7, -7, 7, -7, 0])
    j, j_t = lt.tensor([3, 3, -3, -3, 5]), torch.tensor([3, 3, -3, -3, 5])
    assert_close(i % j, i_t % j_t)
    assert_close(i // j, i_t // j_t)
    assert_close(i % 4, i_t % 4)
    assert_close(7 // j, 7 // j_t)
    assert_close(i % 2.5, i_t % 2.5)  # a float number makes them float32
    x, x_t = lt.tensor(A), torch.tensor(A)
    assert_close(x // 0.3, x_t // 0.3)
    assert_close(2.5 % lt.tensor(POS), 2.5 % torch.tensor(POS))
    assert_close(lt.floor_divide(x, lt.tensor(POS)), torch.floor_divide(x_t, torch.tensor(POS)))
    for mode in ("trunc", "floor"):
        assert_close(lt.div(i, j, rounding_mode=mode), torch.div(i_t, j_t, rounding_mode=mode))
        x, x_t = lt.tensor([7.5, -7.5, 0.5]), torch.tensor([7.5, -7.5, 0.5])
        assert_close(x.div(2, rounding_mode=mode), x_t.div(2, rounding_mode=mode))
    assert_close(lt.round(lt.tensor([1.25, -2.35]), decimals=1),
                 torch.round(torch.tensor([1.25, -2.35]), decimals=1))
    assert_close(lt.floor(i), torch.floor(i_t))  # integers stay integers
    k, k_t = i.clone(), i_t.clone()
    k %= 3
    k_t %= 3
    assert_close(k, k_t)
    k //= 2
    k_t //= 2
    assert_close(k, k_t)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        k %= 2.5
    with pytest.raises(RuntimeError, match="remainder: integer division by zero"):
        (i % lt.zeros(5, dtype=lt.int64)).tolist()
    with pytest.raises(ValueError, match="rounding_mode to be one of None, 'trunc', or 'floor'"):
        lt.div(i, j, rounding_mode="up")


def test_integer_pow_fmod_prod_matmul_and_clamp_bounds_are_torchs():
    i, i_t = lt.tensor([7, -7, 2, -1, 0, 1]), torch.tensor([7, -7, 2, -1, 0, 1])
    e, e_t = lt.tensor([2, 3, -1, -3, 4, -2]), torch.tensor([2, 3, -1, -3, 4, -2])
    assert_close(i ** e, i_t ** e_t)  # a negative exponent: 0, but for bases 1 and -1
    assert_close(i ** 3, i_t ** 3)
    assert_close(i ** 0.5, i_t ** 0.5)
    assert_close(lt.fmod(i, 3), torch.fmod(i_t, 3))
    assert_close(i.fmod(-2.5), i_t.fmod(-2.5))
    assert_close(lt.trunc(lt.tensor([2.7, -2.7])), torch.trunc(torch.tensor([2.7, -2.7])))
    assert_close(lt.prod(i[:4]), torch.prod(i_t[:4]))
    assert_close(lt.tensor([[True, False], [True, True]]).prod(1),
                 torch.tensor([[True, False], [True, True]]).prod(1))
    m, m_t = i[:4].reshape(2, 2), i_t[:4].reshape(2, 2)
    assert_close(m @ m, m_t @ m_t)
    assert_close(i.clamp(0), i_t.clamp(0))
    assert_close(i.clamp(-0.5, 1.5), i_t.clamp(-0.5, 1.5))
    assert_close(lt.clamp(i, max=3), torch.clamp(i_t, max=3))
    k, k_t = i.clone(), i_t.clone()
    k.clamp_(-2, 2)
    k_t.clamp_(-2, 2)
    assert_close(k, k_t)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        k.clamp_(0.5)
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
        i ** -1
    with pytest.raises(RuntimeError, match="fmod: integer division by zero"):
        lt.fmod(i, lt.zeros(6, dtype=lt.int64)).tolist()


@pytest.mark.parametrize("mode", ["eager", "lazy"])
def test_autograd_grad_and_double_backward_are_torchs(mode):
    results = {}
    for m in (torch, lt):
        x = m.tensor(A, dtype=m.float64, requires_grad=True)
        w = m.tensor(B.T[:, :3].copy(), dtype=m.float64, requires_grad=True)  # [4, 3]
        with (lt.lazy() if m is lt and mode == "lazy" else contextlib.nullcontext()):
            critic = m.tanh(x @ w).sum()
            (gx,) = m.autograd.grad(critic, x, create_graph=True)
            penalty = ((gx * gx).sum(dim=1).sqrt() - 1) ** 2
            (gw,) = m.autograd.grad(penalty.sum(), w)
            h = x * 2
            gh, gx2 = m.autograd.grad([(h * h).sum()], [h, x])
            none = m.autograd.grad((x * 3).sum(), [x, m.ones(2, requires_grad=True)],
                                   allow_unused=True)[1]
        assert x.grad is None and w.grad is None and none is None
        results[m] = [gx, gw, gh, gx2]
    for got, want in zip(results[lt], results[torch]):
        assert_close(got, want.detach())
    x = lt.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        lt.autograd.grad(x * 2, x)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        lt.autograd.grad((x * 2).sum(), [x, lt.ones(2, requires_grad=True)])


def test_relu6_and_hardtanh_have_no_slope_at_their_bounds_as_torch(mode):
    points = [-2.0, -1.0, 0.0, 0.5, 1.0, 6.0, 7.0]
    grads = {}
    for m in (torch, lt):
        x = m.tensor(points, dtype=m.float64, requires_grad=True)
        y = m.nn.ReLU6()(x) + m.nn.functional.hardtanh(x) * 2 + m.nn.Hardtanh(-2.0, 0.5)(x) * 3
        y.sum().backward()
        grads[m] = (y, x.grad)
    for got, want in zip(grads[lt], grads[torch]):
        assert_close(got, want.detach())


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("mode", ["eager", "lazy"])
def test_backward_create_graph_inputs_and_retain_graph_are_torchs(mode):
    results = {}
    for m in (torch, lt):
        x = m.tensor(A, dtype=m.float64, requires_grad=True)
        w = m.tensor(B.T[:, :3].copy(), dtype=m.float64, requires_grad=True)  # [4, 3]
        with (lt.lazy() if m is lt and mode == "lazy" else contextlib.nullcontext()):
            (m.tanh(x @ w) ** 2).sum().backward(create_graph=True)
            assert x.grad.requires_grad
            (gw,) = m.autograd.grad((x.grad * x.grad).sum(), w)  # the gradient's own gradient
            x.grad = None
            w.grad = None
            h = x * w[:, 0]
            ((h * h).sum() + w.sum()).backward(inputs=[h, x])
            assert w.grad is None
            gh, gx = h.grad, x.grad
            x.grad = None
            y = m.exp(w).sum()
            y.backward(retain_graph=True)
            m.autograd.backward([y], [m.tensor(0.5, dtype=m.float64)])
            with pytest.raises(RuntimeError, match="backward"):
                y.backward()
        results[m] = [gw, gh, gx, w.grad]
    for got, want in zip(results[lt], results[torch]):
        assert_close(got, want.detach())
    x = lt.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match="'inputs' argument to backward\\(\\) cannot be empty"):
        (x * 2).sum().backward(inputs=[])
    with pytest.raises(RuntimeError, match="does not require grad"):
        (x * 2).sum().backward(inputs=[lt.ones(2)])


@pytest.mark.parametrize("mode", ["eager", "lazy"])
def test_checkpoint_and_checkpoint_sequential_give_torchs_gradients(mode):
    results = {}
    for m in (torch, lt):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Linear(4, 8), m.nn.Tanh(), m.nn.Linear(8, 8), m.nn.GELU(),
                              m.nn.Linear(8, 4)).double()
        results[m] = net
    for (n_t, p_t), (n_l, p_l) in zip(results[torch].named_parameters(),
                                      results[lt].named_parameters()):
        assert n_t == n_l
        with lt.no_grad():
            p_l.copy_(lt.tensor(p_t.detach().numpy()))
    grads = {}
    for m in (torch, lt):
        net = results[m]
        x = m.tensor(A[:, :4].copy(), dtype=m.float64, requires_grad=True)
        with (lt.lazy() if m is lt and mode == "lazy" else contextlib.nullcontext()):
            h = m.utils.checkpoint.checkpoint(lambda t, s: net[0](t) * s, x, 2.0,
                                              use_reentrant=True)
            y = m.utils.checkpoint.checkpoint_sequential(net[1:], 2, h)
            (y * y).sum().backward()
        grads[m] = [x.grad] + [p.grad for p in net.parameters()]
    for got, want in zip(grads[lt], grads[torch]):
        assert_close(got, want)


def test_composed_integer_and_random_functions_match_torch(mode):
    edges = np.array([-1.0, 0.0, 0.5, 2.0])
    x = np.array([[-2.0, 0.0, 0.7], [2.0, 3.0, 0.5]])
    for right in (False, True):
        got = lt.searchsorted(lt.tensor(edges), lt.tensor(x), right=right)
        want = torch.searchsorted(torch.tensor(edges), torch.tensor(x), right=right)
        assert got.dtype is lt.int64 and got.tolist() == want.tolist()
        assert lt.bucketize(lt.tensor(x), lt.tensor(edges), right=right).tolist() == (
            torch.bucketize(torch.tensor(x), torch.tensor(edges), right=right).tolist())
    rows = np.array([[0.0, 1.0, 3.0], [-1.0, 2.0, 2.5]])
    assert lt.searchsorted(lt.tensor(rows), lt.tensor([[1.5], [2.0]])).tolist() == (
        torch.searchsorted(torch.tensor(rows), torch.tensor([[1.5], [2.0]])).tolist())
    a, b = lt.arange(3), lt.arange(4)
    for indexing in ("ij", "xy"):
        ours = lt.meshgrid(a, b, indexing=indexing)
        theirs = torch.meshgrid(torch.arange(3), torch.arange(4), indexing=indexing)
        assert [g.tolist() for g in ours] == [g.tolist() for g in theirs]
    assert_close(lt.logspace(-1, 2, 5), torch.logspace(-1, 2, 5))
    assert lt.argwhere(lt.tensor(x) > 0).tolist() == torch.argwhere(torch.tensor(x) > 0).tolist()
    lt.manual_seed(0)
    p = lt.full((20000,), 0.3)
    draws = lt.bernoulli(p)
    assert draws.dtype is lt.float32 and set(draws.tolist()) == {0.0, 1.0}
    assert abs(draws.mean().item() - 0.3) < 0.02
    n = lt.normal(lt.full((20000,), 2.0), 0.5)
    assert abs(n.mean().item() - 2.0) < 0.02 and abs(n.std().item() - 0.5) < 0.02
    assert tuple(lt.normal(0.0, 1.0, size=(2, 3)).shape) == (2, 3)
    with pytest.raises(RuntimeError, match="repeats must have the same size as input along dim"):
        lt.repeat_interleave(lt.ones(3), lt.tensor([1, 2]), dim=0)


def test_composed_in_place_fills_match_torch(mode):
    for shape, wrap in [((4, 5), False), ((7, 3), True), ((7, 3), False), ((3, 3, 3), False)]:
        ours, theirs = lt.zeros(*shape), torch.zeros(*shape)
        ours.fill_diagonal_(2.0, wrap=wrap)
        theirs.fill_diagonal_(2.0, wrap=wrap)
        assert ours.tolist() == theirs.tolist()
    ours, theirs = lt.arange(12.0).reshape(3, 4), torch.arange(12.0).reshape(3, 4)
    ours.index_fill_(0, lt.tensor([1]), 7.0).index_copy_(1, lt.tensor([3]), lt.ones(3, 1))
    theirs.index_fill_(0, torch.tensor([1]), 7.0).index_copy_(1, torch.tensor([3]),
                                                              torch.ones(3, 1))
    assert ours.tolist() == theirs.tolist()
    lt.manual_seed(0)
    n = 20000
    assert abs(lt.zeros(n).exponential_(2.0).mean().item() - 0.5) < 0.02
    assert sorted(set(lt.zeros(n, dtype=lt.int64).random_(3, 7).tolist())) == [3, 4, 5, 6]
    g = lt.zeros(n).geometric_(0.25)
    assert g.min().item() == 1.0 and abs(g.mean().item() - 4.0) < 0.1
    assert abs(lt.zeros(n).bernoulli_(0.3).mean().item() - 0.3) < 0.02
    assert abs(lt.zeros(n).cauchy_(1.0).median().item() - 1.0) < 0.05
    logs = lt.zeros(n).log_normal_(0.0, 0.5).log()
    assert abs(logs.mean().item()) < 0.02 and abs(logs.std().item() - 0.5) < 0.02
    assert lt.zeros(3).new_empty(2, 3).shape == (2, 3) and lt.ones(2, 3).ndimension() == 2
    assert [tuple(t.shape) for t in lt.ones(5).split_with_sizes([2, 3])] == [(2,), (3,)]


@pytest.mark.parametrize("masking", ["none", "causal", "bool", "float"])
def test_scaled_dot_product_attention_is_the_attention_formula(masking, mode):
    """torch 1.13 has no F.scaled_dot_product_attention: the reference is its documented formula
    in torch, softmax(q k^T * scale + mask) v, values and gradients in float64."""
    g = np.random.default_rng(11)
    arrays = [g.standard_normal(s) for s in ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 2))]
    keep = g.standard_normal((5, 6)) > -0.5
    keep[:, 0] = True
    bias = g.standard_normal((5, 6))
    q_t, k_t, v_t = (torch.tensor(a, requires_grad=True) for a in arrays)
    q, k, v = (lt.tensor(a, requires_grad=True) for a in arrays)
    scores = q_t @ k_t.transpose(-2, -1) * 0.7
    kwargs = dict(scale=0.7)
    if masking == "causal":
        scores = scores.masked_fill(~torch.ones(5, 6, dtype=torch.bool).tril(), float("-inf"))
        kwargs["is_causal"] = True
    elif masking == "bool":
        scores = scores.masked_fill(~torch.tensor(keep), float("-inf"))
        kwargs["attn_mask"] = lt.tensor(keep)
    elif masking == "float":
        scores = scores + torch.tensor(bias)
        kwargs["attn_mask"] = lt.tensor(bias)
    want = torch.softmax(scores, -1) @ v_t
    got = lt.nn.functional.scaled_dot_product_attention(q, k, v, **kwargs)
    assert_close(got.detach(), want.detach())
    seed = g.standard_normal(tuple(want.shape))
    want.backward(torch.tensor(seed))
    got.backward(lt.tensor(seed))
    for x, x_t in ((q, q_t), (k, k_t), (v, v_t)):
        assert_close(x.grad, x_t.grad)
    if masking == "none":
        default = lt.nn.functional.scaled_dot_product_attention(q.detach(), k.detach(), v.detach())
        ref = torch.softmax(q_t @ k_t.transpose(-2, -1) / 2, -1) @ v_t
        assert_close(default, ref.detach())
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set"):
        lt.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=lt.tensor(keep),
                                                      is_causal=True)


def test_unfold_and_fold_layers_are_torchs(mode):
    torch.manual_seed(0)
    x = np.random.default_rng(12).standard_normal((2, 3, 5, 6))
    theirs = torch.nn.Sequential(torch.nn.Unfold((2, 3), padding=1, stride=2),
                                 torch.nn.Fold((5, 6), (2, 3), padding=1, stride=2))
    ours = lt.nn.Sequential(lt.nn.Unfold((2, 3), padding=1, stride=2),
                            lt.nn.Fold((5, 6), (2, 3), padding=1, stride=2))
    assert repr(ours) == repr(theirs)
    assert_close(ours(lt.tensor(x)), theirs(torch.tensor(x)))
    assert_close(lt.nn.Unfold(2)(lt.tensor(x[0])), torch.nn.Unfold(2)(torch.tensor(x[0])))
    with pytest.raises(RuntimeError, match="must be at least one"):
        lt.nn.functional.unfold(lt.tensor(x), 7)
    for shape, message in (((2, 12, 5), "match the calculated number of sliding blocks "
                            "2 \\* 2 = 4, but got input.size\\(2\\)=5"),
                           ((2, 10, 4), "divisible by the product of kernel_size, but got "
                            "input.size\\(1\\)=10 and kernel_size=\\(2, 2\\)")):
        for m in (torch, lt):
            with pytest.raises(RuntimeError, match=message):
                m.nn.functional.fold(m.zeros(shape), (3, 4), 2, stride=(1, 2))
