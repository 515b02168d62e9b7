// ZeRO on the ranks this binary runs as (tests/CMakeLists.txt: 1, 2 and 3 ranks): the
// reduce_scatter and all_gather collectives against values computed from what every rank holds,
// and sharded optimizers (stages 1 and 2) against the same optimizer unsharded, fed the same
// averaged gradients, eagerly and lazily.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "lt/lt.h"
#include "tests/dist/dist_main.h"
#include "tests/support/all_close.h"

namespace lt {
namespace {

using testing::AllClose;

// Element i of rank r's operand.
float value(int r, int64_t i) { return static_cast<float>(r + 1) * 0.5f + static_cast<float>(i); }

// Device data (made eagerly), so that every rank traces the same graph over its own values.
Tensor rank_tensor(int r, int64_t n) {
  ModeGuard eager(Mode::Eager);
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(value(r, i));
  return from_vector(v, {n});
}

class ZeroModes : public ::testing::TestWithParam<Mode> {};

TEST_P(ZeroModes, ReduceScatterGivesEachRankItsBlockOfTheSum) {
  ModeGuard mode(GetParam());
  const int w = dist::world_size(), me = dist::rank();
  const int64_t block = 3;
  const Tensor x = rank_tensor(me, w * block);
  const Tensor sum = dist::reduce_scatter_tensor(x);
  const Tensor mean = dist::reduce_scatter_tensor(reshape(x, {w, block}), dist::ReduceOp::Mean);
  std::vector<float> want(block, 0.0f);
  for (int r = 0; r < w; ++r)
    for (int64_t i = 0; i < block; ++i) want[i] += value(r, me * block + i);
  EXPECT_TRUE(AllClose(sum, from_vector(want, {block}), 0, 0));
  for (float& v : want) v /= static_cast<float>(w);
  EXPECT_TRUE(AllClose(mean, from_vector(want, {1, block}), 0, 1e-7));
}

TEST_P(ZeroModes, AllGatherConcatenatesTheRanksAlongDimZero) {
  ModeGuard mode(GetParam());
  const int w = dist::world_size(), me = dist::rank();
  const Tensor g = dist::all_gather_tensor(reshape(rank_tensor(me, 4), {2, 2}));
  std::vector<float> want;
  for (int r = 0; r < w; ++r)
    for (int64_t i = 0; i < 4; ++i) want.push_back(value(r, i));
  EXPECT_TRUE(AllClose(g, from_vector(want, {2 * w, 2}), 0, 0));
}

TEST_P(ZeroModes, GradientsAreEachOthersCollective) {
  ModeGuard mode(GetParam());
  const int w = dist::world_size(), me = dist::rank();
  // loss_r = sum(c_r * all_gather(x_r)) with c_r = r + 1: d/dx_r = sum over ranks q of c_q times
  // block r of ones, every element sum_q (q + 1).
  Tensor c;
  {
    ModeGuard eager(Mode::Eager);
    c = full({1}, me + 1);
  }
  Tensor x = rank_tensor(me, 2).requires_grad_();
  sum(dist::all_gather_tensor(x) * c).backward();
  const float sum_c = static_cast<float>(w * (w + 1) / 2);
  EXPECT_TRUE(AllClose(x.grad(), full({2}, sum_c), 0, 0));
  // loss_r = sum(c_r * reduce_scatter(y_r, mean)): d/dy_r[block q] = c_q / w.
  Tensor y = rank_tensor(me, 2 * w).requires_grad_();
  sum(dist::reduce_scatter_tensor(y, dist::ReduceOp::Mean) * c).backward();
  std::vector<float> want;
  for (int q = 0; q < w; ++q)
    for (int i = 0; i < 2; ++i) want.push_back(static_cast<float>(q + 1) / static_cast<float>(w));
  EXPECT_TRUE(AllClose(y.grad(), from_vector(want, {2 * w}), 0, 1e-7));
}

TEST(Zero, ReduceScatterRefusesALengthThatIsNotAMultipleOfTheWorld) {
  const int w = dist::world_size();
  if (w == 1) GTEST_SKIP() << "every length is a multiple of 1";
  try {
    dist::reduce_scatter_tensor(zeros({w + 1}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fmt::format(
                  "dim 0 must be a multiple of the world size {}", w)),
              std::string::npos)
        << e.what();
  }
}

// A two-layer model whose parameters' sizes do not divide by 2 or 3 (chunks get padding), with
// a bias that gets no weight decay; rank r trains on its own rows.
struct Net {
  Tensor w1, b1, w2, b2;
  Net() {
    ModeGuard eager(Mode::Eager);
    manual_seed(7);
    w1 = randn({5, 7}) * 0.3;
    b1 = zeros({7});
    w2 = randn({7, 3}) * 0.3;
    b2 = full({3}, 0.1);
    for (Tensor* t : {&w1, &b1, &w2, &b2}) t->requires_grad_();
  }
  std::vector<Tensor> params() const { return {w1, b1, w2, b2}; }
  bool blow_up = false;  ///< rank 0's loss overflows a loss scale at step 2
  Tensor loss(int step) const {
    const int r = dist::rank();
    Tensor x;
    {
      ModeGuard eager(Mode::Eager);  // device data: the ranks trace one graph
      x = sin(arange(0, 20, 1, DType::F32) * (0.1 * (step + 1)) + static_cast<double>(r));
    }
    const Tensor h = tanh(matmul(reshape(x, {4, 5}), w1) + b1);
    const Tensor d = matmul(h, w2) + b2 - 0.25;
    const Tensor l = mean(d * d);
    if (!blow_up) return l;
    Tensor factor;
    {
      ModeGuard eager(Mode::Eager);
      factor = full({}, step == 2 && r == 0 ? 1e30 : 1.0);
    }
    return l * factor;
  }
};

using MakeOpt = std::function<std::unique_ptr<optim::Optimizer>(const Net&)>;

std::unique_ptr<optim::Optimizer> adamw(const Net& n) {
  return std::make_unique<optim::AdamW>(std::vector<optim::ParamGroup<optim::AdamWOptions>>{
      {{n.w1, n.w2}, {.lr = 0.01, .weight_decay = 0.1}}, {{n.b1, n.b2}, {.lr = 0.01}}});
}
std::unique_ptr<optim::Optimizer> sgd(const Net& n) {
  return std::make_unique<optim::SGD>(n.params(),
                                      optim::SGDOptions{.lr = 0.05, .momentum = 0.9});
}

// `steps` steps of plain data parallelism (stage 0) or ZeRO: the losses and the parameters.
std::vector<float> train(Net& net, optim::Optimizer& opt, int stage, int steps,
                         amp::GradScaler* scaler = nullptr) {
  if (stage > 0) opt.shard_state(stage);
  std::vector<Tensor> losses;
  for (int s = 0; s < steps; ++s) {
    opt.zero_grad();
    const Tensor loss = net.loss(s);
    (scaler ? scaler->scale(loss) : loss).backward();
    if (stage < 2) dist::all_reduce_gradients(net.params());
    if (scaler) {
      scaler->step(opt);
      scaler->update();
    } else {
      opt.step();
    }
    losses.push_back(loss);
    if (mode() == Mode::Lazy) mark_step();
  }
  std::vector<float> out;
  for (const Tensor& l : losses) out.push_back(l.item<float>());
  for (const Tensor& p : net.params())
    for (float v : p.to_vector<float>()) out.push_back(v);
  return out;
}

// The sharded run's losses and parameters are the plain run's, to f32 rounding (the mean of
// the reduce-scatter may round apart from the all-reduce's); non-finite losses exactly.
void expect_follows(const std::vector<float>& got, const std::vector<float>& want,
                    const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(want[i])) EXPECT_EQ(got[i], want[i]) << what << ", value " << i;
    else EXPECT_NEAR(got[i], want[i], 2e-6 * (1 + std::abs(want[i]))) << what << ", value " << i;
  }
}

struct ZeroCase {
  std::string name;
  MakeOpt make;
  int stage;
};

class ZeroFollows : public ::testing::TestWithParam<std::tuple<ZeroCase, Mode>> {};

TEST_P(ZeroFollows, DataParallelism) {
  const auto& [c, m] = GetParam();
  ModeGuard mode(m);
  Net plain_net, zero_net;
  const auto plain = c.make(plain_net), zero = c.make(zero_net);
  const std::vector<float> want = train(plain_net, *plain, 0, 12);
  expect_follows(train(zero_net, *zero, c.stage, 12), want, c.name);
  // After stage 2's step no rank keeps a full gradient.
  if (c.stage == 2) {
    for (const Tensor& p : zero_net.params()) EXPECT_FALSE(p.grad().defined());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Optimizers, ZeroFollows,
    ::testing::Combine(::testing::Values(ZeroCase{"AdamWStage1", adamw, 1},
                                         ZeroCase{"AdamWStage2", adamw, 2},
                                         ZeroCase{"SGDStage1", sgd, 1},
                                         ZeroCase{"SGDStage2", sgd, 2}),
                       ::testing::Values(Mode::Eager, Mode::Lazy)),
    [](const auto& info) {
      return std::get<0>(info.param).name +
             (std::get<1>(info.param) == Mode::Lazy ? "Lazy" : "Eager");
    });

INSTANTIATE_TEST_SUITE_P(Modes, ZeroModes, ::testing::Values(Mode::Eager, Mode::Lazy),
                         [](const auto& info) {
                           return std::string(info.param == Mode::Lazy ? "Lazy" : "Eager");
                         });

TEST(Zero, ALossScalersSkippedStepsAreSkippedOnEveryRank) {
  // Rank 0's scaled gradients overflow at step 2, the other ranks' do not: with stage 2 no
  // rank sees another's gradients, yet every rank must skip that step, as without sharding.
  for (const int stage : {1, 2}) {
    Net plain_net, zero_net;
    plain_net.blow_up = zero_net.blow_up = true;
    const auto plain = adamw(plain_net), zero = adamw(zero_net);
    amp::GradScaler a({.init_scale = 1e10, .growth_interval = 2}),
        b({.init_scale = 1e10, .growth_interval = 2});
    const std::vector<float> want = train(plain_net, *plain, 0, 3, &a);
    expect_follows(train(zero_net, *zero, stage, 3, &b), want, fmt::format("stage {}", stage));
    EXPECT_EQ(a.get_scale().item<float>(), b.get_scale().item<float>());
    // Two finite steps grew the scale to 2e10, the skipped third backed it off.
    EXPECT_EQ(b.get_scale().item<float>(), 1e10f);
  }
}

TEST(Zero, EachRankKeepsItsShareOfTheState) {
  Net net;
  const auto opt = adamw(net);
  const int64_t full = opt->state_bytes();
  // exp_avg and exp_avg_sq of 35 + 7 + 21 + 3 floats, and a step count per group.
  EXPECT_EQ(full, (2 * (35 + 7 + 21 + 3) + 2) * 4);
  opt->shard_state(1);
  const int64_t w = dist::world_size();
  int64_t chunks = 0;
  for (const int64_t n : {35, 7, 21, 3}) chunks += (n + w - 1) / w;
  EXPECT_EQ(opt->state_bytes(), (2 * chunks + 2) * 4);
}

TEST(Zero, TheStateDictIsTheUnshardedOnesAndLoadsEitherWay) {
  for (const Mode m : {Mode::Eager, Mode::Lazy}) {
    ModeGuard mode(m);
    Net plain_net, zero_net;
    const auto plain = adamw(plain_net), zero = adamw(zero_net);
    train(plain_net, *plain, 0, 5);
    train(zero_net, *zero, 2, 5);
    const Checkpoint want = plain->state_dict(), got = zero->state_dict();
    EXPECT_EQ(got.metadata, want.metadata);
    ASSERT_EQ(got.tensors.size(), want.tensors.size());
    for (const auto& [name, t] : want.tensors)
      EXPECT_TRUE(AllClose(got.tensors.at(name), t, 1e-7, 1e-6)) << name;
    // A sharded optimizer resumed from the unsharded state and the unsharded one from the
    // sharded state go on as the unsharded run does.
    Net a_net, b_net;
    {
      NoGradGuard no_grad;
      for (Net* n : {&a_net, &b_net}) {
        n->w1.copy_(plain_net.w1), n->b1.copy_(plain_net.b1);
        n->w2.copy_(plain_net.w2), n->b2.copy_(plain_net.b2);
      }
    }
    const auto a = adamw(a_net), b = adamw(b_net);
    a->shard_state(1);
    a->load_state_dict(want);
    b->load_state_dict(got);
    // Continue from step 5 (the losses' inputs depend on the step).
    const auto go_on = [&](Net& net, optim::Optimizer& opt) {
      for (int s = 5; s < 8; ++s) {
        opt.zero_grad();
        net.loss(s).backward();
        dist::all_reduce_gradients(net.params());
        opt.step();
        if (m == Mode::Lazy) mark_step();
      }
      return net.params();
    };
    const std::vector<Tensor> pa = go_on(a_net, *a), pb = go_on(b_net, *b),
                              pp = go_on(plain_net, *plain);
    for (size_t i = 0; i < pp.size(); ++i) {
      EXPECT_TRUE(AllClose(pa[i], pp[i], 1e-7, 1e-6)) << "sharded, parameter " << i;
      EXPECT_TRUE(AllClose(pb[i], pp[i], 1e-7, 1e-6)) << "unsharded, parameter " << i;
    }
  }
}

TEST(Zero, ShardingTwiceOrAtAnotherStageIsRefused) {
  Net net;
  const auto opt = sgd(net);
  try {
    opt->shard_state(3);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SGD.shard_state: stage must be 1 or 2, got 3 at "),
              std::string::npos)
        << e.what();
  }
  opt->shard_state(2);
  try {
    opt->shard_state(1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "SGD.shard_state: the state is sharded already (stage 2) at "),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace lt
