// Modules in lazy mode: a small model's training steps (conv, batch norm, pooling, dropout,
// linear) give the same losses and the same final state as eager mode, with no sync and one
// steady-state graph; batch norm's running-statistics update is traced with the forward.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "lt/metrics.h"
#include "lt/options.h"
#include "tests/support/all_close.h"
#include "tests/support/train_steps.h"
#include "tests/unit/nn/nn_testing.h"

namespace lt {
namespace {

std::shared_ptr<nn::Sequential> small_cnn() {
  return std::make_shared<nn::Sequential>(
      std::make_shared<nn::Conv2d>(1, 4, 3, nn::Conv2dOptions{.padding = 1}),
      std::make_shared<nn::BatchNorm2d>(4), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Flatten>(),
      std::make_shared<nn::Dropout>(0.25), std::make_shared<nn::Linear>(4 * 4 * 4, 8),
      std::make_shared<nn::GELU>("tanh"), std::make_shared<nn::LayerNorm>(Shape{8}),
      std::make_shared<nn::Linear>(8, 3));
}

struct TrainRun {
  std::vector<float> losses;
  std::map<std::string, std::vector<double>> state;
  int64_t misses_after_two = 0;
};

TrainRun train(Mode mode, int steps) {
  manual_seed(11);
  auto net = small_cnn();
  TrainRun run;
  // A plain update written out, so that the modules are all these steps exercise.
  const auto step = [&](int) {
    Tensor x, y;
    {
      ModeGuard eager(Mode::Eager);  // the batch is input data
      x = randn({6, 1, 8, 8});
      y = from_vector<int64_t>({0, 1, 2, 0, 1, 2}, {6});
    }
    net->zero_grad();
    Tensor loss = cross_entropy(net->forward(x), y);
    loss.backward();
    NoGradGuard no_grad;
    for (Tensor& p : net->parameters()) p.sub_(p.grad() * 0.1);
    return loss;
  };
  const auto count_misses = [&](int s) {
    if (s == 1) run.misses_after_two = metrics::counter("cache_miss");
  };
  run.losses = testing::train_steps(steps, step, {.mode = mode, .after_step = count_misses});
  net->eval();
  {
    ModeGuard eager(Mode::Eager);
    manual_seed(99);
    run.state = testing::snapshot(net->state_dict());
    run.state["eval_output"] = testing::values(net->forward(randn({2, 1, 8, 8})));
  }
  return run;
}

TEST(LazyModules, TrainingStepsMatchEagerWithoutSyncs) {
  constexpr int kSteps = 5;
  const TrainRun eager = train(Mode::Eager, kSteps);
  clear_graph_cache();
  metrics::reset();
  const TrainRun lazy = train(Mode::Lazy, kSteps);
  EXPECT_EQ(metrics::counter("sync"), 0);
  EXPECT_EQ(metrics::counter("cache_miss"), lazy.misses_after_two);  // steps 3..5 hit the cache
  ASSERT_EQ(lazy.losses.size(), eager.losses.size());
  for (int i = 0; i < kSteps; ++i)
    EXPECT_NEAR(lazy.losses[i], eager.losses[i], 1e-5 * std::abs(eager.losses[i])) << i;
  EXPECT_LT(eager.losses.back(), eager.losses.front());
  for (const auto& [name, want] : eager.state) {
    SCOPED_TRACE(name);
    const auto& got = lazy.state.at(name);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k)
      EXPECT_NEAR(got[k], want[k], 1e-5 + 1e-4 * std::abs(want[k]));
  }
  EXPECT_EQ(lazy.state.at("1.num_batches_tracked"), std::vector<double>{kSteps});
}

/// A byte-level GPT of one block: embedding, causal attention and MLP, head over 256 bytes.
class TinyGpt : public nn::Module {
 public:
  TinyGpt() {
    embed = register_module("embed", std::make_shared<nn::Embedding>(256, 16));
    block = register_module("block", std::make_shared<nn::TransformerBlock>(16, 2, 0.1));
    ln = register_module("ln", std::make_shared<nn::LayerNorm>(Shape{16}));
    head = register_module("head", std::make_shared<nn::Linear>(16, 256, false));
  }
  Tensor forward(const Tensor& ids) {  // [B, T] -> logits [B * T, 256]
    return reshape(head->forward(ln->forward(block->forward(embed->forward(ids)))), {-1, 256});
  }
  std::shared_ptr<nn::Embedding> embed;
  std::shared_ptr<nn::TransformerBlock> block;
  std::shared_ptr<nn::LayerNorm> ln;
  std::shared_ptr<nn::Linear> head;
};

std::vector<float> train_gpt(Mode mode) {
  manual_seed(21);
  TinyGpt gpt;
  const std::string text = "hello, lazy world! hello, lazy world?";
  std::vector<int64_t> bytes(text.begin(), text.end());
  const int64_t t = 8;
  const auto step = [&](int s) {
    Tensor x, y;
    {
      ModeGuard eager(Mode::Eager);
      std::vector<int64_t> in, next;
      for (int64_t b = 0; b < 3; ++b)
        for (int64_t i = 0; i < t; ++i) {
          in.push_back(bytes[s + b * 9 + i]);
          next.push_back(bytes[s + b * 9 + i + 1]);
        }
      x = from_vector<int64_t>(in, {3, t});
      y = from_vector<int64_t>(next, {3 * t});
    }
    gpt.zero_grad();
    Tensor loss = cross_entropy(gpt.forward(x), y);
    loss.backward();
    NoGradGuard no_grad;
    for (Tensor& p : gpt.parameters()) p.sub_(p.grad() * 0.5);
    return loss;
  };
  return testing::train_steps(4, step, {.mode = mode});
}

TEST(LazyModules, TinyGptStepsMatchEager) {
  const std::vector<float> eager = train_gpt(Mode::Eager);
  clear_graph_cache();
  metrics::reset();
  const std::vector<float> lazy = train_gpt(Mode::Lazy);
  EXPECT_EQ(metrics::counter("sync"), 0);
  EXPECT_EQ(metrics::counter("cache_miss"), 1);  // every step is the same graph
  ASSERT_EQ(lazy.size(), eager.size());
  for (size_t i = 0; i < eager.size(); ++i)
    EXPECT_NEAR(lazy[i], eager[i], 1e-5 * std::abs(eager[i])) << "step " << i;
  EXPECT_LT(eager.back(), eager.front());
}

TEST(LazyModules, BatchNormRunningStatsAreTracedWithTheForward) {
  manual_seed(3);
  const Tensor x = randn({4, 2, 3, 3});
  nn::BatchNorm2d eager_bn(2);
  const Tensor eager_y = eager_bn.forward(x);

  nn::BatchNorm2d bn(2);
  metrics::reset();
  ModeGuard lazy(Mode::Lazy);
  const Tensor y = bn.forward(x);
  EXPECT_TRUE(is_pending(y));
  EXPECT_TRUE(is_pending(bn.running_mean));
  EXPECT_TRUE(is_pending(bn.running_var));
  EXPECT_TRUE(is_pending(bn.num_batches_tracked));
  const Tensor traced[] = {bn.running_mean};
  const std::string text = debug::graph_text(traced);
  EXPECT_NE(text.find("batch_norm"), std::string::npos) << text;
  EXPECT_EQ(metrics::counter("sync"), 0);
  mark_step();
  EXPECT_EQ(metrics::counter("sync"), 0);
  EXPECT_TRUE(testing::AllClose(y, eager_y));
  EXPECT_TRUE(testing::AllClose(bn.running_mean, eager_bn.running_mean));
  EXPECT_TRUE(testing::AllClose(bn.running_var, eager_bn.running_var));
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
}

TEST(NnLazy, ChannelsLastStepMatchesNchwAndEager) {
  // A residual conv + batch norm + relu block, a strided conv and a pooled head: with
  // LT_CHANNELS_LAST the compiled step runs the convolutions and batch norms on [N, H, W, C]
  // values; its loss, gradients and running statistics equal the NCHW step's and eager's up to
  // the rounding of the convolutions' sums in another order.
  struct Net {
    nn::Conv2d c1{16, 16, 3, {.padding = 1, .bias = false}};
    nn::BatchNorm2d b1{16};
    nn::Conv2d c2{16, 32, 3, {.stride = 2, .padding = 1, .bias = false}};
    nn::BatchNorm2d b2{32};
    nn::Linear fc{32, 10};
    std::vector<Tensor> state() {
      return {c1.weight.grad(), b1.weight.grad(), b1.bias.grad(), c2.weight.grad(),
              b2.weight.grad(), fc.weight.grad(),  b1.running_mean, b1.running_var,
              b2.running_mean,  b2.running_var};
    }
  };
  auto run = [](Mode mode, bool channels_last) {
    manual_seed(11);
    Net net;
    const Tensor x = randn({4, 16, 8, 8});
    const Tensor labels = from_vector<int64_t>({1, 3, 5, 7}, {4});
    const CompileOptions saved = compile_options();
    CompileOptions o = saved;
    o.channels_last = channels_last;
    set_compile_options(o);
    std::vector<std::vector<double>> out;
    {
      ModeGuard guard(mode);
      const Tensor h = relu(net.b1.forward(net.c1.forward(x)) + x);
      const Tensor y = relu(net.b2.forward(net.c2.forward(h)));
      const Tensor loss = cross_entropy(net.fc.forward(mean(y, {2, 3})), labels);
      loss.backward();
      if (mode == Mode::Lazy) mark_step();
      out.push_back(testing::values(loss));
      for (const Tensor& t : net.state()) out.push_back(testing::values(t));
    }
    set_compile_options(saved);
    return out;
  };
  const auto eager = run(Mode::Eager, false);
  const auto nchw = run(Mode::Lazy, false);
  // The channels-last step's lowerings, as LT_DUMP_DIR writes them (the step's graph, and those
  // of the tensors made before it): both convolutions' passes and both batch norms converted.
  const std::string dir = ::testing::TempDir() + "lt_channels_last_step";
  std::filesystem::remove_all(dir);
  const std::string saved_dir = option("LT_DUMP_DIR");
  set_option("LT_DUMP_DIR", dir);
  const auto last = run(Mode::Lazy, true);
  set_option("LT_DUMP_DIR", saved_dir);
  std::string lowered;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    if (f.path().string().ends_with("-channels_last.ir")) {
      std::ifstream in(f.path());
      lowered.append(std::istreambuf_iterator<char>(in), {});
    }
  const auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t at = lowered.find(what); at != std::string::npos; at = lowered.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("channels_last=true"), 5) << lowered;  // 2 forward, 1 input and 2 weight grads
  EXPECT_EQ(count("axis=3"), 4) << lowered;              // 2 batch_norm, 2 batch_norm_grad
  ASSERT_EQ(last.size(), eager.size());
  for (size_t i = 0; i < eager.size(); ++i) {
    double scale = 0;
    for (double v : eager[i]) scale = std::max(scale, std::abs(v));
    for (size_t k = 0; k < eager[i].size(); ++k) {
      EXPECT_NEAR(last[i][k], eager[i][k], 1e-5 * scale + 1e-7) << "tensor " << i << " [" << k << "]";
      EXPECT_NEAR(last[i][k], nchw[i][k], 1e-5 * scale + 1e-7) << "tensor " << i << " [" << k << "]";
    }
  }
}

}  // namespace
TEST(NnLazy, BatchNormTracesOneNodeForwardAndOneBackward) {
  // The running statistics move inside batch_norm and the backward is batch_norm_grad: no
  // statistics math in lt:: ops and no zero gradients for the outputs nothing differentiates.
  manual_seed(4);
  const Tensor x = randn({4, 2, 3, 3}).requires_grad_();
  nn::BatchNorm2d bn(2);
  ModeGuard lazy(Mode::Lazy);
  mark_step();
  metrics::reset();
  sum(bn.forward(x)).backward();
  const Tensor traced[] = {x.grad(), bn.weight.grad(), bn.bias.grad(), bn.running_mean,
                           bn.running_var, bn.num_batches_tracked};
  const std::string text = debug::graph_text(traced);
  const auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(" = batch_norm("), 1) << text;
  EXPECT_EQ(count(" = batch_norm_grad("), 1) << text;
  mark_step();
  // Forward: the count's 1 and add, batch_norm, sum; backward: the seed, sum's gradient (a
  // reshape to the kept axes and an expand), batch_norm_grad. Nothing else, zeros included.
  EXPECT_EQ(metrics::counter("nodes_traced"), 8);
}

}  // namespace lt
