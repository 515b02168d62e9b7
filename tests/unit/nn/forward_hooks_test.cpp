// Forward hooks and pre-hooks on modules, as PyTorch's register_forward_hook /
// register_forward_pre_hook: reading activations, replacing inputs and outputs, order, removal
// (also from inside a running hook), hooks of containers and of a module of one's own, eagerly
// and lazily.
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

INSTANTIATE_TEST_SUITE_P(Modes, ForwardHooks, ::testing::Values(Mode::Eager, Mode::Lazy),
                         [](const auto& info) {
                           return info.param == Mode::Eager ? "Eager" : "Lazy";
                         });

}  // namespace
}  // namespace lt
