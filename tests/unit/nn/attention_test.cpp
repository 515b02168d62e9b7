// CausalSelfAttention against a per-head computation written out on the host, causality
// (changing later positions leaves earlier outputs unchanged), and TransformerBlock's wiring.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/all_close.h"
#include "tests/unit/nn/nn_testing.h"

namespace lt {
namespace {

using testing::AllClose;
using testing::values;

/// out = proj(concat_h softmax_causal(q_h k_h^T / sqrt(d)) v_h), all on the host in double.
std::vector<double> host_attention(const nn::CausalSelfAttention& m, const std::vector<double>& x,
                                   int64_t b, int64_t t) {
  const int64_t c = m.d_model, h = m.n_heads, d = c / h;
  const auto wqkv = values(m.qkv->weight), bqkv = values(m.qkv->bias);
  const auto wp = values(m.proj->weight), bp = values(m.proj->bias);
  std::vector<double> out(b * t * c);
  for (int64_t n = 0; n < b; ++n) {
    // qkv[i][o] for position i, output o of the packed projection.
    std::vector<double> qkv(t * 3 * c);
    for (int64_t i = 0; i < t; ++i)
      for (int64_t o = 0; o < 3 * c; ++o) {
        double acc = bqkv[o];
        for (int64_t k = 0; k < c; ++k) acc += x[(n * t + i) * c + k] * wqkv[o * c + k];
        qkv[i * 3 * c + o] = acc;
      }
    std::vector<double> joined(t * c);
    for (int64_t head = 0; head < h; ++head)
      for (int64_t i = 0; i < t; ++i) {
        std::vector<double> score(i + 1);  // keys 0..i only
        double top = -1e300;
        for (int64_t j = 0; j <= i; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < d; ++e)
            dot += qkv[i * 3 * c + head * d + e] * qkv[j * 3 * c + c + head * d + e];
          score[j] = dot / std::sqrt(static_cast<double>(d));
          top = std::max(top, score[j]);
        }
        double z = 0;
        for (double& s : score) z += (s = std::exp(s - top));
        for (int64_t e = 0; e < d; ++e) {
          double acc = 0;
          for (int64_t j = 0; j <= i; ++j)
            acc += score[j] / z * qkv[j * 3 * c + 2 * c + head * d + e];
          joined[i * c + head * d + e] = acc;
        }
      }
    for (int64_t i = 0; i < t; ++i)
      for (int64_t o = 0; o < c; ++o) {
        double acc = bp[o];
        for (int64_t k = 0; k < c; ++k) acc += joined[i * c + k] * wp[o * c + k];
        out[(n * t + i) * c + o] = acc;
      }
  }
  return out;
}

TEST(CausalSelfAttention, MatchesAPerHeadComputation) {
  manual_seed(1);
  nn::CausalSelfAttention attn(12, 3);
  EXPECT_EQ(attn.qkv->weight.shape(), (Shape{36, 12}));
  EXPECT_EQ(attn.proj->weight.shape(), (Shape{12, 12}));
  const Tensor x = randn({2, 5, 12});
  const auto want = host_attention(attn, values(x), 2, 5);
  EXPECT_TRUE(AllClose(attn.forward(x), cast(from_vector<double>(want, {2, 5, 12}), DType::F32),
                       1e-5, 1e-4));
  EXPECT_EQ(testing::error_of([] { nn::CausalSelfAttention(10, 3); }),
            "CausalSelfAttention: d_model=10 must be a positive multiple of n_heads=3");
}

TEST(CausalSelfAttention, APositionNeverSeesLaterOnes) {
  manual_seed(2);
  nn::CausalSelfAttention attn(8, 2);
  const Tensor x = randn({1, 6, 8});
  const auto before = values(attn.forward(x));
  // Change positions 3..5 only.
  std::vector<double> xv = values(x);
  for (size_t k = 3 * 8; k < xv.size(); ++k) xv[k] = 10 * xv[k] + 1;
  const auto after = values(attn.forward(cast(from_vector<double>(xv, {1, 6, 8}), DType::F32)));
  for (size_t k = 0; k < 3 * 8; ++k) EXPECT_EQ(after[k], before[k]) << "element " << k;
  int changed = 0;
  for (size_t k = 3 * 8; k < after.size(); ++k) changed += after[k] != before[k];
  EXPECT_EQ(changed, 3 * 8);
}

TEST(CausalSelfAttention, DropoutOnlyInTraining) {
  manual_seed(3);
  nn::CausalSelfAttention attn(8, 2, /*dropout=*/0.5);
  const Tensor x = randn({2, 4, 8});
  attn.eval();
  const auto want = host_attention(attn, values(x), 2, 4);
  EXPECT_TRUE(AllClose(attn.forward(x), cast(from_vector<double>(want, {2, 4, 8}), DType::F32),
                       1e-5, 1e-4));
  attn.train();
  EXPECT_FALSE(AllClose(attn.forward(x), cast(from_vector<double>(want, {2, 4, 8}), DType::F32),
                        1e-3, 1e-3));
}

TEST(TransformerBlock, PreNormResidualsAroundAttentionAndMlp) {
  manual_seed(4);
  nn::TransformerBlock block(8, 2);
  std::vector<std::string> names;
  for (const auto& [name, _] : block.named_parameters()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "ln1.weight", "ln1.bias", "attn.qkv.weight", "attn.qkv.bias",
                       "attn.proj.weight", "attn.proj.bias", "ln2.weight", "ln2.bias",
                       "mlp.0.weight", "mlp.0.bias", "mlp.2.weight", "mlp.2.bias"}));
  EXPECT_EQ(block.mlp->at<nn::Linear>(0)->out_features, 32);
  const Tensor x = randn({2, 3, 8});
  const Tensor h = x + block.attn->forward(layer_norm(x, block.ln1->weight, block.ln1->bias));
  const Tensor m = gelu(linear(layer_norm(h, block.ln2->weight, block.ln2->bias),
                               block.mlp->at<nn::Linear>(0)->weight,
                               block.mlp->at<nn::Linear>(0)->bias),
                        "tanh");
  const Tensor want =
      h + linear(m, block.mlp->at<nn::Linear>(2)->weight, block.mlp->at<nn::Linear>(2)->bias);
  EXPECT_TRUE(AllClose(block.forward(x), want, 1e-6, 1e-6));
}

}  // namespace
}  // namespace lt
