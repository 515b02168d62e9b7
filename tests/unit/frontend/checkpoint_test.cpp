// lt::checkpoint against the same block run plainly: the same outputs, input gradients and
// parameter gradients, bit for bit in eager mode (dropout included: the generator is rewound
// for the second run), and in lazy mode to f64 rounding; a block fed data (no input requires
// grad) still gives its parameters their gradients; the backward re-runs the block; in lazy
// mode the compiled step recomputes the blocks instead of keeping their activations.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"

namespace lt {
namespace {

struct Block {
  std::shared_ptr<nn::Linear> a = std::make_shared<nn::Linear>(4, 8);
  std::shared_ptr<nn::Linear> b = std::make_shared<nn::Linear>(8, 4);
  int runs = 0;
  Tensor operator()(const Tensor& x) {
    ++runs;
    return b->forward(dropout(gelu(a->forward(x)), 0.25));
  }
  std::vector<Tensor> parameters() const {
    std::vector<Tensor> p = a->parameters(), q = b->parameters();
    p.insert(p.end(), q.begin(), q.end());
    return p;
  }
};

struct Outcome {
  std::vector<double> loss, x_grad;
  std::vector<std::vector<double>> param_grads;
};

/// Two blocks in a row on x, the second (or both) checkpointed, and a loss of the output.
Outcome run(bool checkpointed, bool x_requires_grad, Mode mode, int* runs = nullptr) {
  manual_seed(3);
  Block first, second;
  Tensor x = cast(randn({5, 4}), DType::F64);
  first.a->to(DType::F64);
  first.b->to(DType::F64);
  second.a->to(DType::F64);
  second.b->to(DType::F64);
  if (x_requires_grad) x.requires_grad_();
  ModeGuard guard(mode);
  const auto call = [&](Block& blk, const Tensor& in) {
    return checkpointed ? checkpoint([&blk](const Tensor& t) { return blk(t); }, in) : blk(in);
  };
  const Tensor h = call(first, x);
  const Tensor y = call(second, h);
  const Tensor loss = sum(y * y);
  loss.backward();
  if (mode == Mode::Lazy) mark_step();
  Outcome r;
  r.loss = loss.to_vector<double>();
  if (x_requires_grad) r.x_grad = x.grad().to_vector<double>();
  for (auto* blk : {&first, &second})
    for (const Tensor& p : blk->parameters()) r.param_grads.push_back(p.grad().to_vector<double>());
  if (runs) *runs = first.runs + second.runs;
  return r;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (tol == 0) EXPECT_EQ(got[i], want[i]) << i;
    else EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << i;
  }
}

void expect_same_run(const Outcome& got, const Outcome& want, double tol) {
  expect_close(got.loss, want.loss, tol);
  expect_close(got.x_grad, want.x_grad, tol);
  ASSERT_EQ(got.param_grads.size(), want.param_grads.size());
  for (size_t i = 0; i < got.param_grads.size(); ++i) {
    SCOPED_TRACE("parameter " + std::to_string(i));
    expect_close(got.param_grads[i], want.param_grads[i], tol);
  }
}

TEST(Checkpoint, GivesThePlainRunsValuesAndGradientsEagerly) {
  int plain_runs = 0, checkpointed_runs = 0;
  const Outcome plain = run(false, true, Mode::Eager, &plain_runs);
  const Outcome ck = run(true, true, Mode::Eager, &checkpointed_runs);
  expect_same_run(ck, plain, 0);
  EXPECT_EQ(plain_runs, 2);
  EXPECT_EQ(checkpointed_runs, 4);  // each block once more in backward
}

TEST(Checkpoint, GivesThePlainRunsValuesAndGradientsLazily) {
  const Outcome plain = run(false, true, Mode::Eager);
  expect_same_run(run(true, true, Mode::Lazy), plain, 1e-12);
}

TEST(Checkpoint, ABlockFedDataStillTrainsItsParameters) {
  // x needs no gradient: the first block runs plainly, the second is checkpointed (its input
  // requires grad), and every parameter gets its gradient.
  int runs = 0;
  const Outcome plain = run(false, false, Mode::Eager);
  const Outcome ck = run(true, false, Mode::Eager, &runs);
  expect_same_run(ck, plain, 0);
  EXPECT_EQ(runs, 3);
}

TEST(Checkpoint, KeepsNoHistoryInsideTheBlock) {
  Block blk;
  Tensor x = randn({2, 4});
  x.requires_grad_();
  const Tensor y = checkpoint([&blk](const Tensor& t) { return blk(t); }, x);
  EXPECT_TRUE(y.requires_grad());
  EXPECT_EQ(blk.runs, 1);
  sum(y).backward();
  EXPECT_EQ(blk.runs, 2);
  EXPECT_TRUE(blk.a->parameters()[0].grad().defined());
}

/// The planned peak (MB) of the step graph of 8 blocks, each checkpointed or not, and the first
/// layer's weight gradient. Activations 2048 x 512 f32 (4 MB each) dwarf the weights.
std::pair<double, std::vector<float>> lazy_step(bool checkpointed) {
  manual_seed(5);
  std::vector<Block> blocks(8);
  for (Block& b : blocks) {
    b.a = std::make_shared<nn::Linear>(64, 512);
    b.b = std::make_shared<nn::Linear>(512, 64);
  }
  Tensor x = randn({2048, 64});
  debug::set_enabled(true);
  debug::take_log();
  {
    ModeGuard lazy(Mode::Lazy);
    Tensor h = x;
    for (size_t i = 0; i < blocks.size(); ++i) {
      Block& blk = blocks[i];
      // The first block is fed data: it runs plainly either way (no input requires grad).
      h = checkpointed ? checkpoint([&blk](const Tensor& t) { return blk(t); }, h) : blk(h);
    }
    sum(h * h).backward();
    mark_step();
  }
  double peak = -1;
  for (const std::string& line : debug::take_log()) {
    const size_t at = line.find("planned peak ");
    if (line.find(" memory: ") != std::string::npos && at != std::string::npos)
      peak = std::stod(line.substr(at + 13));
  }
  debug::set_enabled(false);
  return {peak, blocks[0].a->weight.grad().to_vector<float>()};
}

TEST(Checkpoint, LazyModeRecomputesInsteadOfKeepingActivations) {
  const auto [plain_mb, plain_grad] = lazy_step(false);
  const auto [ck_mb, ck_grad] = lazy_step(true);
  ASSERT_GT(plain_mb, 0);
  ASSERT_GT(ck_mb, 0);
  // Without the barrier the compiler merged the recomputation into the forward: the same peak.
  // With it: the plain first block's activations, one block's recomputation and its backward
  // (58% here, less the deeper the model).
  EXPECT_LT(ck_mb, 0.65 * plain_mb) << ck_mb << " MB vs " << plain_mb << " MB";
  ASSERT_EQ(ck_grad.size(), plain_grad.size());
  for (size_t i = 0; i < ck_grad.size(); ++i)
    EXPECT_NEAR(ck_grad[i], plain_grad[i], 1e-5 * std::max(1.0f, std::abs(plain_grad[i]))) << i;
}

}  // namespace
}  // namespace lt
