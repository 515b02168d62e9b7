// A model that PyTorch trained, loaded by its own state_dict names: ConvTranspose2d, GroupNorm,
// LSTM and MultiheadAttention, written as tests/data/torch_checkpoint_model.py writes it in
// PyTorch. The checkpoint loads strictly and gives PyTorch's output for the saved input.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/nn.h"

namespace lt {
namespace {

class Net : public nn::Module {
 public:
  Net() {
    up = register_module("up", std::make_shared<nn::ConvTranspose2d>(
                                   3, 4, 3, nn::ConvTranspose2dOptions{.stride = 2, .padding = 1,
                                                                       .output_padding = 1}));
    norm = register_module("norm", std::make_shared<nn::GroupNorm>(2, 4));
    rnn = register_module("rnn",
                          std::make_shared<nn::LSTM>(4, 8, nn::RNNOptions{.batch_first = true}));
    attn = register_module("attn", std::make_shared<nn::MultiheadAttention>(
                                       8, 2, nn::MultiheadAttentionOptions{.batch_first = true}));
    head = register_module("head", std::make_shared<nn::Linear>(8, 5));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = relu(norm->forward(up->forward(x)));  // [N, 4, 8, 8]
    h = transpose(flatten(h, 2), 1, 2);              // [N, 64, 4]
    h = std::get<0>(rnn->forward(h));                // [N, 64, 8]
    const Tensor a = std::get<0>(attn->forward(h, h, h));
    return head->forward(mean(h + a, {1}));  // [N, 5]
  }
  std::shared_ptr<nn::ConvTranspose2d> up;
  std::shared_ptr<nn::GroupNorm> norm;
  std::shared_ptr<nn::LSTM> rnn;
  std::shared_ptr<nn::MultiheadAttention> attn;
  std::shared_ptr<nn::Linear> head;
};

TEST(TorchCheckpoint, LoadsStrictlyAndGivesPyTorchsOutputs) {
  Checkpoint file = load(LT_TORCH_CHECKPOINT);
  const Tensor input = file.tensors.at("data.input");
  const std::vector<float> want = file.tensors.at("data.output").to_vector<float>();
  file.tensors.erase("data.input");
  file.tensors.erase("data.output");
  for (Mode mode : {Mode::Eager, Mode::Lazy}) {
    SCOPED_TRACE(mode == Mode::Eager ? "eager" : "lazy");
    auto net = std::make_shared<Net>();
    const LoadReport report = net->load_state_dict(file.tensors, /*strict=*/true);
    EXPECT_TRUE(report.clean()) << report.str();
    net->eval();
    ModeGuard guard(mode);
    NoGradGuard no_grad;
    const Tensor out = net->forward(input);
    if (mode == Mode::Lazy) mark_step();
    ASSERT_EQ(out.shape(), (Shape{2, 5}));
    const std::vector<float> got = out.to_vector<float>();
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-6 * std::max(1.0f, std::abs(want[i]))) << i;
  }
}

}  // namespace
}  // namespace lt
