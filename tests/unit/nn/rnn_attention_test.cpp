// LSTM, GRU and MultiheadAttention: PyTorch's state_dict names and shapes, the initialization
// bounds, dropout in training mode only, PyTorch's error texts for bad shapes, and lazy mode
// against eager mode (values and parameter gradients). Values against PyTorch are in
// rnn_attention_reference_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/support/lazy_vs_eager.h"
#include "tests/unit/nn/nn_testing.h"

namespace lt {
namespace {

using testing::error_of;
using testing::values;

std::vector<std::pair<std::string, Shape>> names_and_shapes(const nn::Module& m) {
  std::vector<std::pair<std::string, Shape>> out;
  for (const auto& [name, t] : m.named_parameters()) out.emplace_back(name, t.shape());
  return out;
}

/// The message without its " at file:line" suffix.
std::string reason(const std::function<void()>& f) {
  const std::string m = error_of(f);
  return m.substr(0, m.rfind(" at "));
}

Tensor f64(Shape s) { return zeros(std::move(s), DType::F64); }

TEST(RnnLayers, ParameterNamesAndShapesArePyTorchs) {
  const nn::LSTM lstm(3, 4, {.num_layers = 2, .bidirectional = true});
  const std::vector<std::pair<std::string, Shape>> want{{"weight_ih_l0", {16, 3}},
                                                        {"weight_hh_l0", {16, 4}},
                                                        {"bias_ih_l0", {16}},
                                                        {"bias_hh_l0", {16}},
                                                        {"weight_ih_l0_reverse", {16, 3}},
                                                        {"weight_hh_l0_reverse", {16, 4}},
                                                        {"bias_ih_l0_reverse", {16}},
                                                        {"bias_hh_l0_reverse", {16}},
                                                        {"weight_ih_l1", {16, 8}},
                                                        {"weight_hh_l1", {16, 4}},
                                                        {"bias_ih_l1", {16}},
                                                        {"bias_hh_l1", {16}},
                                                        {"weight_ih_l1_reverse", {16, 8}},
                                                        {"weight_hh_l1_reverse", {16, 4}},
                                                        {"bias_ih_l1_reverse", {16}},
                                                        {"bias_hh_l1_reverse", {16}}};
  EXPECT_EQ(names_and_shapes(lstm), want);
  EXPECT_EQ(lstm.state_dict().size(), want.size());
  const nn::GRU gru(5, 3, {.num_layers = 2, .bias = false});
  EXPECT_EQ(names_and_shapes(gru),
            (std::vector<std::pair<std::string, Shape>>{{"weight_ih_l0", {9, 5}},
                                                        {"weight_hh_l0", {9, 3}},
                                                        {"weight_ih_l1", {9, 3}},
                                                        {"weight_hh_l1", {9, 3}}}));
  EXPECT_EQ(lstm.str(), "LSTM(3, 4, num_layers=2, bidirectional=true)");
  EXPECT_EQ(nn::GRU(2, 3, {.bias = false, .batch_first = true, .dropout = 0.5}).str(),
            "GRU(2, 3, bias=false, batch_first=true, dropout=0.5)");
}

TEST(RnnLayers, InitializationIsUniformWithinOneOverSqrtHidden) {
  manual_seed(3);
  nn::LSTM lstm(10, 16, {.num_layers = 2, .bidirectional = true});
  nn::GRU gru(10, 16);
  for (nn::Module* m : std::initializer_list<nn::Module*>{&lstm, &gru})
    for (const auto& [name, p] : m->named_parameters()) {
      SCOPED_TRACE(name);
      const std::vector<double> v = values(p);
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      EXPECT_GE(*lo, -0.25);
      EXPECT_LE(*hi, 0.25);
      EXPECT_LT(*lo, -0.2);  // the whole range is drawn from
      EXPECT_GT(*hi, 0.2);
    }
  const std::vector<double> before = values(lstm.state_dict().at("weight_hh_l1_reverse"));
  lstm.reset_parameters();
  EXPECT_NE(values(lstm.state_dict().at("weight_hh_l1_reverse")), before);
}

TEST(RnnLayers, DropoutActsBetweenLayersInTrainingOnly) {
  manual_seed(5);
  nn::LSTM with(3, 4, {.num_layers = 2, .dropout = 0.5});
  nn::LSTM without(3, 4, {.num_layers = 2});
  without.load_state_dict(with.state_dict());
  const Tensor x = randn({5, 2, 3});
  const auto out = [&](nn::LSTM& m) { return values(std::get<0>(m.forward(x))); };
  EXPECT_NE(out(with), out(without));
  with.eval();
  EXPECT_EQ(out(with), out(without));
  // One layer: nothing lies between layers.
  nn::GRU one(3, 4, {.dropout = 0.5}), plain(3, 4);
  plain.load_state_dict(one.state_dict());
  EXPECT_EQ(values(std::get<0>(one.forward(x))), values(std::get<0>(plain.forward(x))));
}

TEST(RnnLayers, ShapesArePyTorchs) {
  nn::LSTM lstm(3, 4, {.num_layers = 2, .batch_first = true, .bidirectional = true});
  auto [out, state] = lstm.forward(randn({2, 5, 3}));
  EXPECT_EQ(out.shape(), (Shape{2, 5, 8}));
  EXPECT_EQ(std::get<0>(state).shape(), (Shape{4, 2, 4}));
  EXPECT_EQ(std::get<1>(state).shape(), (Shape{4, 2, 4}));
  nn::GRU gru(3, 4, {.num_layers = 3});
  auto [y, h] = gru.forward(randn({5, 3}));  // unbatched
  EXPECT_EQ(y.shape(), (Shape{5, 4}));
  EXPECT_EQ(h.shape(), (Shape{3, 4}));
}

TEST(RnnLayers, ErrorsArePyTorchs) {
  nn::LSTM lstm(3, 4, {.num_layers = 2});
  lstm.to(DType::F64);
  const Tensor x = f64({5, 2, 3});
  EXPECT_EQ(reason([&] {
              lstm.forward(f64({5, 2, 3, 1}));
            }),
            "LSTM: input must have 3 dimensions, got 5");
  EXPECT_EQ(reason([&] {
              lstm.forward(f64({5, 2, 4}));
            }),
            "LSTM: input.size(-1) must be equal to input_size. Expected 3, got 4");
  EXPECT_EQ(reason([&] {
              lstm.forward(x, std::tuple{f64({2, 3, 4}), f64({2, 2, 4})});
            }),
            "LSTM: Expected hidden[0] size (2, 2, 4), got [2, 3, 4]");
  EXPECT_EQ(reason([&] {
              lstm.forward(x, std::tuple{f64({2, 2, 4}), f64({2, 2, 5})});
            }),
            "LSTM: Expected hidden[1] size (2, 2, 4), got [2, 2, 5]");
  EXPECT_EQ(reason([&] {
              lstm.forward(x, std::tuple{f64({2, 4}), f64({2, 2, 4})});
            }),
            "LSTM: For batched 3-D input, hx and cx should also be 3-D but got (2-D, 3-D) "
            "tensors");
  EXPECT_EQ(reason([&] {
              lstm.forward(f64({5, 3}), std::tuple{x, x});
            }),
            "LSTM: For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 3-D) "
            "tensors");
  EXPECT_EQ(reason([&] {
              lstm.forward(f64({5, 3}), std::tuple{f64({2, 3}), f64({2, 4})});
            }),
            "LSTM: Expected hidden[0] size (2, 1, 4), got [2, 1, 3]");
  nn::GRU gru(3, 4);
  gru.to(DType::F64);
  EXPECT_EQ(reason([&] {
              gru.forward(x, f64({1, 4}));
            }),
            "GRU: For batched 3-D input, hx should also be 3-D but got 2-D tensor");
  EXPECT_EQ(reason([&] {
              gru.forward(f64({5, 3}), f64({1, 2, 4}));
            }),
            "GRU: For unbatched 2-D input, hx should also be 2-D but got 3-D tensor");
  EXPECT_EQ(reason([&] {
              gru.forward(x, f64({1, 3, 4}));
            }),
            "GRU: Expected hidden size (1, 2, 4), got [1, 3, 4]");
  EXPECT_EQ(reason([&] {
              gru.forward(f64({0, 2, 3}));
            }),
            "GRU: Expected sequence length to be larger than 0 in RNN");
  EXPECT_EQ(error_of([] { nn::GRU(3, 4, {.dropout = 1.5}); }),
            "GRU: dropout should be a number in range [0, 1] representing the probability of an "
            "element being zeroed");
  EXPECT_EQ(error_of([] { nn::LSTM(3, 0); }),
            "LSTM: needs input_size >= 0, hidden_size >= 1 and num_layers >= 1, got 3, 0 and 1");
}

TEST(MultiheadAttention, ParameterNamesShapesAndInitArePyTorchs) {
  manual_seed(7);
  const nn::MultiheadAttention packed(8, 2);
  EXPECT_EQ(names_and_shapes(packed),
            (std::vector<std::pair<std::string, Shape>>{{"in_proj_weight", {24, 8}},
                                                        {"in_proj_bias", {24}},
                                                        {"out_proj.weight", {8, 8}},
                                                        {"out_proj.bias", {8}}}));
  const double xavier = std::sqrt(6.0 / (8 + 24)), linear = 1 / std::sqrt(8.0);
  const auto bounds = [](const Tensor& t) {
    const std::vector<double> v = values(t);
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return std::pair{*lo, *hi};
  };
  const auto [lo, hi] = bounds(packed.in_proj_weight);
  EXPECT_GE(lo, -xavier);
  EXPECT_LE(hi, xavier);
  EXPECT_LT(lo, -0.8 * xavier);
  EXPECT_GT(hi, 0.8 * xavier);
  EXPECT_EQ(bounds(packed.in_proj_bias), (std::pair{0.0, 0.0}));
  EXPECT_EQ(bounds(packed.out_proj->bias), (std::pair{0.0, 0.0}));
  const auto [olo, ohi] = bounds(packed.out_proj->weight);
  EXPECT_GE(olo, -linear);
  EXPECT_LE(ohi, linear);

  const nn::MultiheadAttention separate(8, 2, {.kdim = 5, .vdim = 6});
  EXPECT_EQ(names_and_shapes(separate),
            (std::vector<std::pair<std::string, Shape>>{{"q_proj_weight", {8, 8}},
                                                        {"k_proj_weight", {8, 5}},
                                                        {"v_proj_weight", {8, 6}},
                                                        {"in_proj_bias", {24}},
                                                        {"out_proj.weight", {8, 8}},
                                                        {"out_proj.bias", {8}}}));
  EXPECT_LE(bounds(separate.k_proj_weight).second, std::sqrt(6.0 / (5 + 8)));
  const nn::MultiheadAttention no_bias(8, 4, {.bias = false, .kdim = 8});
  EXPECT_EQ(names_and_shapes(no_bias),
            (std::vector<std::pair<std::string, Shape>>{{"in_proj_weight", {24, 8}},
                                                        {"out_proj.weight", {8, 8}}}));
}

TEST(MultiheadAttention, WeightsOnRequestAndDropoutInTrainingOnly) {
  manual_seed(8);
  nn::MultiheadAttention mha(8, 2, {.dropout = 0.5, .batch_first = true});
  const Tensor x = randn({2, 3, 8});
  auto [out, w] = mha.forward(x, x, x, {}, false);
  EXPECT_EQ(out.shape(), (Shape{2, 3, 8}));
  EXPECT_FALSE(w.defined());
  mha.eval();
  auto [eval_out, weights] = mha.forward(x, x, x);
  EXPECT_EQ(weights.shape(), (Shape{2, 3, 3}));
  EXPECT_NE(values(out), values(eval_out));
  auto [again, per_head] = mha.forward(x, x, x, {}, true, {}, false);
  EXPECT_EQ(values(again), values(eval_out));
  EXPECT_EQ(per_head.shape(), (Shape{2, 2, 3, 3}));
}

TEST(MultiheadAttention, ErrorsArePyTorchs) {
  EXPECT_EQ(error_of([] { nn::MultiheadAttention(6, 4); }),
            "MultiheadAttention: embed_dim must be divisible by num_heads");
  nn::MultiheadAttention mha(8, 2);
  mha.to(DType::F64);
  const Tensor q = f64({3, 2, 8}), k = f64({4, 2, 8});
  EXPECT_EQ(reason([&] {
              mha.forward(f64({3, 2, 8, 1}), k, k);
            }),
            "MultiheadAttention: query should be unbatched 2D or batched 3D tensor but received "
            "4-D query tensor");
  EXPECT_EQ(reason([&] {
              mha.forward(q, f64({4, 8}), k);
            }),
            "MultiheadAttention: For batched (3-D) `query`, expected `key` and `value` to be 3-D "
            "but found 2-D and 3-D tensors respectively");
  EXPECT_EQ(reason([&] { mha.forward(q, k, k, f64({2})); }),
            "MultiheadAttention: For batched (3-D) `query`, expected `key_padding_mask` to be "
            "`None` or 2-D but found 1-D tensor instead");
  EXPECT_EQ(reason([&] { mha.forward(q, k, k, {}, true, f64({4})); }),
            "MultiheadAttention: For batched (3-D) `query`, expected `attn_mask` to be `None`, "
            "2-D or 3-D but found 1-D tensor instead");
  EXPECT_EQ(reason([&] {
              mha.forward(f64({3, 8}), f64({4, 8}), f64({4, 8}), {}, true, f64({2, 3, 3}));
            }),
            "MultiheadAttention: Expected `attn_mask` shape to be (2, 3, 4) but got "
            "torch.Size([2, 3, 3])");
  EXPECT_EQ(reason([&] {
              mha.forward(f64({3, 2, 6}), k, k);
            }),
            "MultiheadAttention: was expecting embedding dimension of 8, but got 6");
  EXPECT_EQ(reason([&] {
              mha.forward(q, k, f64({5, 2, 8}));
            }),
            "MultiheadAttention: key shape torch.Size([4, 2, 8]) does not match value shape "
            "torch.Size([5, 2, 8])");
  EXPECT_EQ(reason([&] {
              mha.forward(q, k, k, {}, true, f64({3, 3}));
            }),
            "MultiheadAttention: The shape of the 2D attn_mask is torch.Size([3, 3]), but should "
            "be (3, 4).");
  EXPECT_EQ(reason([&] {
              mha.forward(q, k, k, {}, true, f64({2, 3, 4}));
            }),
            "MultiheadAttention: The shape of the 3D attn_mask is torch.Size([2, 3, 4]), but "
            "should be (4, 3, 4).");
  EXPECT_EQ(reason([&] {
              mha.forward(q, k, k, zeros({2, 3}, DType::Bool));
            }),
            "MultiheadAttention: expecting key_padding_mask shape of (2, 4), but got "
            "torch.Size([2, 3])");
  EXPECT_EQ(reason([&] {
              mha.forward(q, k, k, zeros({2, 4}, DType::I64));
            }),
            "MultiheadAttention: only bool and floating types of key_padding_mask are supported");
  nn::MultiheadAttention separate(8, 2, {.kdim = 5, .vdim = 6});
  separate.to(DType::F64);
  EXPECT_EQ(reason([&] {
              separate.forward(q, f64({4, 2, 5}), f64({3, 2, 6}));
            }),
            "MultiheadAttention: key's sequence and batch dims torch.Size([4, 2]) do not match "
            "value's torch.Size([3, 2])");
}

/// The parameter gradients of sum(outputs[k] * (k + 1)) after one backward.
std::vector<Tensor> with_gradients(nn::Module& m, std::vector<Tensor> outputs) {
  m.zero_grad();
  Tensor loss;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Tensor term = mul(sum(outputs[k]), scalar_like(static_cast<double>(k + 1), outputs[k]));
    loss = loss.defined() ? add(loss, term) : term;
  }
  loss.backward();
  for (const Tensor& p : m.parameters()) outputs.push_back(p.grad());
  return outputs;
}

/// The same module in f64 and in f32 (the f64 values rounded), for the call's dtype.
template <class M>
struct ByDType {
  std::shared_ptr<M> f64, f32;
  template <class... Args>
  explicit ByDType(Args... args)
      : f64(std::make_shared<M>(args...)), f32(std::make_shared<M>(args...)) {
    f64->to(DType::F64);
    f32->load_state_dict(f64->state_dict());
  }
  M& operator()(const Tensor& like) { return like.dtype() == DType::F64 ? *f64 : *f32; }
};

TEST(RnnAttentionLazy, LazyMatchesEager) {
  manual_seed(9);
  auto lstm = std::make_shared<ByDType<nn::LSTM>>(
      3, 4, nn::RNNOptions{.num_layers = 2, .batch_first = true, .bidirectional = true});
  auto gru = std::make_shared<ByDType<nn::GRU>>(3, 4, nn::RNNOptions{.num_layers = 2});
  auto mha = std::make_shared<ByDType<nn::MultiheadAttention>>(
      8, 2, nn::MultiheadAttentionOptions{.kdim = 5, .vdim = 6});
  auto self = std::make_shared<ByDType<nn::MultiheadAttention>>(8, 2);
  const Tensor kpm =
      from_vector<bool>({false, false, false, true, false, false, true, true}, {2, 4});
  const Tensor causal = gt(reshape(arange(0, 3, 1, DType::I64), {3, 1}),
                           reshape(arange(0, 3, 1, DType::I64), {1, 3}));
  const std::vector<testing::TracedCall> calls{
      {"LSTM",
       {randn({2, 5, 3}, DType::F64), randn({4, 2, 4}, DType::F64), randn({4, 2, 4}, DType::F64)},
       [lstm](const std::vector<Tensor>& in) {
         nn::LSTM& m = (*lstm)(in[0]);
         auto [out, state] = m.forward(in[0], std::tuple{in[1], in[2]});
         return with_gradients(m, {out, std::get<0>(state), std::get<1>(state)});
       }},
      {"GRU",
       {randn({4, 3}, DType::F64)},
       [gru](const std::vector<Tensor>& in) {
         nn::GRU& m = (*gru)(in[0]);
         auto [out, h] = m.forward(in[0]);
         return with_gradients(m, {out, h});
       }},
      {"MultiheadAttention",
       {randn({3, 2, 8}, DType::F64), randn({4, 2, 5}, DType::F64), randn({4, 2, 6}, DType::F64),
        kpm},
       [mha](const std::vector<Tensor>& in) {
         nn::MultiheadAttention& m = (*mha)(in[0]);
         auto [out, w] = m.forward(in[0], in[1], in[2], in[3]);
         return with_gradients(m, {out, w});
       }},
      {"MultiheadAttention self",
       {randn({3, 2, 8}, DType::F64), causal},
       [self](const std::vector<Tensor>& in) {
         nn::MultiheadAttention& m = (*self)(in[0]);
         auto [out, w] = m.forward(in[0], in[0], in[0], {}, true, in[1], false);
         return with_gradients(m, {out, w});
       }},
  };
  testing::expect_lazy_matches_eager(calls, 1e-12, 2e-5);
}

}  // namespace
}  // namespace lt
