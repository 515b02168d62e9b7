"""nn.MultiheadAttention, the Transformer encoder and decoder layers and stacks, and
nn.Transformer in Python over the ops, with PyTorch 1.13's parameter names, initialization and
math (q scaled by 1/sqrt(head dim) before q k^T; a bool mask marks the positions that may not be
attended)."""
import copy
import math

from .. import _C, _ops
from .. import _dtype as D
from . import functional as F
from . import init
from .container import ModuleList
from .layers import Dropout, LayerNorm, Linear
from .module import Module
from .parameter import Parameter


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's name for the attention's output projection (its repr and checkpoints)."""


def _additive(mask, dtype, shape):
    """A bool mask (True: masked) as -inf where masked, else 0; a float mask as it is."""
    if mask._dtype == D.bool._code:
        zeros = _C.zeros(list(mask._shape), dtype)
        mask = _C.masked_fill(zeros, mask, -math.inf)
    return _C.expand(mask, shape)


def _pad_key(mask):
    """A mask with one more key position (the last dim), which is not masked."""
    if mask is None:
        return None
    return _ops.cat([mask, _C.zeros(list(mask._shape[:-1]) + [1], mask._dtype)], -1)


class MultiheadAttention(Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        if embed_dim % num_heads:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.batch_first, self.head_dim = batch_first, embed_dim // num_heads
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        code = (dtype or D.float32)._code
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(_C.zeros([3 * embed_dim, embed_dim], code))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:  # separate projections of keys and values of their own sizes, as PyTorch's
            self.q_proj_weight = Parameter(_C.zeros([embed_dim, embed_dim], code))
            self.k_proj_weight = Parameter(_C.zeros([embed_dim, self.kdim], code))
            self.v_proj_weight = Parameter(_C.zeros([embed_dim, self.vdim], code))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_C.zeros([3 * embed_dim], code))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        if add_bias_kv:  # a key and a value appended to every sequence's, learned
            self.bias_k = Parameter(_C.zeros([1, 1, embed_dim], code))
            self.bias_v = Parameter(_C.zeros([1, 1, embed_dim], code))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if bias:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if add_bias_kv:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True):
        batched = query.dim() == 3
        if not batched:
            query, key, value = (_C.unsqueeze(t, 1) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = _C.unsqueeze(key_padding_mask, 0)
        elif self.batch_first:
            query, key, value = (_C.transpose(t, 0, 1) for t in (query, key, value))
        L, N, E = query._shape
        S, H, d = key._shape[0], self.num_heads, self.head_dim
        if self._qkv_same_embed_dim:
            w_q, w_k, w_v = _ops.chunk(self.in_proj_weight, 3, 0)
        else:
            w_q, w_k, w_v = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        b_q, b_k, b_v = (_ops.chunk(self.in_proj_bias, 3, 0) if self.in_proj_bias is not None
                         else (None, None, None))
        k, v = F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)
        if self.bias_k is not None:  # one more key and value per sequence, as PyTorch's
            k = _ops.cat([k, _C.expand(self.bias_k, [1, N, E])], 0)
            v = _ops.cat([v, _C.expand(self.bias_v, [1, N, E])], 0)
            attn_mask, key_padding_mask, S = _pad_key(attn_mask), _pad_key(key_padding_mask), S + 1
        # [len, N, E] -> [N * H, len, d]
        q = _C.transpose(_C.reshape(F.linear(query, w_q, b_q), [L, N * H, d]), 0, 1)
        k = _C.transpose(_C.reshape(k, [S, N * H, d]), 0, 1)
        v = _C.transpose(_C.reshape(v, [S, N * H, d]), 0, 1)
        if self.add_zero_attn:  # and a zero key and value
            k = _ops.cat([k, _C.zeros([N * H, 1, d], k._dtype)], 1)
            v = _ops.cat([v, _C.zeros([N * H, 1, d], v._dtype)], 1)
            attn_mask, key_padding_mask, S = _pad_key(attn_mask), _pad_key(key_padding_mask), S + 1
        q = _C.div(q, _C.scalar(math.sqrt(d), q._dtype))
        scores = _C.matmul(q, _C.transpose(k, 1, 2))  # [N * H, L, S]
        if attn_mask is not None:
            shape = [N * H, L, S] if attn_mask.dim() == 3 else [L, S]
            scores = _C.add(scores, _additive(attn_mask, scores._dtype, shape))
        if key_padding_mask is not None:
            pad = _C.reshape(key_padding_mask, [N, 1, 1, S])
            scores = _C.reshape(scores, [N, H, L, S])
            scores = _C.add(scores, _additive(pad, scores._dtype, [N, H, L, S]))
            scores = _C.reshape(scores, [N * H, L, S])
        weights = _C.softmax(scores, -1)
        if self.dropout > 0 and self.training:
            weights = F.dropout(weights, self.dropout, True)
        out = _C.matmul(weights, v)  # [N * H, L, d]
        out = _C.reshape(_C.transpose(out, 0, 1), [L, N, E])
        out = self.out_proj(out)
        if not batched:
            out = _C.squeeze(out, 1)
        elif self.batch_first:
            out = _C.transpose(out, 0, 1)
        if not need_weights:
            return out, None
        weights = _C.reshape(weights, [N, H, L, S])
        if average_attn_weights:
            weights = _C.mean(weights, [1], False)
        if not batched:
            weights = _C.squeeze(weights, 0)
        return out, weights


class TransformerEncoderLayer(Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, device=None,
                 dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def _sa(self, x, mask, padding):
        out = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding,
                             need_weights=False)[0]
        return self.dropout1(out)

    def _ff(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None):
        x = src
        if self.norm_first:
            x = _C.add(x, self._sa(self.norm1(x), src_mask, src_key_padding_mask))
            return _C.add(x, self._ff(self.norm2(x)))
        x = self.norm1(_C.add(x, self._sa(x, src_mask, src_key_padding_mask)))
        return self.norm2(_C.add(x, self._ff(x)))


class TransformerEncoder(Module):
    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None):
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        return x if self.norm is None else self.norm(x)


def _activation(activation):
    if isinstance(activation, str):
        if activation not in ("relu", "gelu"):
            raise RuntimeError(f"activation should be relu/gelu, not {activation}")
        return F.relu if activation == "relu" else F.gelu
    return activation


class TransformerDecoderLayer(Module):
    """Self-attention over tgt, attention from tgt to memory, then the feed-forward block, each
    with its residual and LayerNorm (after it, or before it with norm_first), as PyTorch's."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, device=None,
                 dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def _sa(self, x, mask, padding):
        return self.dropout1(self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding,
                                            need_weights=False)[0])

    def _mha(self, x, memory, mask, padding):
        return self.dropout2(self.multihead_attn(x, memory, memory, attn_mask=mask,
                                                 key_padding_mask=padding,
                                                 need_weights=False)[0])

    def _ff(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None):
        x = tgt
        if self.norm_first:
            x = _C.add(x, self._sa(self.norm1(x), tgt_mask, tgt_key_padding_mask))
            x = _C.add(x, self._mha(self.norm2(x), memory, memory_mask, memory_key_padding_mask))
            return _C.add(x, self._ff(self.norm3(x)))
        x = self.norm1(_C.add(x, self._sa(x, tgt_mask, tgt_key_padding_mask)))
        x = self.norm2(_C.add(x, self._mha(x, memory, memory_mask, memory_key_padding_mask)))
        return self.norm3(_C.add(x, self._ff(x)))


class TransformerDecoder(Module):
    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None):
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """PyTorch's nn.Transformer: an encoder and a decoder stack, each ending in a LayerNorm,
    every weight matrix drawn xavier-uniform."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 device=None, dtype=None):
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, dtype=dtype)
            self.encoder = TransformerEncoder(layer, num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            layer_norm_eps, batch_first, norm_first, dtype=dtype)
            self.decoder = TransformerDecoder(layer, num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype))
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None):
        batched = src.dim() == 3
        batch = 0 if self.batch_first else 1
        if batched and src.shape[batch] != tgt.shape[batch]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """-inf above the diagonal, 0 elsewhere: position i attends to positions up to i."""
        return _ops.triu(_C.full([sz, sz], float("-inf"), (dtype or D.float32)._code), 1)
