// torch.nn.MultiheadAttention: attention of queries over keys and values in num_heads heads, with
// PyTorch's parameters, masks and returned weights, composed from linear, matmul and softmax.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <tuple>

#include "lt/nn/linear.h"

namespace lt::nn {

/// torch.nn.MultiheadAttention's keyword arguments (add_bias_kv and add_zero_attn are not
/// supported).
struct MultiheadAttentionOptions {
  /// Dropout on the attention weights, in training mode only.
  double dropout = 0;
  /// in_proj_bias and out_proj.bias.
  bool bias = true;
  /// query, key, value and the output as [N, L, E] instead of [L, N, E].
  bool batch_first = false;
  /// The features of key and value; unset: embed_dim.
  std::optional<int64_t> kdim = std::nullopt, vdim = std::nullopt;
};

/// softmax(q k^T / sqrt(E / num_heads) + mask) v per head, joined and projected by out_proj.
/// With kdim = vdim = embed_dim the projections are packed in in_proj_weight [3 E, E] (q, k, v
/// in that order along its rows), otherwise q_proj_weight [E, E], k_proj_weight [E, kdim] and
/// v_proj_weight [E, vdim]; in_proj_bias [3 E]. Initialized as PyTorch's _reset_parameters:
/// xavier_uniform_ projections, zero biases, out_proj.weight as a Linear's.
class MultiheadAttention : public Module {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, MultiheadAttentionOptions options = {});
  /// torch.nn.MultiheadAttention.forward: query [L, N, E], key [S, N, kdim], value [S, N, vdim]
  /// ([N, L, E] and so on with batch_first; unbatched [L, E], [S, kdim], [S, vdim]).
  /// key_padding_mask [N, S] ([S] unbatched) and attn_mask [L, S] or [N num_heads, L, S] are
  /// bool (true: may not attend) or float (added to the scores). Returns the output [L, N, E]
  /// (in the query's layout) and, with need_weights, the attention weights [N, L, S], the mean
  /// over heads (average_attn_weights) or [N, num_heads, L, S]; else an undefined tensor.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true,
                                     Loc loc = Loc::current());
  /// Draws the initial values again (from the global generator).
  void reset_parameters();

  const int64_t embed_dim, num_heads, head_dim, kdim, vdim;
  const MultiheadAttentionOptions options;
  /// Defined when kdim = vdim = embed_dim ...
  Tensor in_proj_weight;
  /// ... else these three.
  Tensor q_proj_weight, k_proj_weight, v_proj_weight;
  Tensor in_proj_bias;  ///< undefined without options.bias
  std::shared_ptr<Linear> out_proj;

 private:
  std::tuple<Tensor, Tensor> unhooked_forward(const Tensor& query, const Tensor& key,
                                              const Tensor& value, const Tensor& key_padding_mask,
                                              bool need_weights, const Tensor& attn_mask,
                                              bool average_attn_weights, Loc loc);
};

}  // namespace lt::nn
