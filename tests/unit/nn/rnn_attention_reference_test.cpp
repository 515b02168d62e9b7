// LSTM, GRU and MultiheadAttention against PyTorch 1.13: every case of
// tests/data/rnn_attention_cases.json (made by rnn_attention_cases.py: the weights by state_dict
// name, f64 inputs, the outputs and the gradients of sum(output * cotangent) with respect to the
// inputs and every parameter), to 1e-10 relative.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/unit/nn/nn_testing.h"

namespace lt {
namespace {

using json = nlohmann::json;

const json& cases() {
  static const json all = [] {
    std::ifstream f(LT_RNN_ATTENTION_CASES);
    return json::parse(f)["cases"];
  }();
  return all;
}

Tensor tensor(const json& t) {
  const Tensor v = from_vector<double>(t["values"].get<std::vector<double>>(), t["shape"]);
  return t.contains("dtype") ? cast(v, DType::Bool) : v;
}

void expect_near(const Tensor& got, const json& want, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(got.defined());
  ASSERT_EQ(got.shape(), want["shape"].get<Shape>());
  const std::vector<double> g = testing::values(got);
  const auto w = want["values"].get<std::vector<double>>();
  for (size_t i = 0; i < w.size(); ++i)
    EXPECT_NEAR(g[i], w[i], 1e-10 * std::max(1.0, std::abs(w[i]))) << "element " << i;
}

template <class T>
T arg(const json& args, const char* key, T fallback) {
  return args.contains(key) && !args[key].is_null() ? args[key].get<T>() : fallback;
}

nn::RNNOptions rnn_options(const json& a) {
  return {.num_layers = arg<int64_t>(a, "num_layers", 1),
          .bias = arg(a, "bias", true),
          .batch_first = arg(a, "batch_first", false),
          .dropout = arg(a, "dropout", 0.0),
          .bidirectional = arg(a, "bidirectional", false)};
}

/// Builds the case's module with PyTorch's weights, runs it on `in` and returns its outputs by
/// the names the script gives them.
std::map<std::string, Tensor> run(const json& c, const std::map<std::string, Tensor>& in,
                                  std::shared_ptr<nn::Module>& module) {
  const json& a = c["args"];
  const std::string kind = c["module"];
  auto get = [&](const char* k) { return in.contains(k) ? in.at(k) : Tensor(); };
  auto load = [&](const std::shared_ptr<nn::Module>& m) {
    m->to(DType::F64);
    TensorDict state;
    for (const auto& [name, t] : c["state"].items()) state[name] = tensor(t);
    m->load_state_dict(state);
    module = m;
  };
  if (kind == "LSTM") {
    auto m = std::make_shared<nn::LSTM>(a["input_size"], a["hidden_size"], rnn_options(a));
    load(m);
    std::optional<std::tuple<Tensor, Tensor>> hx;
    if (in.contains("h0")) hx = std::tuple{in.at("h0"), in.at("c0")};
    auto [out, state] = m->forward(in.at("x"), hx);
    return {{"output", out}, {"h_n", std::get<0>(state)}, {"c_n", std::get<1>(state)}};
  }
  if (kind == "GRU") {
    auto m = std::make_shared<nn::GRU>(a["input_size"], a["hidden_size"], rnn_options(a));
    load(m);
    auto [out, h] = m->forward(in.at("x"), get("h0"));
    return {{"output", out}, {"h_n", h}};
  }
  nn::MultiheadAttentionOptions o;
  o.dropout = arg(a, "dropout", 0.0);
  o.bias = arg(a, "bias", true);
  o.batch_first = arg(a, "batch_first", false);
  if (arg<int64_t>(a, "kdim", 0)) o.kdim = a["kdim"].get<int64_t>();
  if (arg<int64_t>(a, "vdim", 0)) o.vdim = a["vdim"].get<int64_t>();
  auto m = std::make_shared<nn::MultiheadAttention>(a["embed_dim"], a["num_heads"], o);
  load(m);
  const Tensor q = in.at("query");
  const bool self = a["self_attention"];
  auto [out, w] =
      m->forward(q, self ? q : in.at("key"), self ? q : in.at("value"), get("key_padding_mask"),
                 a["need_weights"], get("attn_mask"), a["average_attn_weights"]);
  std::map<std::string, Tensor> outputs{{"attn_output", out}};
  if (w.defined()) outputs["attn_weights"] = w;
  return outputs;
}

TEST(RnnAttentionReference, ValuesAndGradientsMatchPyTorch) {
  ASSERT_GE(cases().size(), 20u);
  for (const json& c : cases()) {
    SCOPED_TRACE(c["name"].get<std::string>());
    std::map<std::string, Tensor> in;
    for (const auto& [name, t] : c["inputs"].items()) {
      in[name] = tensor(t);
      if (in[name].dtype() == DType::F64 && name != "attn_mask" && name != "key_padding_mask")
        in[name].requires_grad_();
    }
    std::shared_ptr<nn::Module> m;
    const std::map<std::string, Tensor> out = run(c, in, m);
    ASSERT_EQ(out.size(), c["outputs"].size());
    Tensor loss = scalar_like(0, out.begin()->second);
    for (const auto& [name, want] : c["outputs"].items()) {
      ASSERT_TRUE(out.contains(name)) << name;
      expect_near(out.at(name), want, name);
      loss = add(loss, sum(mul(out.at(name), tensor(c["cotangents"][name]))));
    }
    loss.backward();
    const json& grads = c["grads"];
    size_t checked = 0;
    for (const auto& [name, t] : in) {
      if (!t.requires_grad()) continue;
      expect_near(t.grad(), grads["input." + name], "gradient of " + name);
      ++checked;
    }
    for (const auto& [name, p] : m->named_parameters()) {
      expect_near(p.grad(), grads["param." + name], "gradient of " + name);
      ++checked;
    }
    EXPECT_EQ(checked, grads.size());
  }
}

}  // namespace
}  // namespace lt
