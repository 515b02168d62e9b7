"""nn.LSTM and nn.GRU in Python over the ops, with PyTorch's parameter names, gate order and
initialization. The input projection of a layer is one matmul over every time step; the steps'
recurrence is unrolled (in lazy mode, into the step's graph)."""
import math

from .. import _C, _ops
from .. import _dtype as D
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


class _RNNBase(Module):
    _gates = None

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size and self._gates != 4:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1]")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        code = (dtype or D.float32)._code
        g = self._gates * hidden_size
        out = proj_size or hidden_size  # the width of h: the projection's, where there is one
        for layer in range(num_layers):
            for suffix in ["", "_reverse"][:2 if bidirectional else 1]:
                width = input_size if layer == 0 else out * (2 if bidirectional else 1)
                setattr(self, f"weight_ih_l{layer}{suffix}", Parameter(_C.zeros([g, width], code)))
                setattr(self, f"weight_hh_l{layer}{suffix}", Parameter(_C.zeros([g, out], code)))
                if bias:
                    setattr(self, f"bias_ih_l{layer}{suffix}", Parameter(_C.zeros([g], code)))
                    setattr(self, f"bias_hh_l{layer}{suffix}", Parameter(_C.zeros([g], code)))
                if proj_size:
                    setattr(self, f"weight_hr_l{layer}{suffix}",
                            Parameter(_C.zeros([proj_size, hidden_size], code)))
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _weights(self, layer, suffix):
        get = self._parameters.get
        return (get(f"weight_ih_l{layer}{suffix}"), get(f"weight_hh_l{layer}{suffix}"),
                get(f"bias_ih_l{layer}{suffix}"), get(f"bias_hh_l{layer}{suffix}"),
                get(f"weight_hr_l{layer}{suffix}"))

    def _run(self, x, states):
        """x [L, N, in]; states: per (layer, direction) the initial state tuple."""
        dirs = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outs = []
            for d, suffix in enumerate(["", "_reverse"][:dirs]):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, suffix)
                projected = F.linear(x, w_ih, b_ih)  # [L, N, gates * H], all steps at once
                steps = _ops.unbind(projected, 0)
                state = states[layer * dirs + d]
                hs = [None] * len(steps)
                order = range(len(steps) - 1, -1, -1) if d else range(len(steps))
                for t in order:
                    state = self._cell(steps[t], state, w_hh, b_hh, w_hr)
                    hs[t] = state[0]
                outs.append(_ops.stack(hs, 0))
                finals.append(state)
            x = outs[0] if dirs == 1 else _ops.cat(outs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, finals

    def _prepare(self, input, hx):
        unbatched = input.dim() == 2
        if unbatched:
            input = _C.unsqueeze(input, 1)
            if hx is not None:
                hx = tuple(_C.unsqueeze(h, 1) for h in hx) if isinstance(hx, tuple) else (
                    _C.unsqueeze(hx, 1))
        elif self.batch_first:
            input = _C.transpose(input, 0, 1)
        return input, hx, unbatched

    def _finish(self, out, unbatched):
        if unbatched:
            return _C.squeeze(out, 1)
        return _C.transpose(out, 0, 1) if self.batch_first else out

    def _zeros(self, input, width=None):
        dirs = 2 if self.bidirectional else 1
        return _C.zeros([self.num_layers * dirs, input._shape[1], width or self.hidden_size],
                        input._dtype)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class LSTM(_RNNBase):
    """Returns output, (h_n, c_n); gates i, f, g, o as PyTorch's; with proj_size, h is projected
    to that width by weight_hr after each step (c keeps hidden_size)."""
    _gates = 4

    def _cell(self, x_t, state, w_hh, b_hh, w_hr):
        h, c = state
        gates = _C.add(x_t, F.linear(h, w_hh, b_hh))
        i, f, g, o = _ops.chunk(gates, 4, 1)
        c = _C.add(_C.mul(_C.sigmoid(f), c), _C.mul(_C.sigmoid(i), _C.tanh(g)))
        h = _C.mul(_C.sigmoid(o), _C.tanh(c))
        return (h if w_hr is None else F.linear(h, w_hr)), c

    def forward(self, input, hx=None):
        input, hx, unbatched = self._prepare(input, hx)
        h0, c0 = hx if hx is not None else (self._zeros(input, self.proj_size),
                                             self._zeros(input))
        states = list(zip(_ops.unbind(h0, 0), _ops.unbind(c0, 0)))
        out, finals = self._run(input, states)
        h_n = _ops.stack([h for h, _ in finals], 0)
        c_n = _ops.stack([c for _, c in finals], 0)
        if unbatched:
            h_n, c_n = _C.squeeze(h_n, 1), _C.squeeze(c_n, 1)
        return self._finish(out, unbatched), (h_n, c_n)


class GRU(_RNNBase):
    """Returns output, h_n; gates r, z, n as PyTorch's (r scales the hidden part of n)."""
    _gates = 3

    def _cell(self, x_t, state, w_hh, b_hh, w_hr):
        (h,) = state
        x_r, x_z, x_n = _ops.chunk(x_t, 3, 1)
        h_r, h_z, h_n = _ops.chunk(F.linear(h, w_hh, b_hh), 3, 1)
        r = _C.sigmoid(_C.add(x_r, h_r))
        z = _C.sigmoid(_C.add(x_z, h_z))
        n = _C.tanh(_C.add(x_n, _C.mul(r, h_n)))
        return (_C.add(n, _C.mul(z, _C.sub(h, n))),)  # (1 - z) n + z h

    def forward(self, input, hx=None):
        input, hx, unbatched = self._prepare(input, hx)
        h0 = hx if hx is not None else self._zeros(input)
        out, finals = self._run(input, [(h,) for h in _ops.unbind(h0, 0)])
        h_n = _ops.stack([h for (h,) in finals], 0)
        if unbatched:
            h_n = _C.squeeze(h_n, 1)
        return self._finish(out, unbatched), h_n


class RNN(_RNNBase):
    """Elman RNN: h' = tanh (or relu) of x W_ih^T + b_ih + h W_hh^T + b_hh; returns output,
    h_n. nonlinearity is keyword-only, as PyTorch's."""
    _gates = 1

    def __init__(self, *args, nonlinearity="tanh", **kwargs):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(*args, **kwargs)

    def _cell(self, x_t, state, w_hh, b_hh, w_hr):
        (h,) = state
        pre = _C.add(x_t, F.linear(h, w_hh, b_hh))
        return (_C.tanh(pre) if self.nonlinearity == "tanh" else _C.relu(pre),)

    def forward(self, input, hx=None):
        return GRU.forward(self, input, hx)


class _CellBase(Module):
    """One step of a recurrent layer: weight_ih, weight_hh, bias_ih, bias_hh as PyTorch's."""
    _layer = None

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        code = (dtype or D.float32)._code
        g = self._layer._gates * hidden_size
        self.weight_ih = Parameter(_C.zeros([g, input_size], code))
        self.weight_hh = Parameter(_C.zeros([g, hidden_size], code))
        if bias:
            self.bias_ih = Parameter(_C.zeros([g], code))
            self.bias_hh = Parameter(_C.zeros([g], code))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        _RNNBase.reset_parameters(self)

    def _step(self, input, state):
        unbatched = input.dim() == 1
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got "
                             f"{input.dim()}D instead")
        if unbatched:
            input = _C.unsqueeze(input, 0)
            state = None if state is None else tuple(_C.unsqueeze(s, 0) for s in state)
        if state is None:
            zeros = _C.zeros([input._shape[0], self.hidden_size], input._dtype)
            state = (zeros,) * self._states
        out = self._layer._cell(self, F.linear(input, self.weight_ih, self.bias_ih), state,
                                self.weight_hh, self.bias_hh, None)
        return tuple(_C.squeeze(s, 0) for s in out) if unbatched else out

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class LSTMCell(_CellBase):
    """Returns (h', c')."""
    _layer, _states = LSTM, 2

    def forward(self, input, hx=None):
        return self._step(input, hx)


class GRUCell(_CellBase):
    _layer, _states = GRU, 1

    def forward(self, input, hx=None):
        return self._step(input, None if hx is None else (hx,))[0]


class RNNCell(_CellBase):
    _layer, _states = RNN, 1

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):
        return self._step(input, None if hx is None else (hx,))[0]
