// MultiheadAttention, step for step as PyTorch 1.13's multi_head_attention_forward (so that its
// checks fail with its messages and its results round alike).
#include "lt/nn/attention.h"

#include <fmt/ranges.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "frontend/nn/layer_args.h"
#include "lt/nn/init.h"
#include "lt/ops.h"

namespace lt::nn {
namespace {

[[noreturn]] void fail(const std::string& what, Loc loc) {
  throw Error(fmt::format("MultiheadAttention: {} at {}", what, location_str(loc)));
}

/// A shape as Python prints a torch.Size.
std::string torch_size(const Shape& s) {
  return fmt::format("torch.Size([{}])", fmt::join(s, ", "));
}

/// A bool mask as the scores' addend: -inf where true, 0 elsewhere.
Tensor additive(const Tensor& mask, DType dtype, Loc loc) {
  if (mask.dtype() != DType::Bool) return mask;
  return masked_fill(zeros(mask.shape(), dtype, loc), mask,
                     -std::numeric_limits<double>::infinity(), loc);
}

}  // namespace

MultiheadAttention::MultiheadAttention(int64_t e, int64_t h, MultiheadAttentionOptions o)
    : embed_dim(e),
      num_heads(h),
      head_dim(h >= 1 ? e / h : 0),
      kdim(o.kdim.value_or(e)),
      vdim(o.vdim.value_or(e)),
      options(o) {
  require(e >= 1 && h >= 1, "MultiheadAttention",
          "needs embed_dim >= 1 and num_heads >= 1, got {} and {}", e, h);
  require(head_dim * h == e, "MultiheadAttention", "embed_dim must be divisible by num_heads");
  require(kdim >= 1 && vdim >= 1, "MultiheadAttention",
          "needs kdim >= 1 and vdim >= 1, got {} and {}", kdim, vdim);
  require(o.dropout >= 0 && o.dropout <= 1, "MultiheadAttention", "dropout = {} outside [0, 1]",
          o.dropout);
  if (kdim == e && vdim == e) {
    in_proj_weight = register_parameter("in_proj_weight", eager_full({3 * e, e}, 0));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", eager_full({e, e}, 0));
    k_proj_weight = register_parameter("k_proj_weight", eager_full({e, kdim}, 0));
    v_proj_weight = register_parameter("v_proj_weight", eager_full({e, vdim}, 0));
  }
  if (o.bias) in_proj_bias = register_parameter("in_proj_bias", eager_full({3 * e}, 0));
  out_proj = register_module("out_proj", std::make_shared<Linear>(e, e, o.bias));
  reset_parameters();
}

void MultiheadAttention::reset_parameters() {
  if (in_proj_weight.defined()) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::zeros_(in_proj_bias);
    init::zeros_(out_proj->bias);
  }
}

std::tuple<Tensor, Tensor> MultiheadAttention::forward(const Tensor& query, const Tensor& key,
                                                       const Tensor& value,
                                                       const Tensor& key_padding_mask,
                                                       bool need_weights, const Tensor& attn_mask,
                                                       bool average_attn_weights, Loc loc) {
  if (!has_hooks())
    return unhooked_forward(query, key, value, key_padding_mask, need_weights, attn_mask,
                            average_attn_weights, loc);
  const TensorList out = with_hooks({query, key, value, key_padding_mask, attn_mask},
                                    [&](const TensorList& in) {
                                      auto [o, w] = unhooked_forward(in[0], in[1], in[2], in[3],
                                                                     need_weights, in[4],
                                                                     average_attn_weights, loc);
                                      return TensorList{o, w};
                                    });
  return {out[0], out[1]};
}

std::tuple<Tensor, Tensor> MultiheadAttention::unhooked_forward(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& key_padding_mask,
    bool need_weights, const Tensor& attn_mask, bool average_attn_weights, Loc loc) {
  if (!query.defined() || !key.defined() || !value.defined())
    fail("query, key and value must be defined", loc);
  const Tensor& kpm_in = key_padding_mask;
  // PyTorch's _mha_shape_check.
  bool batched = true;
  if (query.rank() == 3) {
    if (key.rank() != 3 || value.rank() != 3)
      fail(fmt::format("For batched (3-D) `query`, expected `key` and `value` to be 3-D but "
                       "found {}-D and {}-D tensors respectively",
                       key.rank(), value.rank()),
           loc);
    if (kpm_in.defined() && kpm_in.rank() != 2)
      fail(fmt::format("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or "
                       "2-D but found {}-D tensor instead",
                       kpm_in.rank()),
           loc);
    if (attn_mask.defined() && attn_mask.rank() != 2 && attn_mask.rank() != 3)
      fail(fmt::format("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                       "but found {}-D tensor instead",
                       attn_mask.rank()),
           loc);
  } else if (query.rank() == 2) {
    batched = false;
    if (key.rank() != 2 || value.rank() != 2)
      fail(fmt::format("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but "
                       "found {}-D and {}-D tensors respectively",
                       key.rank(), value.rank()),
           loc);
    if (kpm_in.defined() && kpm_in.rank() != 1)
      fail(fmt::format("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` "
                       "or 1-D but found {}-D tensor instead",
                       kpm_in.rank()),
           loc);
    if (attn_mask.defined()) {
      if (attn_mask.rank() != 2 && attn_mask.rank() != 3)
        fail(fmt::format("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D "
                         "or 3-D but found {}-D tensor instead",
                         attn_mask.rank()),
             loc);
      const Shape want{num_heads, query.shape()[0], key.shape()[0]};
      if (attn_mask.rank() == 3 && attn_mask.shape() != want)
        fail(fmt::format("Expected `attn_mask` shape to be ({}) but got {}", fmt::join(want, ", "),
                         torch_size(attn_mask.shape())),
             loc);
    }
  } else {
    fail(fmt::format("query should be unbatched 2D or batched 3D tensor but received {}-D query "
                     "tensor",
                     query.rank()),
         loc);
  }

  Tensor q = query, k = key, v = value, kpm = kpm_in;
  const bool self_attention = q.impl() == k.impl() && k.impl() == v.impl();
  if (options.batch_first && batched) {
    q = transpose(q, 1, 0, loc);
    k = transpose(k, 1, 0, loc);
    v = transpose(v, 1, 0, loc);
  }
  if (!batched) {
    q = unsqueeze(q, 1, loc);
    k = unsqueeze(k, 1, loc);
    v = unsqueeze(v, 1, loc);
    if (kpm.defined()) kpm = unsqueeze(kpm, 0, loc);
  }
  const int64_t tgt_len = q.shape()[0], bsz = q.shape()[1], e = q.shape()[2];
  const int64_t src_len = k.shape()[0];
  if (kpm.defined() && kpm.dtype() != DType::Bool && !is_float(kpm.dtype()))
    fail("only bool and floating types of key_padding_mask are supported", loc);
  if (e != embed_dim)
    fail(fmt::format("was expecting embedding dimension of {}, but got {}", embed_dim, e), loc);
  const bool separate = !in_proj_weight.defined();
  if (separate) {
    if (k.shape()[0] != v.shape()[0] || k.shape()[1] != v.shape()[1])
      fail(fmt::format("key's sequence and batch dims {} do not match value's {}",
                       torch_size({k.shape()[0], k.shape()[1]}),
                       torch_size({v.shape()[0], v.shape()[1]})),
           loc);
  } else if (k.shape() != v.shape()) {
    fail(fmt::format("key shape {} does not match value shape {}", torch_size(k.shape()),
                     torch_size(v.shape())),
         loc);
  }

  // In-projection: one matmul for self-attention, as PyTorch's _in_projection_packed.
  const std::vector<Tensor> b =
      in_proj_bias.defined() ? chunk(in_proj_bias, 3, 0, loc) : std::vector<Tensor>(3);
  if (!separate && self_attention) {
    const std::vector<Tensor> qkv = chunk(linear(q, in_proj_weight, in_proj_bias, loc), 3, -1, loc);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    const std::vector<Tensor> w =
        separate ? std::vector<Tensor>{q_proj_weight, k_proj_weight, v_proj_weight}
                 : chunk(in_proj_weight, 3, 0, loc);
    q = linear(q, w[0], b[0], loc);
    k = linear(k, w[1], b[1], loc);
    v = linear(v, w[2], b[2], loc);
  }

  Tensor mask = attn_mask;
  if (mask.defined()) {
    if (mask.dtype() != DType::Bool && !is_float(mask.dtype()))
      fail(fmt::format("Only float, byte, and bool types are supported for attn_mask, not {}",
                       dtype_name(mask.dtype())),
           loc);
    if (mask.rank() == 2) {
      if (mask.shape() != Shape{tgt_len, src_len})
        fail(fmt::format("The shape of the 2D attn_mask is {}, but should be ({}, {}).",
                         torch_size(mask.shape()), tgt_len, src_len),
             loc);
      mask = unsqueeze(mask, 0, loc);
    } else if (mask.shape() != Shape{bsz * num_heads, tgt_len, src_len}) {
      fail(fmt::format("The shape of the 3D attn_mask is {}, but should be ({}, {}, {}).",
                       torch_size(mask.shape()), bsz * num_heads, tgt_len, src_len),
           loc);
    }
  }

  // Heads: [L, N, E] -> [N H, L, head_dim].
  auto heads = [&](const Tensor& t) {
    return transpose(reshape(t, {t.shape()[0], bsz * num_heads, head_dim}, loc), 0, 1, loc);
  };
  q = heads(q), k = heads(k), v = heads(v);

  if (kpm.defined()) {
    if (kpm.shape() != Shape{bsz, src_len})
      fail(fmt::format("expecting key_padding_mask shape of ({}, {}), but got {}", bsz, src_len,
                       torch_size(kpm.shape())),
           loc);
    kpm = reshape(expand(reshape(kpm, {bsz, 1, 1, src_len}, loc), {-1, num_heads, -1, -1}, loc),
                  {bsz * num_heads, 1, src_len}, loc);
    if (!mask.defined()) {
      mask = kpm;
    } else if (kpm.dtype() != DType::Bool) {
      fail("a float key_padding_mask takes no attn_mask", loc);
    } else {
      // logical_or of two bool masks, or masked_fill of a float one: -inf where either says so.
      mask = masked_fill(
          expand(additive(mask, q.dtype(), loc), {bsz * num_heads, tgt_len, src_len}, loc), kpm,
          -std::numeric_limits<double>::infinity(), loc);
    }
  }
  if (mask.defined()) mask = additive(mask, q.dtype(), loc);

  const Tensor q_scaled =
      div(q, scalar_like(std::sqrt(static_cast<double>(head_dim)), q, loc), loc);
  Tensor weights = matmul(q_scaled, k, false, true, loc);  // [N H, L, S]
  if (mask.defined()) weights = add(mask, weights, loc);
  weights = softmax(weights, -1, loc);
  if (options.dropout > 0 && is_training()) weights = dropout(weights, options.dropout, true, loc);
  Tensor out = matmul(weights, v, loc);  // [N H, L, head_dim]
  out = reshape(transpose(out, 0, 1, loc), {tgt_len * bsz, embed_dim}, loc);
  out = reshape(out_proj->forward(out, loc), {tgt_len, bsz, embed_dim}, loc);

  if (need_weights) {
    weights = reshape(weights, {bsz, num_heads, tgt_len, src_len}, loc);
    if (average_attn_weights)
      weights = div(sum(weights, {1}, false, loc),
                    scalar_like(static_cast<double>(num_heads), weights, loc), loc);
    if (!batched) weights = squeeze(weights, 0, loc);
  } else {
    weights = Tensor();
  }
  if (!batched) out = squeeze(out, 1, loc);
  if (options.batch_first && batched) out = transpose(out, 1, 0, loc);
  return {out, weights};
}

}  // namespace lt::nn
