// The autograd engine's contract, independent of any one op's formula: accumulation into .grad,
// freed graphs, zero_grad, detach and NoGradGuard, fan-out (a tensor used twice or by two
// branches), broadcasting and views, and the errors for misuse.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "tests/support/all_close.h"

namespace lt {
namespace {

using testing::AllClose;

Tensor vec(std::vector<double> v, Shape s) { return from_vector<double>(v, std::move(s)); }

TEST(Autograd, AccumulatesAcrossTwoBackwardCalls) {
  Tensor x = vec({1, -2, 3}, {3}).requires_grad_();
  sum(x * x).backward();
  EXPECT_TRUE(AllClose(x.grad(), vec({2, -4, 6}, {3})));
  sum(x * 3.0).backward();  // a second graph over the same leaf adds to .grad
  EXPECT_TRUE(AllClose(x.grad(), vec({5, -1, 9}, {3})));
  Tensor y = x * 1.0;
  y.backward(vec({1, 1, 1}, {3}));
  EXPECT_TRUE(AllClose(x.grad(), vec({6, 0, 10}, {3})));
}

TEST(Autograd, SecondBackwardThroughAFreedGraphThrows) {
  // backward() frees the graph it ran through (as PyTorch does without retain_graph), so a second
  // backward() over it must throw lt::Error. Run in a child process: a crash there fails this
  // test instead of killing the whole binary.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Tensor x = vec({1, 2}, {2}).requires_grad_();
        Tensor y = sum(x * x);
        y.backward();
        try {
          y.backward();
        } catch (const Error&) {
          std::exit(0);
        }
        std::exit(1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Autograd, BackwardIntoASubgraphFreedByAnotherBackwardThrows) {
  // Two losses share `a`; the first backward() frees a's node, the second reaches it through a
  // fresh node and must throw lt::Error (not write into the freed node's gradient slots).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Tensor x = vec({1, 2}, {2}).requires_grad_();
        Tensor a = x * 2.0;
        sum(a * 3.0).backward();
        try {
          sum(a * 4.0).backward();
        } catch (const Error&) {
          std::exit(0);
        }
        std::exit(1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Autograd, ZeroGradClears) {
  Tensor x = vec({1, 2}, {2}).requires_grad_();
  sum(x * x).backward();
  x.zero_grad();
  EXPECT_FALSE(x.grad().defined());
  sum(x * 5.0).backward();
  EXPECT_TRUE(AllClose(x.grad(), vec({5, 5}, {2})));
}

TEST(Autograd, DetachStopsGradients) {
  Tensor x = vec({1, 2, 3}, {3}).requires_grad_();
  Tensor d = x.detach();
  EXPECT_FALSE(d.requires_grad());
  sum(x * d).backward();  // d is a constant: d(x*d)/dx = d, not 2x
  EXPECT_TRUE(AllClose(x.grad(), vec({1, 2, 3}, {3})));
  Tensor y = (x * 2.0).detach();
  EXPECT_FALSE(y.requires_grad());
  EXPECT_THROW(sum(y).backward(), Error);
}

// PyTorch's is_leaf, and the grad_fn's name, read in lazy mode without running anything.
TEST(Autograd, IsLeafAndGradFnNameReadNoValue) {
  ModeGuard lazy(Mode::Lazy);
  Tensor w = vec({1, 2}, {2}).requires_grad_();
  const Tensor c = vec({3, 4}, {2});
  metrics::reset();
  Tensor y = w * c;
  Tensor s = sum(y);
  Tensor frozen;
  {
    NoGradGuard no_grad;
    frozen = w * 2.0;
  }
  EXPECT_TRUE(w.is_leaf());
  EXPECT_TRUE(c.is_leaf());
  EXPECT_FALSE(y.is_leaf());
  EXPECT_TRUE(y.detach().is_leaf());
  EXPECT_TRUE(frozen.is_leaf());
  EXPECT_EQ(y.grad_fn_name(), "MulBackward");
  EXPECT_EQ(s.grad_fn_name(), "SumBackward");
  EXPECT_EQ(w.grad_fn_name(), "");
  EXPECT_EQ(metrics::counter("sync"), 0);
}

TEST(Autograd, NoGradGuardRecordsNothing) {
  Tensor x = vec({1, 2}, {2}).requires_grad_();
  Tensor y;
  {
    NoGradGuard guard;
    EXPECT_FALSE(grad_enabled());
    y = sum(exp(x) * x);
    EXPECT_FALSE(y.requires_grad());
    { NoGradGuard nested; }
    EXPECT_FALSE(grad_enabled()) << "a nested guard restores the outer (disabled) mode";
  }
  EXPECT_TRUE(grad_enabled());
  EXPECT_THROW(y.backward(), Error);
  EXPECT_FALSE(x.grad().defined());
  EXPECT_TRUE(sum(x * x).requires_grad());
}

TEST(Autograd, GradientThroughBroadcasting) {
  Tensor a = vec({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  Tensor b = vec({10, 20, 30}, {3}).requires_grad_();
  Tensor c = vec({0.5}, {}).requires_grad_();
  Tensor col = vec({1, -1}, {2, 1}).requires_grad_();
  sum(a * b * col + c).backward();
  EXPECT_TRUE(AllClose(a.grad(), vec({10, 20, 30, -10, -20, -30}, {2, 3})));
  EXPECT_TRUE(AllClose(b.grad(), vec({1 - 4, 2 - 5, 3 - 6}, {3})));
  EXPECT_TRUE(AllClose(c.grad(), vec({6}, {})));
  EXPECT_TRUE(AllClose(col.grad(), vec({140, 320}, {2, 1})));
}

TEST(Autograd, GradientThroughViews) {
  // x[2,3,4] -> reshape [4,6] -> permute to [6,4] -> rows 1,3,5 (step 2) -> [3,4].
  std::vector<double> xs(24);
  for (int i = 0; i < 24; ++i) xs[i] = 0.1 * i;
  Tensor x = vec(xs, {2, 3, 4}).requires_grad_();
  Tensor y = slice(permute(reshape(x, {4, 6}), {1, 0}), 0, 1, 6, 2);
  ASSERT_EQ(y.shape(), (Shape{3, 4}));
  std::vector<double> cs(12);
  for (int i = 0; i < 12; ++i) cs[i] = 1 + i;
  y.backward(vec(cs, {3, 4}));
  std::vector<double> want(24, 0);
  for (int f = 0; f < 24; ++f) {  // flat f is [4,6] element (r, k); y[(k-1)/2][r] when k is odd
    const int r = f / 6, k = f % 6;
    if (k % 2 == 1) want[f] = cs[(k - 1) / 2 * 4 + r];
  }
  EXPECT_TRUE(AllClose(x.grad(), vec(want, {2, 3, 4})));
}

TEST(Autograd, OpUsingATensorTwice) {
  Tensor x = vec({1.5, -2, 3}, {3}).requires_grad_();
  sum(x * x).backward();  // both edges of one node lead to the same leaf
  EXPECT_TRUE(AllClose(x.grad(), vec({3, -4, 6}, {3})));
}

TEST(Autograd, TensorUsedByTwoBranches) {
  Tensor x = vec({1, -1, 2}, {3}).requires_grad_();
  Tensor a = x * 2.0;              // an interior node with two consumers
  sum(a * a + exp(a)).backward();  // d/dx = 2 * (2a + e^a) = 8x + 2 e^(2x)
  std::vector<double> want;
  for (double v : {1.0, -1.0, 2.0}) want.push_back(8 * v + 2 * std::exp(2 * v));
  EXPECT_TRUE(AllClose(x.grad(), vec(want, {3}), 1e-9, 1e-9));
}

// A post-accumulate-grad hook sees the leaf's complete gradient of each backward pass, once:
// here after both branches (x * x through `a`, and exp(x) directly) have added theirs. Leaves
// the pass does not reach get no call; a removed hook none either.
TEST(Autograd, PostAccumulateGradHookSeesTheCompleteGradientOnce) {
  Tensor x = vec({1, -1, 2}, {3}).requires_grad_();
  Tensor w = vec({0.5, 2, -1}, {3}).requires_grad_();
  Tensor unused = vec({1}, {1}).requires_grad_();
  std::vector<std::string> calls;
  std::vector<Tensor> seen;
  const int hx = register_post_accumulate_grad_hook(x, [&](const Tensor& leaf) {
    calls.push_back("x");
    seen.push_back(leaf.grad());
  });
  register_post_accumulate_grad_hook(w, [&](const Tensor&) { calls.push_back("w"); });
  register_post_accumulate_grad_hook(unused, [&](const Tensor&) { calls.push_back("unused"); });
  auto loss = [&] {
    const Tensor a = x * w;
    return sum(a * a + exp(x));  // d/dx = 2 a w + e^x, d/dw = 2 a x
  };
  loss().backward();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_TRUE((calls == std::vector<std::string>{"x", "w"} ||
               calls == std::vector<std::string>{"w", "x"}));
  std::vector<double> want;
  for (int i = 0; i < 3; ++i) {
    const double xv = std::vector<double>{1, -1, 2}[i], wv = std::vector<double>{0.5, 2, -1}[i];
    want.push_back(2 * xv * wv * wv + std::exp(xv));
  }
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(AllClose(seen[0], vec(want, {3}), 1e-9, 1e-9));
  remove_post_accumulate_grad_hook(x, hx);
  calls.clear();
  loss().backward();
  EXPECT_EQ(calls, std::vector<std::string>{"w"});
  EXPECT_THROW(register_post_accumulate_grad_hook(x * 2.0, [](const Tensor&) {}), InputError);
}

TEST(Autograd, InPlaceOnLeafRequiringGradThrows) {
  Tensor x = vec({1, 2}, {2}).requires_grad_();
  EXPECT_THROW(x.add_(1.0), Error);
  EXPECT_THROW(x.add_(vec({1, 1}, {2})), Error);
  EXPECT_TRUE(AllClose(x, vec({1, 2}, {2}))) << "a rejected update leaves the value";
  {
    NoGradGuard guard;  // the optimizer's way
    x.add_(1.0);
  }
  EXPECT_TRUE(AllClose(x, vec({2, 3}, {2})));
  EXPECT_TRUE(x.requires_grad());
  sum(x * x).backward();
  EXPECT_TRUE(AllClose(x.grad(), vec({4, 6}, {2})));
}

TEST(Autograd, CopyIsDifferentiableInItsSource) {
  // As PyTorch's copy_: the target's old value gets no gradient, the source gets all of it.
  for (Mode mode : {Mode::Eager, Mode::Lazy}) {
    ModeGuard guard(mode);
    Tensor w = vec({1, 2}, {2}).requires_grad_();
    Tensor y = w * 3.0;
    Tensor alias = y;
    y.copy_(w * 5.0);
    EXPECT_TRUE(alias.requires_grad());
    EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{5, 10})) << "every handle sees it";
    sum(alias).backward();
    EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{5, 5}));
    Tensor z = vec({4, 8}, {2});
    z.copy_(z);
    EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{4, 8})) << "copy from itself";
    Tensor h = w * 2.0;
    h.copy_(h);
    EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{2, 4}));
    {
      NoGradGuard no_grad;  // records nothing: the target keeps its own history
      h.copy_(w * 7.0);
    }
    EXPECT_TRUE(h.requires_grad());
    EXPECT_EQ(h.to_vector<float>(), (std::vector<float>{7, 14}));
    if (mode == Mode::Lazy) mark_step();
  }
}

TEST(Autograd, BackwardOnNonScalarNeedsAGradient) {
  Tensor x = vec({1, 2, 3, 4}, {2, 2}).requires_grad_();
  Tensor y = x * 3.0;
  EXPECT_THROW(y.backward(), Error);
  EXPECT_THROW(y.backward(vec({1, 1}, {2})), Error) << "gradient shape must match";
  EXPECT_THROW(y.backward(ones({2, 2}, DType::F32)), Error) << "gradient dtype must match";
  y.backward(vec({1, 0, 0, 2}, {2, 2}));
  EXPECT_TRUE(AllClose(x.grad(), vec({3, 0, 0, 6}, {2, 2})));
}

TEST(Autograd, RequiresGradOnlyOnFloatLeaves) {
  Tensor i = from_vector<int64_t>({1, 2}, {2});
  EXPECT_THROW(i.requires_grad_(), Error);
  Tensor b = from_vector<bool>({true}, {1});
  EXPECT_THROW(b.requires_grad_(), Error);
  Tensor x = vec({1}, {1}).requires_grad_();
  Tensor y = x * 2.0;
  EXPECT_THROW(y.requires_grad_(), Error) << "only leaves can be marked";
}

// Ops traced by one lazy step of `loss(x_requires_grad)` and its backward.
int64_t ops_traced(const std::function<Tensor(bool)>& loss, bool x_requires_grad) {
  ModeGuard lazy(Mode::Lazy);
  mark_step();
  const int64_t before = metrics::counter("nodes_traced");
  loss(x_requires_grad).backward();
  mark_step();
  return metrics::counter("nodes_traced") - before;
}

TEST(Autograd, SkipsTheGradientOfAnInputThatDoesNotNeedIt) {
  // The input-gradient product of a first layer is never computed when the input needs no grad
  // (in eager mode that is a whole GEMM or convolution saved per step).
  // Fresh parameters each time, so no run accumulates into an existing .grad.
  auto linear_loss = [](bool rg) {
    const Tensor w = randn({8, 5}).requires_grad_();
    Tensor x = randn({4, 8});
    if (rg) x.requires_grad_();
    return sum(matmul(x, w));
  };
  EXPECT_EQ(ops_traced(linear_loss, true) - ops_traced(linear_loss, false), 1);

  auto conv_loss = [](bool rg) {
    const Tensor k = randn({3, 2, 3, 3}).requires_grad_();
    Tensor x = randn({2, 2, 6, 6});
    if (rg) x.requires_grad_();
    return sum(conv2d(x, k, Tensor(), {{1, 1}, {1, 1}, {1, 1}, 1}));
  };
  EXPECT_EQ(ops_traced(conv_loss, true) - ops_traced(conv_loss, false), 1);

  // The gradient that is wanted is unchanged.
  Tensor x = vec({1, 2, 3, 4}, {2, 2});
  Tensor v = vec({1, -1, 2, 0.5}, {2, 2}).requires_grad_();
  sum(matmul(x, v)).backward();
  EXPECT_TRUE(AllClose(v.grad(), vec({4, 4, 6, 6}, {2, 2})));
}

}  // namespace
}  // namespace lt
