// Dense layers: Linear (x W^T + b) and Embedding (rows of a table by id).
#pragma once
#include <cstdint>

#include "lt/nn/module.h"

namespace lt::nn {

/// y = x W^T + b over the last dim, W [out_features, in_features]. Initialized as PyTorch's:
/// W ~ U(-1/sqrt(in), 1/sqrt(in)) (kaiming-uniform with a = sqrt(5)), b the same bound.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  /// Draws the initial values again (from the global generator).
  void reset_parameters();
  std::string extra_repr() const override;

  const int64_t in_features, out_features;
  Tensor weight, bias;  ///< bias undefined without bias
};

/// Rows of `weight` [num_embeddings, embedding_dim] by integer id: ids [...] -> [..., dim].
/// Initialized N(0, 1).
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim);
  Tensor forward(const Tensor& ids, Loc loc = Loc::current());
  void reset_parameters();
  std::string extra_repr() const override;

  const int64_t num_embeddings, embedding_dim;
  Tensor weight;
};

}  // namespace lt::nn
