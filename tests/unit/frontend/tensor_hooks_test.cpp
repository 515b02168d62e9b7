// Tensor::register_hook against PyTorch 1.13's Tensor.register_hook: each expected value is
// what the same program gives in PyTorch (the comments give it).
#include <gtest/gtest.h>

#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "tests/support/error_of.h"

namespace lt {
namespace {

using testing::error_of;
using V = std::vector<double>;

Tensor leaf(V v) {
  Tensor t = from_vector<double>(v, {static_cast<int64_t>(v.size())});
  t.requires_grad_();
  return t;
}

TEST(TensorHooks, ANonLeafHookReplacesTheGradientItPassesOn) {
  for (Mode mode : {Mode::Eager, Mode::Lazy}) {
    ModeGuard guard(mode);
    // w = tensor([1., 2, 3], requires_grad=True); y = w * w; y.register_hook(lambda g: g * 2)
    // y.sum().backward(); w.grad == tensor([4., 8., 12.])
    Tensor w = leaf({1, 2, 3});
    Tensor y = w * w;
    y.register_hook([](const Tensor& g) { return g * 2.0; });
    sum(y).backward();
    EXPECT_EQ(w.grad().to_vector<double>(), (V{4, 8, 12}));
    if (mode == Mode::Lazy) mark_step();
  }
}

TEST(TensorHooks, ALeafHookSeesItsWholeGradientOnce) {
  // (w * 2).sum() + (w * 3).sum(): the hook is called once, with 5 everywhere
  Tensor w = leaf({1, 2});
  std::vector<V> seen;
  w.register_hook([&](const Tensor& g) {
    seen.push_back(g.to_vector<double>());
    return g * 10.0;
  });
  (sum(w * 2.0) + sum(w * 3.0)).backward();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], (V{5, 5}));
  EXPECT_EQ(w.grad().to_vector<double>(), (V{50, 50}));
}

TEST(TensorHooks, ReadOnlyHooksRunInOrderAndCanBeRemoved) {
  Tensor w = leaf({1, 2});
  Tensor y = w * 3.0;
  std::vector<int> calls;
  const int first = y.register_hook([&](const Tensor&) { calls.push_back(1); });
  y.register_hook([&](const Tensor& g) {
    calls.push_back(2);
    return g + 1.0;
  });
  sum(y).backward();
  EXPECT_EQ(calls, (std::vector<int>{1, 2}));
  EXPECT_EQ(w.grad().to_vector<double>(), (V{6, 6}));  // (1 + 1) * 3
  y.remove_hook(first);
  w.zero_grad();
  calls.clear();
  Tensor z = w * 3.0;
  z.register_hook([&](const Tensor&) { calls.push_back(3); });
  sum(z).backward();
  EXPECT_EQ(calls, (std::vector<int>{3}));
}

TEST(TensorHooks, AHookOnTheRootSeesTheSeed) {
  // loss.register_hook(lambda g: g * 3): every gradient triples
  Tensor w = leaf({1, 2});
  Tensor loss = sum(w * w);
  loss.register_hook([](const Tensor& g) { return g * 3.0; });
  loss.backward();
  EXPECT_EQ(w.grad().to_vector<double>(), (V{6, 12}));
}

TEST(TensorHooks, Errors) {
  const Tensor c = from_vector<double>({1, 2}, {2});
  const std::string m = error_of([&] { c.register_hook([](const Tensor& g) { return g; }); });
  EXPECT_EQ(m.substr(0, m.rfind(" at ")),
            "register_hook: cannot register a hook on a tensor that doesn't require gradient");
  Tensor w = leaf({1, 2});
  Tensor y = w * 2.0;
  y.register_hook([](const Tensor& g) { return sum(g); });
  EXPECT_EQ(error_of([&] { sum(y).backward(); }),
            "backward: a hook changed the gradient's shape from f64[2] to f64[]");
}

}  // namespace
}  // namespace lt
