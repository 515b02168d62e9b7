// Linear and Embedding.
#include "lt/nn/linear.h"

#include <cmath>

#include "frontend/nn/layer_args.h"
#include "lt/nn/init.h"
#include "lt/ops.h"

namespace lt::nn {

Linear::Linear(int64_t in, int64_t out, bool with_bias) : in_features(in), out_features(out) {
  require(in >= 0 && out >= 0, "Linear", "sizes must be >= 0, got in_features={}, out_features={}",
          in, out);
  weight = register_parameter("weight", eager_full({out, in}, 0));
  if (with_bias) bias = register_parameter("bias", eager_full({out}, 0));
  reset_parameters();
}

void Linear::reset_parameters() {
  if (in_features == 0) return;  // no fan: PyTorch leaves such weights uninitialized
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  const double bound = 1 / std::sqrt(static_cast<double>(in_features));
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}

Tensor Linear::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) {
    if (x.defined() && (x.rank() < 1 || x.shape().back() != in_features))
      throw Error(fmt::format("Linear(in_features={}): input {} does not end in {} features at {}",
                              in_features, type_str(x.type()), in_features, location_str(loc)));
    return linear(x, weight, bias, loc);
  });
}

std::string Linear::extra_repr() const {
  return fmt::format("in_features={}, out_features={}, bias={}", in_features, out_features,
                     bias.defined());
}

Embedding::Embedding(int64_t num, int64_t dim) : num_embeddings(num), embedding_dim(dim) {
  require(num >= 1 && dim >= 0, "Embedding",
          "needs num_embeddings >= 1 and embedding_dim >= 0, got {} and {}", num, dim);
  weight = register_parameter("weight", eager_full({num, dim}, 0));
  reset_parameters();
}

void Embedding::reset_parameters() { init::normal_(weight); }

Tensor Embedding::forward(const Tensor& ids, Loc loc) {
  return with_hooks(ids, [&](const Tensor& ids) { return embedding(weight, ids, loc); });
}

std::string Embedding::extra_repr() const {
  return fmt::format("{}, {}", num_embeddings, embedding_dim);
}

}  // namespace lt::nn
