"""lt.nn against torch.nn: the same model written with each, torch's weights loaded strictly
into lazytrain's, then the same outputs and gradients; Module's registration and tree walks."""
import collections

import numpy as np
import pytest
import torch

import lazytrain as lt
from conftest import assert_close


def make_cnn(nn):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, stride=1, padding=1, bias=False),
                nn.BatchNorm2d(8), nn.GELU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
            self.blocks = nn.ModuleList([nn.Linear(8, 16), nn.Linear(16, 16)])
            self.heads = nn.ModuleDict({"out": nn.Linear(16, 5), "aux": nn.Identity()})
            self.norm = nn.LayerNorm(16)
            self.drop = nn.Dropout(0.3)
            self.emb = nn.Embedding(5, 16)
            self.register_buffer("scale", torch_or_lt(nn).ones(16) * 0.5)

        def forward(self, x, ids):
            h = self.features(x)
            for b in self.blocks:
                h = b(h).relu()
            h = self.norm(h + self.emb(ids)) * self.scale
            return self.heads["out"](self.drop(self.heads["aux"](h)))
    return Net()


def torch_or_lt(nn):
    return torch if nn is torch.nn else lt


def _pair_models():
    torch.manual_seed(0)
    t_model = make_cnn(torch.nn).double()
    model = make_cnn(lt.nn).double()
    result = model.load_state_dict(t_model.state_dict(), strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    return model, t_model


def test_state_dict_names_match_torchs():
    model, t_model = _pair_models()
    assert list(model.state_dict()) == list(t_model.state_dict())
    assert [n for n, _ in model.named_parameters()] == [n for n, _ in t_model.named_parameters()]
    assert [n for n, _ in model.named_buffers()] == [n for n, _ in t_model.named_buffers()]
    assert [n for n, _ in model.named_modules()] == [n for n, _ in t_model.named_modules()]
    assert [type(m).__name__ for m in model.children()] == [
        type(m).__name__ for m in t_model.children()]
    for (name, p), (_, q) in zip(model.named_parameters(), t_model.named_parameters()):
        assert isinstance(p, lt.nn.Parameter) and p.requires_grad
        assert_close(p.detach(), q.detach())


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_same_outputs_and_gradients_as_torch(training, mode):
    model, t_model = _pair_models()
    model.train(training)
    t_model.train(training)
    model.drop.p = t_model.drop.p = 0.0  # dropout draws differ between the libraries
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 8, 8))
    ids = np.array([0, 4, 2, 2])
    for step in range(2):
        out = model(lt.tensor(x), lt.tensor(ids))
        t_out = t_model(torch.tensor(x), torch.tensor(ids))
        assert_close(out, t_out, rtol=1e-9, atol=1e-11)
        (out ** 2).mean().backward()
        (t_out ** 2).mean().backward()
        for (name, p), (_, q) in zip(model.named_parameters(), t_model.named_parameters()):
            assert_close(p.grad, q.grad, rtol=1e-8, atol=1e-11)
        lt.mark_step()
    for (name, b), (_, c) in zip(model.named_buffers(), t_model.named_buffers()):
        assert_close(b, c, rtol=1e-10, atol=1e-12)


def test_round_trip_back_into_torch():
    model, _ = _pair_models()
    with lt.no_grad():
        for p in model.parameters():
            p += 0.25
    t_model = make_cnn(torch.nn).double()
    t_model.load_state_dict({k: torch.tensor(v.numpy()) for k, v in model.state_dict().items()},
                            strict=True)
    for (k, v), (_, w) in zip(model.state_dict().items(), t_model.state_dict().items()):
        assert_close(v, w)


def test_load_state_dict_checks_keys_and_shapes():
    model = lt.nn.Linear(3, 2)
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        model.load_state_dict({"weight": torch.zeros(2, 3)})
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "extra"'):
        model.load_state_dict({"weight": torch.zeros(2, 3), "bias": torch.zeros(2),
                               "extra": torch.zeros(1)})
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        model.load_state_dict({"weight": torch.zeros(3, 3), "bias": torch.zeros(2)})
    r = model.load_state_dict({"weight": torch.ones(2, 3)}, strict=False)
    assert r.missing_keys == ["bias"] and r.unexpected_keys == []
    assert model.weight.tolist() == [[1.0] * 3] * 2


def test_initialization_follows_torchs_bounds():
    lt.manual_seed(0)
    lin = lt.nn.Linear(400, 300)
    w = lin.weight.detach().numpy()
    bound = 1 / np.sqrt(400)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.02 * bound
    conv = lt.nn.Conv2d(4, 6, 3)
    assert np.abs(conv.weight.detach().numpy()).max() <= 1 / np.sqrt(36)
    bn = lt.nn.BatchNorm2d(3)
    assert bn.weight.tolist() == [1.0] * 3 and bn.running_var.tolist() == [1.0] * 3
    emb = lt.nn.Embedding(1000, 10)
    assert abs(emb.weight.detach().numpy().std() - 1) < 0.05


def test_module_registration_and_modes():
    class M(lt.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lt.nn.Parameter(lt.ones(2))
            self.sub = lt.nn.Linear(2, 2)
            self.register_buffer("count", lt.zeros(1), persistent=False)
            self.plain = lt.ones(1)  # a tensor attribute that is neither

        def forward(self, x):
            return self.sub(x) * self.a
    m = M()
    assert [n for n, _ in m.named_parameters()] == ["a", "sub.weight", "sub.bias"]
    assert list(m.state_dict()) == ["a", "sub.weight", "sub.bias"]
    assert [n for n, _ in m.named_buffers()] == ["count"]
    assert m.training and m.sub.training
    m.eval()
    assert not m.training and not m.sub.training
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_(True)
    m(lt.ones(3, 2)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    a = m.a
    m.to(lt.float64)
    assert all(p.dtype is lt.float64 for p in m.parameters())
    assert m.a is a and a.requires_grad  # the same Parameter, as PyTorch's
    assert m.count.dtype is lt.float64
    with pytest.raises(AttributeError):
        m.missing
    with pytest.raises(TypeError, match="parameter 'a'"):
        m.a = lt.ones(2)


def test_forward_hooks():
    lin = lt.nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda mod, args: calls.append("pre"))
    h2 = lin.register_forward_hook(lambda mod, args, out: out * 0)
    out = lin(lt.ones(1, 2))
    assert calls == ["pre"] and out.tolist() == [[0.0, 0.0]]
    h1.remove()
    h2.remove()
    assert lin(lt.ones(1, 2)).abs().sum().item() > 0 and calls == ["pre"]


def test_sequential_containers():
    seq = lt.nn.Sequential(collections.OrderedDict([("fc", lt.nn.Linear(2, 3)),
                                                    ("act", lt.nn.ReLU())]))
    assert list(seq.state_dict()) == ["fc.weight", "fc.bias"] and len(seq) == 2
    assert isinstance(seq[0], lt.nn.Linear) and isinstance(seq[-1], lt.nn.ReLU)
    ml = lt.nn.ModuleList([lt.nn.Linear(1, 1)]).append(lt.nn.Linear(1, 1))
    assert list(ml.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert repr(lt.nn.Linear(2, 3)) == repr(torch.nn.Linear(2, 3))


def test_clip_grad_norm_matches_torch():
    g = np.arange(6.0).reshape(2, 3)
    p, q = lt.nn.Parameter(lt.zeros(2, 3, dtype=lt.float64)), torch.nn.Parameter(
        torch.zeros(2, 3, dtype=torch.float64))
    (p * lt.tensor(g)).sum().backward()
    (q * torch.tensor(g)).sum().backward()
    n = lt.nn.utils.clip_grad_norm_([p], 1.0)
    n_t = torch.nn.utils.clip_grad_norm_([q], 1.0)
    assert_close(n, n_t)
    assert_close(p.grad, q.grad)


def make_mixed(nn):
    return nn.Sequential(
        nn.Conv2d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2), nn.SiLU(),
        nn.AvgPool2d(2, stride=1), nn.Conv2d(6, 4, (1, 2), bias=False), nn.Tanh(),
        nn.GroupNorm(2, 4), nn.Flatten(), nn.Linear(4 * 2 * 1, 6), nn.BatchNorm1d(6, momentum=0.3),
        nn.LeakyReLU(0.2), nn.LayerNorm(6, elementwise_affine=False), nn.Sigmoid(),
        nn.Linear(6, 3, bias=False), nn.LogSoftmax(dim=1))


def test_module_repr_is_torchs():
    assert repr(make_mixed(lt.nn)) == repr(make_mixed(torch.nn))
    assert repr(make_cnn(lt.nn)) == repr(make_cnn(torch.nn))


def test_more_layers_match_torch(mode):
    torch.manual_seed(1)
    t_model = make_mixed(torch.nn).double()
    model = make_mixed(lt.nn).double()
    model.load_state_dict(t_model.state_dict())
    x = np.random.default_rng(4).standard_normal((5, 4, 6, 5))
    for _ in range(2):
        out, t_out = model(lt.tensor(x)), t_model(torch.tensor(x))
        assert_close(out, t_out, rtol=1e-9, atol=1e-11)
        lt.nn.functional.nll_loss(out, lt.tensor([0, 1, 2, 1, 0])).backward()
        torch.nn.functional.nll_loss(t_out, torch.tensor([0, 1, 2, 1, 0])).backward()
        for (name, p), (_, q) in zip(model.named_parameters(), t_model.named_parameters()):
            assert_close(p.grad, q.grad, rtol=1e-8, atol=1e-11)
        lt.mark_step()
    for (name, b), (_, c) in zip(model.state_dict().items(), t_model.state_dict().items()):
        assert_close(b, c, rtol=1e-10, atol=1e-12)
    model.eval()
    t_model.eval()
    assert_close(model(lt.tensor(x)), t_model(torch.tensor(x)), rtol=1e-9, atol=1e-11)


def test_dropout_in_training_and_eval(mode):
    lt.manual_seed(0)
    drop = lt.nn.Dropout(0.25)
    x = lt.ones(4000)
    y = drop(x).numpy()
    kept = y != 0
    assert abs(1 - kept.mean() - 0.25) < 0.03
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    drop.eval()
    np.testing.assert_array_equal(drop(x).numpy(), x.numpy())
    with pytest.raises(ValueError, match="between 0 and 1"):
        lt.nn.Dropout(1.5)


def test_init_schemes():
    lt.manual_seed(0)
    w = lt.empty(300, 200)
    for fn, std in [(lambda t: lt.nn.init.xavier_uniform_(t), np.sqrt(2 / 500)),
                    (lambda t: lt.nn.init.kaiming_normal_(t, nonlinearity="relu"),
                     np.sqrt(2 / 200)),
                    (lambda t: lt.nn.init.normal_(t, 0.0, 0.5), 0.5)]:
        assert abs(fn(w).numpy().std() - std) < 0.03 * std
    assert lt.nn.init.constant_(w, 0.25).numpy().max() == 0.25
    assert lt.nn.init.calculate_gain("tanh") == torch.nn.init.calculate_gain("tanh")
    assert lt.nn.init.calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain(
        "leaky_relu", 0.2)


class _Resampler:
    """A conv1d over rows, then transposed convolutions and resampling, as one module."""

    @staticmethod
    def make(nn):
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.rows = nn.Conv1d(3, 4, 3, padding=1, stride=2)
                self.up = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)
                self.up2 = nn.ConvTranspose2d(6, 2, (2, 3), groups=2, bias=False, dilation=2)
                self.near = nn.Upsample(scale_factor=2)
                self.lin = nn.Upsample(size=(5, 7), mode="bilinear", align_corners=True)
                self.pool = nn.AdaptiveMaxPool2d((3, 2))

            def forward(self, x):
                n, c, h, w = x.shape
                r = self.rows(x.permute(0, 2, 1, 3).reshape(n * h, c, w))
                r = r.reshape(n, h, 4, -1).permute(0, 2, 1, 3)
                y = self.up2(self.up(r).tanh())
                return self.pool(self.near(y)) + self.pool(self.lin(y))
        return Net()


def test_resampling_layers_match_torch(mode):
    torch.manual_seed(2)
    t_model = _Resampler.make(torch.nn).double()
    model = _Resampler.make(lt.nn).double()
    model.load_state_dict(t_model.state_dict())
    assert repr(model) == repr(t_model)
    x = np.random.default_rng(5).standard_normal((2, 3, 4, 6))
    out, t_out = model(lt.tensor(x)), t_model(torch.tensor(x))
    assert_close(out, t_out, rtol=1e-9, atol=1e-11)
    (out ** 2).sum().backward()
    (t_out ** 2).sum().backward()
    for (name, p), (_, q) in zip(model.named_parameters(), t_model.named_parameters()):
        assert_close(p.grad, q.grad, rtol=1e-8, atol=1e-10)


def test_deepcopy_of_a_module_owns_its_values():
    import copy
    model = lt.nn.Sequential(lt.nn.Linear(2, 2), lt.nn.BatchNorm1d(2))
    twin = copy.deepcopy(model)
    assert list(twin.state_dict()) == list(model.state_dict())
    assert all(isinstance(p, lt.nn.Parameter) and p.requires_grad for p in twin.parameters())
    with lt.no_grad():
        model[0].weight.fill_(3.0)
    assert twin[0].weight.detach().numpy().max() < 3.0


def test_embedding_padding_idx_matches_torch(mode):
    torch.manual_seed(3)
    t_emb = torch.nn.Embedding(6, 3, padding_idx=-2).double()
    emb = lt.nn.Embedding(6, 3, padding_idx=-2).double()
    assert emb.weight[4].tolist() == [0.0, 0.0, 0.0] and repr(emb) == repr(t_emb)
    emb.load_state_dict(t_emb.state_dict())
    ids = [[4, 1, 4], [0, 5, 2]]
    out, t_out = emb(lt.tensor(ids)), t_emb(torch.tensor(ids))
    assert_close(out, t_out)
    (out * lt.arange(3.0)).sum().backward()
    (t_out * torch.arange(3.0)).sum().backward()
    assert_close(emb.weight.grad, t_emb.weight.grad)


RNNS = [("LSTM", dict()), ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
        ("LSTM", dict(proj_size=2)),
        ("LSTM", dict(proj_size=3, num_layers=2, bidirectional=True, batch_first=True)),
        ("GRU", dict()), ("GRU", dict(num_layers=2, bias=False, bidirectional=True)),
        ("RNN", dict()), ("RNN", dict(nonlinearity="relu", num_layers=2, bidirectional=True,
                                      batch_first=True))]


@pytest.mark.parametrize("name, kwargs", RNNS, ids=[f"{n}-{k}" for n, k in RNNS])
def test_recurrent_layers_match_torch(name, kwargs, mode):
    torch.manual_seed(4)
    t_rnn = getattr(torch.nn, name)(3, 5, **kwargs).double()
    rnn = getattr(lt.nn, name)(3, 5, **kwargs).double()
    assert repr(rnn) == repr(t_rnn)
    assert list(rnn.state_dict()) == list(t_rnn.state_dict())
    rnn.load_state_dict(t_rnn.state_dict())
    x = np.random.default_rng(8).standard_normal((4, 2, 3))  # [L, N, in] or [N, L, in]
    out, state = rnn(lt.tensor(x))
    t_out, t_state = t_rnn(torch.tensor(x))
    assert_close(out, t_out, rtol=1e-10, atol=1e-12)
    states = state if name == "LSTM" else (state,)
    t_states = t_state if name == "LSTM" else (t_state,)
    for s, t in zip(states, t_states):
        assert_close(s, t, rtol=1e-10, atol=1e-12)
    (out.sum() + states[0].sum() * 2).backward()
    (t_out.sum() + t_states[0].sum() * 2).backward()
    for (n, p), (_, q) in zip(rnn.named_parameters(), t_rnn.named_parameters()):
        assert_close(p.grad, q.grad, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("kw", [dict(kernel_size=3, stride=2, padding=1, dilation=2),
                                dict(kernel_size=2, stride=2, ceil_mode=True),
                                dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0))])
def test_max_pool_indices_dilation_and_unpool_match_torch(kw, mode):
    """MaxPool2d(return_indices=True) and dilation, then MaxUnpool2d with those indices, values
    and gradients as torch's; adaptive_max_pool2d's indices too."""
    x = np.random.default_rng(21).standard_normal((2, 3, 9, 8))
    got = {}
    for m in (torch, lt):
        xt = m.tensor(x, requires_grad=True)
        y, idx = m.nn.MaxPool2d(return_indices=True, **kw)(xt)
        plain = m.nn.functional.max_pool2d(xt, **kw)
        unpool = {k: v for k, v in kw.items() if k in ("kernel_size", "stride", "padding")}
        # (torch's unpooling has no dilation: a dilated pool's indices reach past its output)
        back = y if "dilation" in kw else m.nn.MaxUnpool2d(**unpool)(y, idx, output_size=xt.shape)
        a, a_idx = m.nn.functional.adaptive_max_pool2d(xt, (4, 3), return_indices=True)
        ((back * back).sum() + a.sum() + plain.sum()).backward()
        got[m] = [y, idx, plain, back, a, a_idx, xt.grad]
    for a, b in zip(got[lt], got[torch]):
        assert_close(a, b.detach(), rtol=1e-12, atol=1e-12)
    assert got[lt][1].dtype is lt.int64
    with pytest.raises(ValueError, match=r'invalid output_size "\[7, 4\]" \(dim 0 must be '
                                         r'between 2 and 6\)'):
        lt.nn.functional.max_unpool2d(lt.zeros(1, 1, 2, 2), lt.zeros(1, 1, 2, 2, dtype=lt.int64),
                                      2, output_size=[7, 4])


def test_rnn_argument_errors_are_torchs():
    for name, kwargs in (("LSTM", dict(proj_size=5)), ("LSTM", dict(proj_size=-1)),
                         ("GRU", dict(proj_size=2))):
        with pytest.raises(ValueError) as want:
            getattr(torch.nn, name)(3, 5, **kwargs)
        with pytest.raises(ValueError, match=str(want.value)):
            getattr(lt.nn, name)(3, 5, **kwargs)


def test_lstm_with_initial_state_and_unbatched_input():
    torch.manual_seed(5)
    t_rnn = torch.nn.LSTM(2, 3).double()
    rnn = lt.nn.LSTM(2, 3).double()
    rnn.load_state_dict(t_rnn.state_dict())
    x = np.random.default_rng(9).standard_normal((5, 2))
    h0 = np.random.default_rng(10).standard_normal((1, 3))
    out, (h, c) = rnn(lt.tensor(x), (lt.tensor(h0), lt.tensor(h0 * 2)))
    t_out, (t_h, t_c) = t_rnn(torch.tensor(x), (torch.tensor(h0), torch.tensor(h0 * 2)))
    for got, want in ((out, t_out), (h, t_h), (c, t_c)):
        assert_close(got, want.detach(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_matches_torch(batch_first, mode):
    torch.manual_seed(6)
    t_mha = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first).double()
    mha = lt.nn.MultiheadAttention(8, 2, batch_first=batch_first).double()
    assert repr(mha) == repr(t_mha) and list(mha.state_dict()) == list(t_mha.state_dict())
    mha.load_state_dict(t_mha.state_dict())
    rng = np.random.default_rng(11)
    q, kv = rng.standard_normal((3, 2, 8)), rng.standard_normal((4, 2, 8))  # [len, N, E]
    if batch_first:
        q, kv = q.transpose(1, 0, 2).copy(), kv.transpose(1, 0, 2).copy()
    causal = np.triu(np.ones((3, 4), dtype=bool), 1)
    padding = np.array([[False, False, False, True], [False, True, False, False]])
    for kwargs in (dict(), dict(attn_mask=causal, key_padding_mask=padding),
                   dict(attn_mask=np.where(causal, -1.5, 0.25), average_attn_weights=False)):
        out, w = mha(lt.tensor(q), lt.tensor(kv), lt.tensor(kv),
                     **{k: lt.tensor(v) if isinstance(v, np.ndarray) else v
                        for k, v in kwargs.items()})
        t_out, t_w = t_mha(torch.tensor(q), torch.tensor(kv), torch.tensor(kv),
                           **{k: torch.tensor(v) if isinstance(v, np.ndarray) else v
                              for k, v in kwargs.items()})
        assert_close(out, t_out, rtol=1e-9, atol=1e-11)
        assert_close(w, t_w, rtol=1e-9, atol=1e-11)
    out.sum().backward()
    t_out.sum().backward()
    for (n, p), (_, r) in zip(mha.named_parameters(), t_mha.named_parameters()):
        assert_close(p.grad, r.grad, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_matches_torch(norm_first, mode):
    torch.manual_seed(7)
    t_layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                               activation="gelu", norm_first=norm_first)
    t_enc = torch.nn.TransformerEncoder(t_layer, 2, enable_nested_tensor=False).double()
    layer = lt.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                          activation="gelu", norm_first=norm_first)
    enc = lt.nn.TransformerEncoder(layer, 2).double()
    assert list(enc.state_dict()) == list(t_enc.state_dict())
    enc.load_state_dict(t_enc.state_dict())
    x = np.random.default_rng(12).standard_normal((5, 3, 8))
    causal = np.triu(np.ones((5, 5), dtype=bool), 1)
    out = enc(lt.tensor(x), mask=lt.tensor(causal))
    t_out = t_enc(torch.tensor(x), mask=torch.tensor(causal))
    assert_close(out, t_out, rtol=1e-9, atol=1e-11)
    (out ** 2).sum().backward()
    (t_out ** 2).sum().backward()
    for (n, p), (_, r) in zip(enc.named_parameters(), t_enc.named_parameters()):
        assert_close(p.grad, r.grad, rtol=1e-8, atol=1e-10)


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel lengths")
@pytest.mark.parametrize("kernel,dilation", [((3, 3), (1, 1)), ((3, 4), (1, 2)), ((2, 2), (2, 1)),
                                             ((4, 1), (1, 1))])
def test_padding_same_and_valid_are_torchs(kernel, dilation, mode):
    rng = np.random.default_rng(9)
    x0, w0 = rng.standard_normal((2, 3, 7, 8)), rng.standard_normal((4, 3, *kernel))
    got = {}
    for m in (torch, lt):
        x = m.tensor(x0, requires_grad=True)
        w = m.tensor(w0, requires_grad=True)
        y = m.nn.functional.conv2d(x, w, padding="same", dilation=dilation)
        v = m.nn.functional.conv1d(x[:, :, 0], w[:, :, 0], padding="same", dilation=dilation[1])
        valid = m.nn.functional.conv2d(x, w, padding="valid")
        (y.sum() + (v * v).sum() + valid.sum()).backward()
        got[m] = (y, v, valid, x.grad, w.grad)
    for a, b in zip(got[lt], got[torch]):
        assert_close(a, b.detach())
    assert tuple(got[lt][0].shape) == (2, 4, 7, 8)
    for m in (torch, lt):
        layer = m.nn.Conv2d(3, 4, kernel, padding="same", dilation=dilation)
        got[m] = (repr(layer), repr(m.nn.Conv1d(3, 4, 3, padding="valid")))
    assert got[lt] == got[torch]
    with pytest.raises(ValueError, match="padding='same' is not supported for strided"):
        lt.nn.Conv2d(3, 4, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="Invalid padding string 'full'"):
        lt.nn.functional.conv2d(lt.ones(1, 1, 3, 3), lt.ones(1, 1, 3, 3), padding="full")


@pytest.mark.parametrize("norm_first,batch_first", [(False, False), (True, True)])
def test_transformer_with_decoder_matches_torch(norm_first, batch_first, mode):
    """nn.Transformer (encoder and decoder stacks) from torch's weights: the same names, the
    outputs and gradients with a causal float mask and key padding masks."""
    torch.manual_seed(8)
    kw = dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16,
              dropout=0.0, norm_first=norm_first, batch_first=batch_first)
    t_model = torch.nn.Transformer(**kw).double()
    model = lt.nn.Transformer(**kw).double()
    assert list(model.state_dict()) == list(t_model.state_dict())
    model.load_state_dict(t_model.state_dict())
    rng = np.random.default_rng(13)
    src, tgt = rng.standard_normal((3, 6, 8)), rng.standard_normal((3, 4, 8))  # batch first
    if not batch_first:
        src, tgt = src.transpose(1, 0, 2).copy(), tgt.transpose(1, 0, 2).copy()
    src_pad = np.zeros((3, 6), dtype=bool)
    src_pad[1, 4:] = True
    tgt_pad = np.zeros((3, 4), dtype=bool)
    tgt_pad[2, 3] = True
    outs = {}
    for m, net in ((torch, t_model), (lt, model)):
        mask = net.generate_square_subsequent_mask(4).double()
        out = net(m.tensor(src), m.tensor(tgt), tgt_mask=mask,
                  src_key_padding_mask=m.tensor(src_pad), tgt_key_padding_mask=m.tensor(tgt_pad),
                  memory_key_padding_mask=m.tensor(src_pad))
        (out ** 2).sum().backward()
        outs[m] = (out, mask)
    assert_close(outs[lt][1], outs[torch][1])
    assert_close(outs[lt][0], outs[torch][0].detach(), rtol=1e-9, atol=1e-11)
    for (n, p), (_, r) in zip(model.named_parameters(), t_model.named_parameters()):
        assert_close(p.grad, r.grad, rtol=1e-8, atol=1e-10)
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal"):
        model(lt.tensor(src), lt.zeros(*tgt.shape[:-1], 6, dtype=lt.float64))


@pytest.mark.parametrize("bias_kv,zero_attn", [(True, False), (False, True), (True, True)])
def test_attention_bias_kv_and_zero_attn_match_torch(bias_kv, zero_attn, mode):
    """add_bias_kv appends a learned key and value (bias_k, bias_v, in the state dict) and
    add_zero_attn a zero one to every sequence, the masks growing a position that is not
    masked, as PyTorch's."""
    torch.manual_seed(12)
    kw = dict(add_bias_kv=bias_kv, add_zero_attn=zero_attn)
    t_mha = torch.nn.MultiheadAttention(8, 2, **kw).double()
    mha = lt.nn.MultiheadAttention(8, 2, **kw).double()
    assert list(mha.state_dict()) == list(t_mha.state_dict())
    mha.load_state_dict(t_mha.state_dict())
    rng = np.random.default_rng(13)
    q, kv = rng.standard_normal((3, 2, 8)), rng.standard_normal((4, 2, 8))
    causal = np.triu(np.ones((3, 4), dtype=bool), 1)
    padding = np.array([[False, False, False, True], [False, True, False, False]])
    got = {}
    for m, net in ((torch, t_mha), (lt, mha)):
        out, w = net(m.tensor(q), m.tensor(kv), m.tensor(kv), attn_mask=m.tensor(causal),
                     key_padding_mask=m.tensor(padding))
        out2, _ = net(m.tensor(q), m.tensor(kv), m.tensor(kv),
                      attn_mask=m.tensor(np.where(causal, -1.5, 0.25)))
        (out ** 2 + out2).sum().backward()
        got[m] = [out, w, out2] + [p.grad for p in net.parameters()]
    assert len(got[lt]) == len(got[torch])
    for a, b in zip(got[lt], got[torch]):
        assert_close(a, b.detach(), rtol=1e-9, atol=1e-11)
    if bias_kv:
        fresh = lt.nn.MultiheadAttention(64, 4, add_bias_kv=True)
        std = float(fresh.bias_k.detach().numpy().std())
        assert abs(std - (2 / 128) ** 0.5) < 0.05  # xavier_normal_ over fan_in = fan_out = 64


def test_attention_with_keys_and_values_of_other_sizes_matches_torch(mode):
    torch.manual_seed(9)
    t_mha = torch.nn.MultiheadAttention(6, 2, kdim=5, vdim=3, batch_first=True).double()
    mha = lt.nn.MultiheadAttention(6, 2, kdim=5, vdim=3, batch_first=True).double()
    assert list(mha.state_dict()) == list(t_mha.state_dict())
    assert [tuple(p.shape) for p in mha.parameters()] == [tuple(p.shape)
                                                         for p in t_mha.parameters()]
    mha.load_state_dict(t_mha.state_dict())
    rng = np.random.default_rng(14)
    q, k, v = (rng.standard_normal(s) for s in ((2, 4, 6), (2, 7, 5), (2, 7, 3)))
    got = {}
    for m, net in ((torch, t_mha), (lt, mha)):
        out, weights = net(m.tensor(q), m.tensor(k), m.tensor(v))
        (out ** 2).sum().backward()
        got[m] = [out, weights] + [p.grad for p in net.parameters()]
    for a, b in zip(got[lt], got[torch]):
        assert_close(a, b.detach(), rtol=1e-9, atol=1e-11)


PADS = [("reflect", (2, 1)), ("replicate", (3, 0)), ("circular", (1, 2)),
        ("reflect", (1, 2, 2, 0)), ("replicate", (0, 2, 1, 1)), ("circular", (2, 1, 0, 3)),
        ("reflect", (1, 1, 2, 1, 1, 0)), ("replicate", (1, 0, 0, 2, 2, 1))]


@pytest.mark.parametrize("padding_mode, pad", PADS, ids=[f"{m}-{len(p) // 2}d" for m, p in PADS])
def test_padding_modes_and_layers_match_torch(padding_mode, pad, mode):
    """F.pad's reflect, replicate and circular modes on 3-, 4- and 5-D inputs (1, 2 and 3 dims
    padded), their layers, values and gradients, in float64."""
    dims = len(pad) // 2
    x = np.random.default_rng(dims).standard_normal((2, 3, 4, 5, 6)[:dims + 2])
    ours = lt.tensor(x, dtype=lt.float64, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    got, want = (m.nn.functional.pad(t, pad, mode=padding_mode)
                 for m, t in ((lt, ours), (torch, theirs)))
    assert_close(got, want.detach())
    w = np.random.default_rng(7).standard_normal(tuple(want.shape))
    (got * lt.tensor(w)).sum().backward()
    (want * torch.tensor(w)).sum().backward()
    assert_close(ours.grad, theirs.grad)
    if padding_mode != "circular":  # torch 1.13 has no circular pad layer
        name = {"reflect": "ReflectionPad", "replicate": "ReplicationPad"}[padding_mode]
        layer = f"{name}{dims}d"
        ours_layer, theirs_layer = getattr(lt.nn, layer)(pad), getattr(torch.nn, layer)(pad)
        assert repr(ours_layer) == repr(theirs_layer)
        assert_close(ours_layer(ours.detach()), theirs_layer(theirs.detach()))


def test_constant_and_zero_pad_layers_and_pad_errors_are_torchs():
    x = np.arange(24.0).reshape(2, 3, 4)
    for ours, theirs in [(lt.nn.ZeroPad2d(1), torch.nn.ZeroPad2d(1)),
                         (lt.nn.ConstantPad1d((1, 2), 3.5), torch.nn.ConstantPad1d((1, 2), 3.5)),
                         (lt.nn.ConstantPad3d(1, -1.0), torch.nn.ConstantPad3d(1, -1.0))]:
        assert repr(ours) == repr(theirs)
        assert_close(ours(lt.tensor(x)), theirs(torch.tensor(x)))
    t = lt.ones(1, 1, 2, 2)
    with pytest.raises(RuntimeError, match=r"Padding size should be less than the corresponding "
                                           r"input dimension, but got: padding \(2, 2\) at "
                                           r"dimension 3 of input \[1, 1, 2, 2\]"):
        lt.nn.functional.pad(t, (2, 2, 0, 0), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding value causes wrapping around more than once"):
        lt.nn.functional.pad(t, (3, 3, 3, 3), mode="circular")
    with pytest.raises(NotImplementedError, match="Only 2D, 3D, 4D, 5D padding with non-constant"):
        lt.nn.functional.pad(lt.ones(3), (1, 1), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        lt.nn.functional.pad(t, (1,), mode="reflect")


@pytest.mark.parametrize("padding_mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("padding", [1, "same", (2, 1)])
def test_conv_padding_modes_match_torch(padding_mode, padding, mode):
    torch.manual_seed(0)
    theirs = torch.nn.Conv2d(3, 4, 3, padding=padding, padding_mode=padding_mode).double()
    ours = lt.nn.Conv2d(3, 4, 3, padding=padding, padding_mode=padding_mode, dtype=lt.float64)
    ours.load_state_dict(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(1).standard_normal((2, 3, 6, 7))
    a, b = lt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = ours(a), theirs(b)
    assert_close(got, want.detach())
    got.square().sum().backward()
    want.square().sum().backward()
    assert_close(a.grad, b.grad)
    assert_close(ours.weight.grad, theirs.weight.grad)
    one_ours = lt.nn.Conv1d(3, 2, 3, padding=1, padding_mode=padding_mode, dtype=lt.float64)
    one_theirs = torch.nn.Conv1d(3, 2, 3, padding=1, padding_mode=padding_mode).double()
    one_ours.load_state_dict(one_theirs.state_dict())
    assert_close(one_ours(lt.tensor(x[:, :, 0])), one_theirs(torch.tensor(x[:, :, 0])).detach())
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        lt.nn.Conv2d(3, 4, 3, padding_mode="mirror")


def test_more_layers_train_and_evaluate_as_torchs(mode):
    """Instance norm with running stats (train, then eval), PReLU's weight, 1-D pooling, pixel
    shuffling, Unflatten and the loss layers, in float64, weights and buffers from torch."""
    torch.manual_seed(0)

    def net(nn):
        return nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.InstanceNorm2d(
            8, affine=True, track_running_stats=True), nn.PReLU(8), nn.PixelShuffle(2),
            nn.Flatten(2), nn.MaxPool1d(3, 2, 1), nn.AvgPool1d(2), nn.AdaptiveAvgPool1d(5),
            nn.Flatten(), nn.Unflatten(1, (2, 5)), nn.SELU(), nn.Softsign())
    theirs, ours = net(torch.nn).double(), net(lt.nn).to(lt.float64)
    ours.load_state_dict(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(2).standard_normal((3, 2, 4, 4))
    a, b = lt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    got, want = ours(a), theirs(b)
    assert_close(got, want.detach())
    target = np.random.default_rng(3).standard_normal(tuple(want.shape))
    losses = [("HuberLoss", dict(delta=0.5)), ("SoftMarginLoss", dict(reduction="sum")),
              ("MultiLabelSoftMarginLoss", {})]
    total_t = sum(getattr(torch.nn, n)(**k)(want, torch.tensor(np.sign(target)))
                  for n, k in losses)
    total = sum(getattr(lt.nn, n)(**k)(got, lt.tensor(np.sign(target))) for n, k in losses)
    assert_close(total, total_t.detach())
    total.backward()
    total_t.backward()
    assert_close(a.grad, b.grad)
    for name, param in theirs.named_parameters():
        assert_close(dict(ours.named_parameters())[name].grad, param.grad)
    for name, buf in theirs.state_dict().items():
        assert_close(ours.state_dict()[name], buf)  # the running stats updated alike
    ours.eval()
    theirs.eval()
    assert_close(ours(lt.tensor(x)), theirs(torch.tensor(x)).detach())


def test_channel_dropout_zeroes_whole_channels():
    lt.manual_seed(0)
    x = lt.ones(4, 16, 3, 5)
    y = lt.nn.Dropout2d(0.25)(x)
    per_channel = y.reshape(4, 16, -1)
    assert set(per_channel.amax(-1).tolist()[0]) <= {0.0, float(np.float32(1 / 0.75))}
    assert (per_channel.amax(-1) == per_channel.amin(-1)).all().item()
    assert 0 < (per_channel[:, :, 0] == 0).sum().item() < 64
    d1 = lt.nn.Dropout1d(0.5)
    assert lt.equal(d1.eval()(x[0]), x[0])
    with pytest.raises(RuntimeError, match="dropout2d: Expected 3D or 4D input, got 2D"):
        lt.nn.functional.dropout2d(lt.ones(2, 3))


@pytest.mark.parametrize("name, kwargs", [("RNNCell", dict(nonlinearity="relu")),
                                          ("LSTMCell", {}), ("GRUCell", dict(bias=False))])
def test_recurrent_cells_match_torch(name, kwargs, mode):
    """Three steps of a cell from a zero state, batched and unbatched, and their gradients."""
    torch.manual_seed(5)
    theirs = getattr(torch.nn, name)(3, 4, **kwargs).double()
    ours = getattr(lt.nn, name)(3, 4, **kwargs, dtype=lt.float64)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict(theirs.state_dict())
    xs = np.random.default_rng(9).standard_normal((3, 2, 3))
    state, t_state, total, t_total = None, None, 0, 0
    for x in xs:
        state, t_state = ours(lt.tensor(x), state), theirs(torch.tensor(x), t_state)
        h, t_h = (state[0], t_state[0]) if name == "LSTMCell" else (state, t_state)
        assert_close(h, t_h.detach())
        total, t_total = total + h.sum(), t_total + t_h.sum()
    total.backward()
    t_total.backward()
    for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_close(p.grad, q.grad)
    one = ours(lt.tensor(xs[0, 0]))
    t_one = theirs(torch.tensor(xs[0, 0]))
    assert_close(one[0] if name == "LSTMCell" else one,
                 (t_one[0] if name == "LSTMCell" else t_one).detach())


def test_parameter_list_and_dict_register_as_torchs():
    def build(nn, m):
        net = nn.Module()
        net.layers = nn.ParameterList([m.ones(2, 3), nn.Parameter(m.zeros(4))])
        net.named = nn.ParameterDict({"scale": m.ones(2)})
        net.named["shift"] = m.zeros(2)
        net.layers.append(m.ones(1))
        return net
    ours, theirs = build(lt.nn, lt), build(torch.nn, torch)
    assert list(dict(ours.named_parameters())) == list(dict(theirs.named_parameters()))
    assert repr(ours.layers) == repr(theirs.layers).replace("torch.", "lazytrain.")
    assert repr(ours.named) == repr(theirs.named).replace("torch.", "lazytrain.")
    assert len(ours.layers) == 3 and "scale" in ours.named and list(ours.named) == [
        "scale", "shift"]
    ours.load_state_dict(theirs.state_dict())
    assert all(isinstance(p, lt.nn.Parameter) and p.requires_grad for p in ours.parameters())
