// The collectives and data-parallel training on the ranks this binary runs as: started by
// lt-launch -n 2 (tests/CMakeLists.txt) every rank runs every test, and each test checks its
// rank's results against a reference computed in-process from what every rank holds (rank r's
// data is a known function of r). Started alone it is a job of one rank and the same tests hold.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <cstring>
#include <vector>

#include "lt/lt.h"
#include "tests/dist/dist_main.h"
#include "tests/support/all_close.h"
#include "tests/support/train_steps.h"

namespace lt {
namespace {

using testing::AllClose;

// Rank r's operand: [r + 1, -2 (r + 1), 0.5 r, 3].
std::vector<float> rank_values(int r) {
  const auto f = static_cast<float>(r);
  return {f + 1, -2 * (f + 1), 0.5f * f, 3};
}

Tensor reference(dist::ReduceOp op) {
  const int w = dist::world_size();
  std::vector<float> acc = rank_values(0);
  for (int r = 1; r < w; ++r) {
    const std::vector<float> v = rank_values(r);
    for (size_t i = 0; i < acc.size(); ++i) {
      switch (op) {
        case dist::ReduceOp::Sum: case dist::ReduceOp::Mean: acc[i] += v[i]; break;
        case dist::ReduceOp::Max: acc[i] = std::max(acc[i], v[i]); break;
        case dist::ReduceOp::Min: acc[i] = std::min(acc[i], v[i]); break;
      }
    }
  }
  if (op == dist::ReduceOp::Mean)
    for (float& x : acc) x /= static_cast<float>(w);
  return from_vector(acc, {4});
}

TEST(Dist, WorldIsWhatTheLauncherStarted) {
  EXPECT_EQ(dist::world_size(), testing::expected_world());
  EXPECT_EQ(dist::backend(), testing::expected_world() > 1 ? "mpi" : "single");
  EXPECT_GE(dist::rank(), 0);
  EXPECT_LT(dist::rank(), dist::world_size());
  EXPECT_LT(dist::local_rank(), dist::local_world_size());
}

TEST(Dist, AllReduceEagerEveryOp) {
  const Tensor x = from_vector(rank_values(dist::rank()), {4});
  for (dist::ReduceOp op : {dist::ReduceOp::Sum, dist::ReduceOp::Mean, dist::ReduceOp::Max,
                            dist::ReduceOp::Min})
    EXPECT_TRUE(AllClose(dist::all_reduce(x, op), reference(op), 0, 0)) << static_cast<int>(op);
  const Tensor ids = from_vector(std::vector<int64_t>{dist::rank(), 7}, {2});
  const int64_t w = dist::world_size();
  EXPECT_EQ(dist::all_reduce(ids).to_vector<int64_t>(),
            (std::vector<int64_t>{w * (w - 1) / 2, 7 * w}));
}

// In the step graph, between fused loops, at every opt level: all_reduce(2x) + 1.
TEST(Dist, AllReduceInLazyStepGraph) {
  for (int level : {0, 1, 2}) {
    CompileOptions o = compile_options();
    o.opt_level = level;
    set_compile_options(o);
    ModeGuard lazy(Mode::Lazy);
    const Tensor x = from_vector(rank_values(dist::rank()), {4});
    const Tensor y = dist::all_reduce(x * 2.0, dist::ReduceOp::Sum) + 1.0;
    const std::vector<Tensor> ys{y};
    EXPECT_NE(debug::graph_text(ys).find("all_reduce("), std::string::npos);
    mark_step();
    EXPECT_TRUE(AllClose(y, reference(dist::ReduceOp::Sum) * 2.0 + 1.0, 0, 0)) << level;
  }
  set_compile_options({});
}

// A step graph's all-reduces, large and small, each op, step after step: the exact reduction on
// every path. Once the first steps have sized it, they all go through the host's shared segment
// when every rank runs on one host (LT_SHM_ALL_REDUCE=1, the default), else through MPI.
TEST(Dist, StepAllReducesAreExactOnTheSharedSegmentAndOnMpi) {
  const int w = dist::world_size(), r = dist::rank();
  constexpr int64_t kLarge = 300000;  // 1.2 MB: OpenMPI sends it in fragments
  auto value = [](int rank, int64_t i, int step) {
    return static_cast<float>((i * 7 + rank * 13 + step) % 23 - 11);
  };
  ModeGuard lazy(Mode::Lazy);
  dist::AllReduceCounts before;
  for (int step = 0; step < 4; ++step) {
    std::vector<float> large(kLarge), small(5);
    for (int64_t i = 0; i < kLarge; ++i) large[i] = value(r, i, step);
    for (int64_t i = 0; i < 5; ++i) small[i] = value(r, i, step + 1);
    const Tensor x = from_vector(large, {kLarge}), s = from_vector(small, {5});
    const Tensor sum = dist::all_reduce(x * 2.0, dist::ReduceOp::Sum);
    const Tensor mean = dist::all_reduce(x + 1.0, dist::ReduceOp::Mean);
    const Tensor max = dist::all_reduce(s * 1.0, dist::ReduceOp::Max);
    if (step == 3) before = dist::all_reduce_counts();
    mark_step();
    std::vector<float> want_sum(kLarge), want_mean(kLarge), want_max(5);
    for (int64_t i = 0; i < kLarge; ++i) {
      float acc = 0;
      for (int q = 0; q < w; ++q) acc += value(q, i, step) + 1;
      want_mean[i] = acc * static_cast<float>(1.0 / w);
      acc = 0;
      for (int q = 0; q < w; ++q) acc += value(q, i, step) * 2;
      want_sum[i] = acc;
    }
    for (int64_t i = 0; i < 5; ++i) {
      want_max[i] = value(0, i, step + 1);
      for (int q = 1; q < w; ++q) want_max[i] = std::max(want_max[i], value(q, i, step + 1));
    }
    EXPECT_EQ(sum.to_vector<float>(), want_sum) << "step " << step;
    EXPECT_EQ(mean.to_vector<float>(), want_mean) << "step " << step;
    EXPECT_EQ(max.to_vector<float>(), want_max) << "step " << step;
  }
  const dist::AllReduceCounts after = dist::all_reduce_counts();
  // A /dev/shm without room for the 6 MB segment leaves everything to MPI, with a warning.
  struct statvfs shm {};
  if (statvfs("/dev/shm", &shm) != 0 || shm.f_bavail * shm.f_frsize < (64u << 20)) {
    std::fprintf(stderr, "no room in /dev/shm: the paths the all-reduces took are not checked\n");
    return;
  }
  const bool shared = w > 1 && dist::local_world_size() == w && option("LT_SHM_ALL_REDUCE") == "1";
  EXPECT_EQ(after.shared_memory - before.shared_memory, shared ? 3 : 0);
  EXPECT_EQ(after.mpi - before.mpi, w > 1 && !shared ? 3 : 0);
  // The two large ones take the stores LT_SHM_STORES names (auto: whichever measures cheaper).
  const std::string stores = option("LT_SHM_STORES");
  if (shared && stores != "auto") {
    EXPECT_EQ(after.streamed - before.streamed, stores == "streaming" ? 2 : 0);
  }
}

// LT_PROFILE reports the time a compiled step spends in its collectives (exposed communication).
TEST(Dist, ProfileReportsTheCollectivesTime) {
  debug::set_profiling(true);
  {
    ModeGuard lazy(Mode::Lazy);
    const Tensor x = from_vector(rank_values(dist::rank()), {4});
    for (int step = 0; step < 2; ++step) {
      const Tensor y = dist::all_reduce(x * 5.0) - 1.0;
      mark_step();
    }
  }
  debug::set_profiling(false);
  EXPECT_THAT(debug::profile_report(),
              ::testing::ContainsRegex("runs, [0-9.]+ ms per run in [0-9]+ launches\n"
                                       "  collectives \\(exposed communication\\): [0-9.]+ ms "
                                       "per run, [0-9.]+%\n"));
}

// y = all_reduce_sum(x_r * w_r) on every rank, loss_r = sum(y): the gradient of w_r is the
// output gradient summed over the ranks (world_size ones) times x_r, in both modes.
TEST(Dist, AllReduceGradientIsTheReductionOfTheOutputGradients) {
  for (Mode mode : {Mode::Eager, Mode::Lazy}) {
    ModeGuard guard(mode);
    const Tensor x = from_vector(rank_values(dist::rank()), {4});
    Tensor w = from_vector(std::vector<float>{1, 2, 3, 4}, {4}).requires_grad_();
    sum(dist::all_reduce(x * w)).backward();
    if (mode == Mode::Lazy) mark_step();
    EXPECT_TRUE(AllClose(w.grad(), x * static_cast<double>(dist::world_size()), 0, 0));
  }
}

// Rank 1 traces x * 3 where the others trace x + 3 before the same all_reduce: every rank's
// mark_step throws, naming the ranks, the hashes and the first differing IR line, and no rank
// waits in a collective the others never start.
TEST(Dist, RanksThatTraceDifferentGraphsAllFailWithTheDifference) {
  ModeGuard lazy(Mode::Lazy);
  const Tensor x = from_vector(rank_values(dist::rank()), {4});
  const Tensor y = dist::all_reduce(dist::rank() == 1 ? x * 3.0 : x + 3.0);
  if (dist::world_size() == 1) {
    EXPECT_NO_THROW(mark_step());
    return;
  }
  std::string message;
  try {
    mark_step();
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_THAT(message, ::testing::MatchesRegex(
                           "ranks traced different step graphs: rank 0 [0-9a-f]{16} \\(ranks "
                           "\\[0(, [2-9])*\\]\\), rank 1 [0-9a-f]{16} \\(ranks \\[1\\]\\); first "
                           "difference at line 2:\n"
                           "  rank 0:   %0 = add\\(%p0, %p1\\) : f32\\[4\\]\n"
                           "  rank 1:   %0 = mul\\(%p0, %p1\\) : f32\\[4\\]"));
}

TEST(Dist, AllGatherAndReduceValue) {
  const int w = dist::world_size();
  const Tensor x = from_vector(rank_values(dist::rank()), {4});
  const Tensor all = dist::all_gather(x);
  ASSERT_EQ(all.shape(), (Shape{w, 4}));
  for (int r = 0; r < w; ++r)
    EXPECT_TRUE(AllClose(reshape(slice(all, 0, r, r + 1), {4}), from_vector(rank_values(r), {4}),
                         0, 0));
  EXPECT_TRUE(AllClose(dist::reduce_value(x), reference(dist::ReduceOp::Mean), 0, 0));
  const Tensor correct = from_vector(std::vector<int64_t>{10 + dist::rank()}, {});
  EXPECT_EQ(dist::reduce_value(correct, false).item<int64_t>(), 10 * w + w * (w - 1) / 2);
  std::string message;
  try {
    dist::reduce_value(correct);  // averaging counts: refused before any rank communicates
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_THAT(message, ::testing::StartsWith("reduce_value: averaging needs an f32 or f64 tensor "
                                             "(operands: i64[]) at "));
}

TEST(Dist, BroadcastParametersGivesRootsWeightsToEveryRank) {
  manual_seed(100 + static_cast<uint64_t>(dist::rank()));  // different weights on each rank
  nn::Linear layer(3, 2);
  const int w = dist::world_size();
  dist::broadcast_parameters(layer, 0);
  for (const Tensor& p : layer.parameters()) {
    const Tensor all = dist::all_gather(p);
    for (int r = 1; r < w; ++r)
      EXPECT_TRUE(AllClose(reshape(slice(all, 0, r, r + 1), p.shape()), p, 0, 0));
  }
  manual_seed(100);  // rank 0's draw
  nn::Linear root(3, 2);
  EXPECT_TRUE(AllClose(layer.parameters()[0], root.parameters()[0], 0, 0));
}

// Data-parallel training: each rank trains on its slice of every global batch, all-reducing the
// gradients (mean); in-process, the same model trains on the whole batch alone. The losses
// agree to 1e-4 (the summation order differs), and every rank ends with the same parameters,
// bit for bit.
constexpr int kSteps = 30, kGlobalBatch = 16, kIn = 12, kHidden = 32, kClasses = 4;

struct Run {
  std::vector<float> losses;
  std::vector<Tensor> params;
};

// This rank's rows of a global batch (all of them for the one-process reference). Made eagerly,
// before the loop: slicing inside the lazy step would give each rank a graph of its own, which
// the ranks refuse to run.
Tensor rows_of_rank(const Tensor& global, bool replicated) {
  if (!replicated) return global;
  const int64_t per_rank = global.size(0) / dist::world_size(), r = dist::rank();
  return slice(global, 0, r * per_rank, (r + 1) * per_rank);
}

// `steps` optimizer steps on loss_at(step); replicas all-reduce the gradients (mean) before the
// update, through `reducer` when there is one, and report the loss averaged over the ranks.
std::vector<float> sgd_steps(Mode mode, bool replicated, int steps, optim::SGD& opt,
                             std::span<const Tensor> params,
                             const std::function<Tensor(int)>& loss_at,
                             dist::GradientReducer* reducer = nullptr) {
  testing::TrainOptions o{.mode = mode};
  if (reducer) {
    o.after_backward = [reducer](int) { reducer->finish(); };
  } else if (replicated) {
    o.after_backward = [params](int) { dist::all_reduce_gradients(params); };
  }
  if (replicated) {
    o.recorded_loss = [](const Tensor& loss) {
      return dist::all_reduce(loss, dist::ReduceOp::Mean);
    };
  }
  return testing::train_steps(opt, steps, loss_at, o);
}

Run train(Mode mode, bool replicated, bool reducer = false) {
  manual_seed(5);
  const Tensor teacher = randn({kIn, kClasses});
  std::vector<Tensor> xs, ys;
  for (int i = 0; i < 4; ++i) {
    const Tensor x = randn({kGlobalBatch, kIn});
    xs.push_back(rows_of_rank(x, replicated));
    ys.push_back(rows_of_rank(argmax(matmul(x, teacher), 1), replicated));
  }
  manual_seed(7);
  nn::Sequential model;
  model.push_back(std::make_shared<nn::Linear>(kIn, kHidden));
  model.push_back(std::make_shared<nn::ReLU>());
  model.push_back(std::make_shared<nn::Linear>(kHidden, kClasses));
  if (replicated) dist::broadcast_parameters(model);
  const std::vector<Tensor> params = model.parameters();
  optim::SGD opt(params, {.lr = 0.1, .momentum = 0.9, .weight_decay = 1e-3});
  std::optional<dist::GradientReducer> buckets;
  if (replicated && reducer) buckets.emplace(params);
  const std::vector<float> losses = sgd_steps(
      mode, replicated, kSteps, opt, params,
      [&](int step) { return cross_entropy(model.forward(xs[step % 4]), ys[step % 4]); },
      buckets ? &*buckets : nullptr);
  return {losses, params};
}

void check_replicas_follow_one_process(Mode mode, bool reducer = false) {
  const Run alone = train(mode, false);
  const Run replicas = train(mode, true, reducer);
  ASSERT_EQ(replicas.losses.size(), alone.losses.size());
  for (size_t i = 0; i < alone.losses.size(); ++i)
    EXPECT_NEAR(replicas.losses[i], alone.losses[i], 1e-4) << "step " << i;
  EXPECT_LT(replicas.losses.back(), 0.5f * replicas.losses.front());  // it learned
  for (size_t i = 0; i < alone.params.size(); ++i) {
    EXPECT_TRUE(AllClose(replicas.params[i], alone.params[i], 1e-4, 1e-4)) << "parameter " << i;
    const Tensor all = dist::all_gather(replicas.params[i]);
    const std::vector<float> v = all.to_vector<float>();
    const size_t n = static_cast<size_t>(replicas.params[i].numel());
    for (int r = 1; r < dist::world_size(); ++r)
      EXPECT_EQ(std::memcmp(v.data(), v.data() + r * n, n * sizeof(float)), 0)
          << "rank " << r << " parameter " << i;
  }
}

// SyncBatchNorm: a conv + batch norm net whose 2 ranks normalize with the statistics of the
// whole global batch, so they follow one process with plain BatchNorm2d over that batch:
// losses, parameters and running statistics. `amp`: the forward under bf16 autocast (the
// convolution in bf16, its result and the batch norm in f32).
void check_sync_batch_norm(Mode mode, bool amp, double loss_tol, double state_tol) {
  auto run = [&](bool replicated) {
    manual_seed(11);
    std::vector<Tensor> xs, ys;
    for (int i = 0; i < 3; ++i) {
      const Tensor x = randn({8, 2, 6, 6});
      xs.push_back(rows_of_rank(x, replicated));
      ys.push_back(rows_of_rank(argmax(sum(x, {2, 3}), 1), replicated));
    }
    manual_seed(12);
    nn::Conv2d conv(2, 4, 3, {.padding = 1});
    nn::BatchNorm2d bn(4);
    nn::Linear head(4, 2);
    if (replicated) {
      EXPECT_EQ(nn::convert_sync_batchnorm(bn), 1);
      EXPECT_EQ(bn.name(), "SyncBatchNorm");
    }
    std::vector<Tensor> params = conv.parameters();
    for (const Tensor& p : bn.parameters()) params.push_back(p);
    for (const Tensor& p : head.parameters()) params.push_back(p);
    optim::SGD opt(params, {.lr = 0.2, .momentum = 0.9});
    // The buckets' all-reduces start during backward, between SyncBatchNorm's own.
    std::optional<dist::GradientReducer> buckets;
    if (replicated) buckets.emplace(params);
    const std::vector<float> losses = sgd_steps(
        mode, replicated, 12, opt, params,
        [&](int step) {
          AutocastGuard autocast(DType::BF16, amp);
          const Tensor h = relu(bn.forward(conv.forward(xs[step % 3])));
          return cross_entropy(head.forward(mean(h, {2, 3})), ys[step % 3]);
        },
        buckets ? &*buckets : nullptr);
    std::vector<Tensor> state = params;
    state.push_back(bn.running_mean);
    state.push_back(bn.running_var);
    return std::pair{losses, state};
  };
  const auto [alone_losses, alone_state] = run(false);
  const auto [losses, state] = run(true);
  ASSERT_EQ(losses.size(), alone_losses.size());
  for (size_t i = 0; i < losses.size(); ++i)
    EXPECT_NEAR(losses[i], alone_losses[i], loss_tol) << i;
  for (size_t i = 0; i < state.size(); ++i)
    EXPECT_TRUE(AllClose(state[i], alone_state[i], state_tol, state_tol)) << "tensor " << i;
}

TEST(Dist, SyncBatchNormReplicasFollowOneProcess) {
  for (Mode mode : {Mode::Eager, Mode::Lazy}) check_sync_batch_norm(mode, false, 1e-4, 1e-4);
}

// Under autocast each rank's convolution weight gradient is its own sum rounded to bf16 before
// the all-reduce, one process's the whole batch's: they part by bf16 roundings (2e-4 in the
// losses and 1.4e-3 in a weight of 0.23 by step 12 here).
TEST(Dist, SyncBatchNormUnderBf16AutocastFollowsOneProcess) {
  for (Mode mode : {Mode::Eager, Mode::Lazy}) check_sync_batch_norm(mode, true, 1e-3, 5e-3);
}

// Ranks on one host share compiles: with an empty disk cache, local rank 0 runs LLVM for the
// step graphs (they hold collectives) and the other ranks load its objects.
TEST(Dist, OtherRanksLoadTheStepObjectsTheirHostsFirstRankCompiled) {
  const int64_t root_pid = dist::all_gather(from_vector(std::vector<int64_t>{getpid()}, {}))
                               .to_vector<int64_t>()[0];
  const std::string dir = fmt::format("{}/lt-shared-compile-{}",
                                      std::filesystem::temp_directory_path().string(), root_pid);
  const std::string previous = option("LT_CACHE_DIR");
  set_option("LT_CACHE_DIR", dir);
  clear_graph_cache();
  metrics::reset();
  manual_seed(21);
  nn::Linear layer(10, 3);
  optim::SGD opt(layer.parameters(), {.lr = 0.1, .momentum = 0.9});
  const Tensor x = randn({4, 10});
  testing::train_steps(
      opt, 3, [&](int) { return mean(layer.forward(x) * layer.forward(x)); },
      {.mode = Mode::Lazy, .after_backward = [&](int) { dist::all_reduce_gradients(layer); }});
  const int64_t compiled = metrics::counter("llvm_compile");
  const int64_t loaded = metrics::counter("disk_cache_hit");
  if (dist::local_rank() == 0) {
    EXPECT_GT(compiled, 0);
  } else {
    EXPECT_EQ(compiled, 0);
    EXPECT_GT(loaded, 0);
  }
  dist::barrier();
  if (dist::rank() == 0) std::filesystem::remove_all(dir);
  set_option("LT_CACHE_DIR", previous);
}

TEST(Dist, LazyReplicasFollowOneProcessWithTheGlobalBatch) {
  check_replicas_follow_one_process(Mode::Lazy);
}

TEST(Dist, EagerReplicasFollowOneProcessWithTheGlobalBatch) {
  check_replicas_follow_one_process(Mode::Eager);
}

// 1 KiB buckets split the model's 2.2 KB of gradients into two: in eager mode the reducer's
// buckets start during backward, in lazy mode the step graph's (the bucket_all_reduce pass).
class SmallBuckets : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_first_ = option("LT_BUCKET_FIRST_KB");
    previous_ = option("LT_BUCKET_KB");
    set_option("LT_BUCKET_FIRST_KB", "1");
    set_option("LT_BUCKET_KB", "1");
  }
  void TearDown() override {
    set_option("LT_BUCKET_FIRST_KB", previous_first_);
    set_option("LT_BUCKET_KB", previous_);
  }
  std::string previous_first_, previous_;
};

TEST_F(SmallBuckets, EagerBucketsFollowOneProcess) {
  check_replicas_follow_one_process(Mode::Eager, /*reducer=*/true);
}

TEST_F(SmallBuckets, LazyBucketsFollowOneProcess) {
  check_replicas_follow_one_process(Mode::Lazy, /*reducer=*/true);
}

// The reducer's means are the per-gradient all-reduce's, bit for bit, whatever the buckets.
TEST_F(SmallBuckets, ReducerGivesEachGradientsMean) {
  manual_seed(31);
  nn::Sequential model;
  model.push_back(std::make_shared<nn::Linear>(kIn, kHidden));
  model.push_back(std::make_shared<nn::ReLU>());
  model.push_back(std::make_shared<nn::Linear>(kHidden, kClasses));
  dist::broadcast_parameters(model);
  manual_seed(40 + dist::rank());  // every rank's own batch
  const Tensor x = randn({6, kIn});
  const Tensor y = from_vector(std::vector<int64_t>{0, 1, 2, 3, 1, 2}, {6});
  const std::vector<Tensor> params = model.parameters();
  auto gradients = [&] {
    std::vector<Tensor> g;
    for (const Tensor& p : params) g.push_back(p.grad());
    return g;
  };
  cross_entropy(model.forward(x), y).backward();
  dist::all_reduce_gradients(params);
  const std::vector<Tensor> want = gradients();
  dist::GradientReducer reducer(model);
  // Last parameters first: b2, w2 and b1 (656 B) fill the first bucket, w1 (1536 B) is alone.
  using ::testing::ElementsAre;
  EXPECT_THAT(reducer.buckets(), ElementsAre(ElementsAre(3, 2, 1), ElementsAre(0)));
  for (int round = 0; round < 2; ++round) {
    for (Tensor p : params) p.set_grad(Tensor());
    cross_entropy(model.forward(x), y).backward();
    reducer.finish();
    const std::vector<Tensor> got = gradients();
    for (size_t i = 0; i < params.size(); ++i)
      EXPECT_EQ(got[i].to_vector<float>(), want[i].to_vector<float>()) << "round " << round
                                                                        << " parameter " << i;
  }
}

}  // namespace
}  // namespace lt
