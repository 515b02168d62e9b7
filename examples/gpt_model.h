// A byte-level GPT (GPT-2's layout, small): token and learned position embeddings, pre-LayerNorm
// transformer blocks (causal multi-head self-attention, a 4x MLP with exact GELU), a final
// LayerNorm and an untied linear head to 256 byte logits. Weights start as GPT-2's: N(0, 0.02)
// for linear and embedding weights, the residual projections scaled by 1/sqrt(2 * layers), zero
// biases.
#pragma once
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "lt/lt.h"

namespace lt::examples {

struct GptConfig {
  int64_t vocab = 256;
  int64_t context = 64;
  int64_t d_model = 128;
  int64_t layers = 2;
  int64_t heads = 4;
  double dropout = 0.1;
};

class CharGpt : public nn::Module {
 public:
  explicit CharGpt(const GptConfig& c) : config(c) {
    tok = register_module("tok", std::make_shared<nn::Embedding>(c.vocab, c.d_model));
    pos = register_module("pos", std::make_shared<nn::Embedding>(c.context, c.d_model));
    drop = register_module("drop", std::make_shared<nn::Dropout>(c.dropout));
    for (int64_t i = 0; i < c.layers; ++i)
      blocks.push_back(register_module(
          "h" + std::to_string(i),
          std::make_shared<nn::TransformerBlock>(c.d_model, c.heads, c.dropout, "none")));
    ln_f = register_module("ln_f", std::make_shared<nn::LayerNorm>(Shape{c.d_model}));
    head = register_module("head", std::make_shared<nn::Linear>(c.d_model, c.vocab, false));

    const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(c.layers));
    for (auto& [name, p] : named_parameters()) {
      const bool residual_proj =
          name.ends_with("attn.proj.weight") || name.ends_with("mlp.2.weight");
      if (name.ends_with(".bias")) nn::init::zeros_(p);
      else if (p.rank() == 2) nn::init::normal_(p, 0, residual_proj ? residual_std : 0.02);
    }
  }

  /// Logits [B, T, vocab] of byte ids [B, T], T <= context.
  Tensor forward(const Tensor& ids) {
    const int64_t t = ids.size(1);
    Tensor x = tok->forward(ids) + pos->forward(arange(0, static_cast<double>(t)));
    x = drop->forward(x);
    for (const auto& b : blocks)
      x = checkpoint_blocks ? lt::checkpoint([&b](const Tensor& t) { return b->forward(t); }, x)
                            : b->forward(x);
    return head->forward(ln_f->forward(x));
  }

  /// Each transformer block under lt::checkpoint (its activations recomputed in backward).
  bool checkpoint_blocks = false;

  const GptConfig config;
  std::shared_ptr<nn::Embedding> tok, pos;
  std::shared_ptr<nn::Dropout> drop;
  std::vector<std::shared_ptr<nn::TransformerBlock>> blocks;
  std::shared_ptr<nn::LayerNorm> ln_f;
  std::shared_ptr<nn::Linear> head;
};

}  // namespace lt::examples
