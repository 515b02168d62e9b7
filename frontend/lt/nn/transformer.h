// The blocks of a small GPT: causal multi-head self-attention and a pre-LayerNorm transformer
// block, composed from matmul, a causal mask, softmax and Linear layers.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "lt/nn/activation.h"
#include "lt/nn/container.h"
#include "lt/nn/linear.h"
#include "lt/nn/norm.h"

namespace lt::nn {

/// Multi-head self-attention over x [B, T, d_model] in which position t attends to positions
/// <= t only. qkv projects to queries, keys and values at once ([3 d_model, d_model], in that
/// order along its output); each of the n_heads heads of size d = d_model / n_heads computes
/// softmax(q k^T / sqrt(d) masked above the diagonal) v; proj maps the joined heads back.
/// Dropout p applies to the attention weights and to the output (training mode only).
class CausalSelfAttention : public Module {
 public:
  CausalSelfAttention(int64_t d_model, int64_t n_heads, double dropout = 0, bool bias = true);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const int64_t d_model, n_heads;
  std::shared_ptr<Linear> qkv, proj;
  std::shared_ptr<Dropout> attn_dropout, resid_dropout;
};

/// x + attn(ln1(x)), then x + mlp(ln2(x)) with mlp = Linear(d, 4d), GELU, Linear(4d, d),
/// Dropout: GPT-2's block.
class TransformerBlock : public Module {
 public:
  TransformerBlock(int64_t d_model, int64_t n_heads, double dropout = 0,
                   std::string gelu_approximate = "tanh");
  Tensor forward(const Tensor& x, Loc loc = Loc::current());

  std::shared_ptr<LayerNorm> ln1, ln2;
  std::shared_ptr<CausalSelfAttention> attn;
  std::shared_ptr<Sequential> mlp;
};

}  // namespace lt::nn
