// CausalSelfAttention and TransformerBlock.
#include "lt/nn/transformer.h"

#include <cmath>
#include <limits>

#include "frontend/nn/layer_args.h"
#include "lt/ops.h"

namespace lt::nn {

CausalSelfAttention::CausalSelfAttention(int64_t d, int64_t h, double p, bool bias)
    : d_model(d), n_heads(h) {
  require(d >= 1 && h >= 1 && d % h == 0, "CausalSelfAttention",
          "d_model={} must be a positive multiple of n_heads={}", d, h);
  qkv = register_module("qkv", std::make_shared<Linear>(d, 3 * d, bias));
  proj = register_module("proj", std::make_shared<Linear>(d, d, bias));
  attn_dropout = register_module("attn_dropout", std::make_shared<Dropout>(p));
  resid_dropout = register_module("resid_dropout", std::make_shared<Dropout>(p));
}

Tensor CausalSelfAttention::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) {
    if (!x.defined() || x.rank() != 3 || x.shape()[2] != d_model)
      throw Error(fmt::format("CausalSelfAttention(d_model={}): input {} is not [B, T, {}] at {}",
                              d_model, x.defined() ? type_str(x.type()) : "undefined", d_model,
                              location_str(loc)));
    const int64_t b = x.shape()[0], t = x.shape()[1], c = d_model, d = c / n_heads;
    const Tensor packed = qkv->forward(x, loc);  // [B, T, 3C]: queries, keys, values
    auto heads = [&](int64_t part) {             // [B, H, T, D]
      const Tensor s = slice(packed, 2, part * c, (part + 1) * c, 1, loc);
      return permute(reshape(s, {b, t, n_heads, d}, loc), {0, 2, 1, 3}, loc);
    };
    const Tensor q = heads(0), k = heads(1), v = heads(2);
    Tensor scores = mul(matmul(q, k, false, true, loc),
                        scalar_like(1 / std::sqrt(static_cast<double>(d)), x, loc), loc);
    // future[i][j] = j > i: the keys query i must not see. Built from iota ops (no buffer to
    // size in advance); in lazy mode it folds into the graph.
    const Tensor pos = arange(0, static_cast<double>(t), 1, DType::I64, loc);
    const Tensor future = gt(reshape(pos, {1, t}, loc), reshape(pos, {t, 1}, loc), loc);
    scores = where(future, -std::numeric_limits<double>::infinity(), scores, loc);
    const Tensor att = attn_dropout->forward(softmax(scores, -1, loc), loc);
    const Tensor y = reshape(permute(matmul(att, v, loc), {0, 2, 1, 3}, loc), {b, t, c}, loc);
    return resid_dropout->forward(proj->forward(y, loc), loc);
  });
}

std::string CausalSelfAttention::extra_repr() const {
  return fmt::format("d_model={}, n_heads={}", d_model, n_heads);
}

TransformerBlock::TransformerBlock(int64_t d, int64_t h, double p, std::string gelu_approximate) {
  ln1 = register_module("ln1", std::make_shared<LayerNorm>(Shape{d}));
  attn = register_module("attn", std::make_shared<CausalSelfAttention>(d, h, p));
  ln2 = register_module("ln2", std::make_shared<LayerNorm>(Shape{d}));
  mlp = register_module(
      "mlp", std::make_shared<Sequential>(
                 std::make_shared<Linear>(d, 4 * d),
                 std::make_shared<GELU>(std::move(gelu_approximate)),
                 std::make_shared<Linear>(4 * d, d), std::make_shared<Dropout>(p)));
}

Tensor TransformerBlock::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) {
    const Tensor h = add(x, attn->forward(ln1->forward(x, loc), loc), loc);
    return add(h, mlp->forward(ln2->forward(h, loc), loc), loc);
  });
}

}  // namespace lt::nn
