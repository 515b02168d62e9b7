// Gradients of modules' parameters against central differences in f64 (Module::to(F64)):
// Linear, Conv2d, LayerNorm, BatchNorm2d, Embedding, causal attention and a transformer block.
#include <gtest/gtest.h>

#include "tests/unit/nn/nn_testing.h"

namespace lt {
namespace {

using testing::expect_gradients_match;

TEST(ModuleGradients, LinearStack) {
  manual_seed(1);
  nn::Sequential net(std::make_shared<nn::Linear>(5, 4), std::make_shared<nn::GELU>("tanh"),
                     std::make_shared<nn::Linear>(4, 3, false));
  net.to(DType::F64);
  const Tensor x = randn({3, 5}, DType::F64);
  expect_gradients_match(net, [&] { return net.forward(x); });
}

TEST(ModuleGradients, Conv2dWithStrideDilationGroups) {
  manual_seed(2);
  nn::Conv2d conv(4, 6, {3, 2},
                  {.stride = {2, 1}, .padding = 1, .dilation = {1, 2}, .groups = 2});
  conv.to(DType::F64);
  const Tensor x = randn({2, 4, 6, 5}, DType::F64);
  expect_gradients_match(conv, [&] { return conv.forward(x); });
}

TEST(ModuleGradients, LayerNormAndBatchNorm) {
  manual_seed(3);
  nn::LayerNorm ln({2, 4});
  ln.to(DType::F64);
  testing::set_values(ln.weight, testing::values(randn({2, 4}, DType::F64)));
  testing::set_values(ln.bias, testing::values(randn({2, 4}, DType::F64)));
  const Tensor x = randn({3, 2, 4}, DType::F64);
  expect_gradients_match(ln, [&] { return ln.forward(x); });

  nn::BatchNorm2d bn(3);
  bn.to(DType::F64);
  testing::set_values(bn.weight, {0.5, 2, -1});
  const Tensor img = randn({4, 3, 2, 2}, DType::F64);
  expect_gradients_match(bn, [&] { return bn.forward(img); });
}

TEST(ModuleGradients, Embedding) {
  manual_seed(4);
  nn::Embedding emb(6, 3);
  emb.to(DType::F64);
  const Tensor ids = from_vector<int64_t>({5, 1, 1, 0, 3}, {5});
  expect_gradients_match(emb, [&] { return emb.forward(ids); });
}

TEST(ModuleGradients, CausalSelfAttention) {
  manual_seed(5);
  nn::CausalSelfAttention attn(8, 2);
  attn.to(DType::F64);
  const Tensor x = randn({2, 4, 8}, DType::F64);
  expect_gradients_match(attn, [&] { return attn.forward(x); }, 1e-6, 40);
}

TEST(ModuleGradients, TransformerBlock) {
  manual_seed(6);
  nn::TransformerBlock block(8, 2);
  block.to(DType::F64);
  const Tensor x = randn({1, 3, 8}, DType::F64);
  expect_gradients_match(block, [&] { return block.forward(x); });
}

}  // namespace
}  // namespace lt
