// Forward hooks and pre-hooks on modules, as PyTorch's register_forward_hook /
// register_forward_pre_hook: reading activations, replacing inputs and outputs, order, removal
// (also from inside a running hook), hooks of containers and of a module of one's own, the list
// form on the layers of several inputs and outputs (MultiheadAttention, LSTM, GRU), eagerly and
// lazily.
#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/nn/nn_testing.h"

namespace lt {
namespace {

std::shared_ptr<nn::Sequential> small_net() {
  manual_seed(3);
  return std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(4, 3),
                                          std::make_shared<nn::ReLU>(),
                                          std::make_shared<nn::Linear>(3, 2));
}

Tensor input() { return from_vector<float>({0.5f, -1, 2, 0.25f, -0.5f, 1, -2, 3}, {2, 4}); }

std::vector<float> values(const Tensor& t) { return t.to_vector<float>(); }

class ForwardHooks : public ::testing::TestWithParam<Mode> {};

TEST_P(ForwardHooks, ReadActivationsWithoutChangingTheOutput) {
  ModeGuard mode(GetParam());
  auto net = small_net();
  auto first = std::dynamic_pointer_cast<nn::Linear>((*net)[0]);
  const Tensor x = input();
  const Tensor plain = net->forward(x);
  std::vector<Tensor> seen_in, seen_out;
  (*net)[1]->register_forward_hook([&](nn::Module& m, const Tensor& in, const Tensor& out) {
    EXPECT_EQ(m.name(), "ReLU");
    seen_in.push_back(in);
    seen_out.push_back(out);
  });
  const Tensor hooked = net->forward(x);
  ASSERT_EQ(seen_out.size(), 1u);
  mark_step();
  EXPECT_EQ(values(hooked), values(plain));
  EXPECT_EQ(values(seen_in[0]), values(first->forward(x)));
  EXPECT_EQ(values(seen_out[0]), values(relu(first->forward(x))));
}

TEST_P(ForwardHooks, ReplaceInputsAndOutputsInRegistrationOrder) {
  ModeGuard mode(GetParam());
  auto net = small_net();
  auto first = std::dynamic_pointer_cast<nn::Linear>((*net)[0]);
  const Tensor x = input();
  std::vector<int> order;
  first->register_forward_pre_hook([&](nn::Module&, const Tensor& in) {
    order.push_back(1);
    return in * 2.0;
  });
  first->register_forward_pre_hook([&](nn::Module&, const Tensor& in) {
    order.push_back(2);
    return in + 1.0;  // after the first: (2x) + 1
  });
  first->register_forward_hook([&](nn::Module&, const Tensor& in, const Tensor& out) {
    order.push_back(3);
    EXPECT_EQ(values(in), values(x * 2.0 + 1.0));  // the input as the pre-hooks left it
    return out * 0.5;
  });
  const Tensor got = first->forward(x);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  nn::Linear ref(4, 3);
  {
    NoGradGuard no_grad;
    ref.weight.copy_(first->weight);
    ref.bias.copy_(first->bias);
  }
  mark_step();
  EXPECT_EQ(values(got), values(ref.forward(x * 2.0 + 1.0) * 0.5));
}

TEST_P(ForwardHooks, RemovedHooksStopAndAHookMayRemoveItself) {
  ModeGuard mode(GetParam());
  auto net = small_net();
  int calls = 0, once_calls = 0;
  const int id = net->register_forward_hook(
      [&](nn::Module&, const Tensor&, const Tensor& out) { ++calls; return out; });
  int once = -1;
  once = net->register_forward_pre_hook([&](nn::Module& m, const Tensor&) {
    ++once_calls;
    m.remove_hook(once);
  });
  net->forward(input());
  net->forward(input());
  net->remove_hook(id);
  net->remove_hook(12345);  // unknown: nothing
  net->forward(input());
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(once_calls, 1);
}

TEST_P(ForwardHooks, GradientsFlowThroughAReplacedOutput) {
  ModeGuard mode(GetParam());
  auto net = small_net();
  auto last = std::dynamic_pointer_cast<nn::Linear>((*net)[2]);
  (*net)[1]->register_forward_hook(
      [](nn::Module&, const Tensor&, const Tensor& out) { return out * 3.0; });
  sum(net->forward(input())).backward();
  const Tensor hooked = last->weight.grad();
  auto plain = small_net();
  auto plain_last = std::dynamic_pointer_cast<nn::Linear>((*plain)[2]);
  sum(plain->forward(input())).backward();
  mark_step();
  const std::vector<float> h = values(hooked), p = values(plain_last->weight.grad());
  ASSERT_EQ(h.size(), p.size());
  for (size_t i = 0; i < h.size(); ++i) EXPECT_FLOAT_EQ(h[i], 3 * p[i]) << i;
}

/// A module of one's own runs its hooks where its forward goes through with_hooks.
class Scale : public nn::Module {
 public:
  Tensor forward(const Tensor& x) {
    return with_hooks(x, [](const Tensor& x) { return x * 4.0; });
  }
};

TEST_P(ForwardHooks, AModuleOfOnesOwnRunsThemThroughWithHooks) {
  ModeGuard mode(GetParam());
  auto s = std::make_shared<Scale>();
  s->register_forward_pre_hook([](nn::Module&, const Tensor& in) { return in - 1.0; });
  const Tensor got = s->forward(input());
  mark_step();
  EXPECT_EQ(values(got), values((input() - 1.0) * 4.0));
}

TEST_P(ForwardHooks, AttentionHooksSeeAndReplaceEveryInputAndOutput) {
  ModeGuard mode(GetParam());
  manual_seed(5);
  auto mha = std::make_shared<nn::MultiheadAttention>(4, 2);
  const Tensor q = randn({3, 2, 4}), kv = randn({5, 2, 4});
  const Tensor pad = from_vector<bool>({false, false, false, true, true, false, false, false,
                                        false, true},
                                       {2, 5});
  const auto [plain_out, plain_w] = mha->forward(q, kv, kv, pad);
  const auto [shifted_out, shifted_w] = mha->forward(q + 1.0, kv, kv, pad);
  size_t seen_inputs = 0;
  Tensor seen_mask, seen_weights;
  mha->register_forward_pre_hook([&](nn::Module& m, const nn::TensorList& in) {
    EXPECT_EQ(m.name(), "MultiheadAttention");
    seen_inputs = in.size();
    seen_mask = in[3];
    EXPECT_FALSE(in[4].defined());  // no attn_mask given
    return nn::TensorList{in[0] + 1.0, in[1], in[2], in[3], in[4]};
  });
  mha->register_forward_hook(
      [&](nn::Module&, const nn::TensorList&, const nn::TensorList& out) {
        seen_weights = out[1];
        return nn::TensorList{out[0] * 2.0, out[1]};
      });
  const auto [out, w] = mha->forward(q, kv, kv, pad);
  mark_step();
  EXPECT_EQ(seen_inputs, 5u);
  EXPECT_EQ(seen_mask.to_vector<bool>(), pad.to_vector<bool>());
  EXPECT_EQ(values(seen_weights), values(shifted_w));
  EXPECT_EQ(values(w), values(shifted_w));
  EXPECT_EQ(values(out), values(shifted_out * 2.0));
  EXPECT_NE(values(w), values(plain_w));
}

TEST_P(ForwardHooks, OneTensorHooksOnAttentionSeeTheQueryAndTheOutput) {
  ModeGuard mode(GetParam());
  manual_seed(5);
  auto mha = std::make_shared<nn::MultiheadAttention>(4, 2);
  const Tensor q = randn({3, 2, 4});
  const auto [plain_out, plain_w] = mha->forward(q, q, q);
  Tensor seen_in;
  mha->register_forward_hook([&](nn::Module&, const Tensor& in, const Tensor& out) {
    seen_in = in;
    return out - 1.0;
  });
  const auto [out, w] = mha->forward(q, q, q);
  mark_step();
  EXPECT_EQ(values(seen_in), values(q));
  EXPECT_EQ(values(out), values(plain_out - 1.0));
  EXPECT_EQ(values(w), values(plain_w));  // the weights pass through unchanged
}

TEST_P(ForwardHooks, RecurrentHooksSeeTheStatesAndTheirGradientsFlow) {
  ModeGuard mode(GetParam());
  manual_seed(6);
  auto lstm = std::make_shared<nn::LSTM>(3, 4);
  auto gru = std::make_shared<nn::GRU>(3, 4);
  const Tensor x = randn({5, 2, 3});
  const Tensor h0 = randn({1, 2, 4}), c0 = randn({1, 2, 4});
  const auto [lstm_plain, lstm_state] = lstm->forward(x, std::tuple{h0, c0});
  const auto [gru_plain, gru_h] = gru->forward(x, h0);
  nn::TensorList lstm_in, lstm_out, gru_in;
  lstm->register_forward_hook(
      [&](nn::Module&, const nn::TensorList& in, const nn::TensorList& out) {
        lstm_in = in;
        lstm_out = out;
      });
  // Starts the GRU from zeros: the pre-hook drops h_0, as the forward with no state does.
  gru->register_forward_pre_hook([&](nn::Module&, const nn::TensorList& in) {
    if (gru_in.empty()) gru_in = in;
    return nn::TensorList{in[0], Tensor()};
  });
  const auto [lstm_hooked, state] = lstm->forward(x, std::tuple{h0, c0});
  const auto [gru_hooked, h_n] = gru->forward(x, h0);
  const auto [gru_from_zeros, unused] = gru->forward(x);
  mark_step();
  ASSERT_EQ(lstm_in.size(), 3u);
  ASSERT_EQ(lstm_out.size(), 3u);
  EXPECT_EQ(values(lstm_in[2]), values(c0));
  EXPECT_EQ(values(lstm_out[2]), values(std::get<1>(lstm_state)));
  EXPECT_EQ(values(lstm_hooked), values(lstm_plain));
  ASSERT_EQ(gru_in.size(), 2u);
  EXPECT_EQ(values(gru_in[1]), values(h0));
  EXPECT_EQ(values(gru_hooked), values(gru_from_zeros));
  EXPECT_NE(values(gru_hooked), values(gru_plain));

  // Gradients flow through a hook's replacement to the module's parameters.
  const int triple = lstm->register_forward_hook(
      [](nn::Module&, const nn::TensorList&, const nn::TensorList& out) {
        return nn::TensorList{out[0] * 3.0, out[1], out[2]};
      });
  auto [y, s] = lstm->forward(x);
  sum(y).backward();
  const Tensor tripled = lstm->named_parameters().front().second.grad();
  lstm->zero_grad();
  lstm->remove_hook(triple);
  auto [y1, s1] = lstm->forward(x);
  sum(y1).backward();
  mark_step();
  const std::vector<float> once = values(lstm->named_parameters().front().second.grad());
  const std::vector<float> thrice = values(tripled);
  ASSERT_EQ(once.size(), thrice.size());
  for (size_t i = 0; i < once.size(); ++i) EXPECT_NEAR(thrice[i], 3 * once[i], 1e-5);
}

TEST_P(ForwardHooks, AListHookReturningTheWrongCountIsAnError) {
  ModeGuard mode(GetParam());
  auto gru = std::make_shared<nn::GRU>(3, 4);
  gru->register_forward_hook([](nn::Module&, const nn::TensorList&, const nn::TensorList& out) {
    return nn::TensorList{out[0]};
  });
  try {
    gru->forward(zeros({2, 1, 3}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "a forward hook of GRU returned 1 tensors in place of its 2");
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, ForwardHooks, ::testing::Values(Mode::Eager, Mode::Lazy),
                         [](const auto& info) {
                           return info.param == Mode::Eager ? "Eager" : "Lazy";
                         });

}  // namespace
}  // namespace lt
