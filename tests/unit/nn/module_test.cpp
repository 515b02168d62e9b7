// The Module base on a ResNet-like model: dotted names in registration order, counts, modes,
// gradients, registration errors, tied weights, printing and dtype casts.
#include <gtest/gtest.h>

#include <set>

#include "tests/unit/nn/nn_testing.h"

namespace lt {
namespace {

using testing::error_of;

nn::Conv2dOptions conv3(int64_t stride) { return {.stride = stride, .padding = 1, .bias = false}; }

/// ResNet's basic block: conv-bn-relu-conv-bn plus the input, through a 1x1 conv and bn
/// (downsample) when the shape changes.
class BasicBlock : public nn::Module {
 public:
  BasicBlock(int64_t in, int64_t out, int64_t stride) {
    conv1 = register_module("conv1", std::make_shared<nn::Conv2d>(in, out, 3, conv3(stride)));
    bn1 = register_module("bn1", std::make_shared<nn::BatchNorm2d>(out));
    conv2 = register_module("conv2", std::make_shared<nn::Conv2d>(out, out, 3, conv3(1)));
    bn2 = register_module("bn2", std::make_shared<nn::BatchNorm2d>(out));
    if (stride != 1 || in != out)
      downsample = register_module(
          "downsample",
          std::make_shared<nn::Sequential>(
              std::make_shared<nn::Conv2d>(in, out, 1, nn::Conv2dOptions{.stride = stride,
                                                                          .bias = false}),
              std::make_shared<nn::BatchNorm2d>(out)));
  }
  Tensor forward(const Tensor& x) {
    const Tensor y = bn2->forward(conv2->forward(relu(bn1->forward(conv1->forward(x)))));
    return relu(y + (downsample ? downsample->forward(x) : x));
  }

  std::shared_ptr<nn::Conv2d> conv1, conv2;
  std::shared_ptr<nn::BatchNorm2d> bn1, bn2;
  std::shared_ptr<nn::Sequential> downsample;
};

class TinyResNet : public nn::Module {
 public:
  TinyResNet() {
    conv1 = register_module("conv1", std::make_shared<nn::Conv2d>(3, 8, 3, conv3(1)));
    bn1 = register_module("bn1", std::make_shared<nn::BatchNorm2d>(8));
    layer1 = register_module("layer1", std::make_shared<nn::Sequential>(
                                           std::make_shared<BasicBlock>(8, 8, 1),
                                           std::make_shared<BasicBlock>(8, 8, 1)));
    layer2 = register_module("layer2", std::make_shared<nn::Sequential>(
                                           std::make_shared<BasicBlock>(8, 16, 2),
                                           std::make_shared<BasicBlock>(16, 16, 1)));
    head = register_module("head", std::make_shared<nn::Sequential>(
                                       std::make_shared<nn::AdaptiveAvgPool2d>(1),
                                       std::make_shared<nn::Flatten>(),
                                       std::make_shared<nn::Dropout>(0.2)));
    fc = register_module("fc", std::make_shared<nn::Linear>(16, 10));
  }
  Tensor forward(const Tensor& x) {
    const Tensor h = layer2->forward(layer1->forward(relu(bn1->forward(conv1->forward(x)))));
    return fc->forward(head->forward(h));
  }

  std::shared_ptr<nn::Conv2d> conv1;
  std::shared_ptr<nn::BatchNorm2d> bn1;
  std::shared_ptr<nn::Sequential> layer1, layer2, head;
  std::shared_ptr<nn::Linear> fc;
};

std::vector<std::string> names_of(const nn::NamedTensors& named) {
  std::vector<std::string> out;
  for (const auto& [name, _] : named) out.push_back(name);
  return out;
}

/// The parameter names of a block under `prefix`, written out from ResNet's structure.
void add_block_parameters(std::vector<std::string>& out, const std::string& prefix,
                          bool downsample) {
  for (const char* n : {"conv1.weight", "bn1.weight", "bn1.bias", "conv2.weight", "bn2.weight",
                        "bn2.bias"})
    out.push_back(prefix + n);
  if (downsample)
    for (const char* n : {"downsample.0.weight", "downsample.1.weight", "downsample.1.bias"})
      out.push_back(prefix + n);
}

TEST(Module, DottedParameterNamesInRegistrationOrder) {
  TinyResNet net;
  std::vector<std::string> want = {"conv1.weight", "bn1.weight", "bn1.bias"};
  add_block_parameters(want, "layer1.0.", false);
  add_block_parameters(want, "layer1.1.", false);
  add_block_parameters(want, "layer2.0.", true);
  add_block_parameters(want, "layer2.1.", false);
  want.push_back("fc.weight");
  want.push_back("fc.bias");
  EXPECT_EQ(names_of(net.named_parameters()), want);
  EXPECT_EQ(net.parameters().size(), 32u);
  for (const Tensor& p : net.parameters()) EXPECT_TRUE(p.requires_grad());
  // Not recursing: the top module registers no tensors of its own.
  EXPECT_TRUE(net.named_parameters(false).empty());
  EXPECT_EQ(names_of(net.fc->named_parameters(false)),
            (std::vector<std::string>{"weight", "bias"}));
}

TEST(Module, BuffersCountsAndStateDictKeys) {
  TinyResNet net;
  const std::vector<std::string> bns = {
      "bn1.",          "layer1.0.bn1.", "layer1.0.bn2.", "layer1.1.bn1.",
      "layer1.1.bn2.", "layer2.0.bn1.", "layer2.0.bn2.", "layer2.0.downsample.1.",
      "layer2.1.bn1.", "layer2.1.bn2."};
  std::vector<std::string> want_buffers;
  for (const auto& bn : bns)
    for (const char* n : {"running_mean", "running_var", "num_batches_tracked"})
      want_buffers.push_back(bn + n);
  EXPECT_EQ(names_of(net.named_buffers()), want_buffers);
  EXPECT_EQ(net.buffers().size(), 30u);
  EXPECT_EQ(net.layer2->at<BasicBlock>(0)->bn1->num_batches_tracked.dtype(), DType::I64);

  // Elements: conv 3x3 weights out*in*9, 1x1 out*in, each bn 2*C, fc 16*10 + 10.
  const int64_t block8 = 2 * (8 * 8 * 9) + 2 * 16;
  const int64_t block8to16 = 16 * 8 * 9 + 16 * 16 * 9 + 2 * 32 + 16 * 8 + 32;
  const int64_t block16 = 2 * (16 * 16 * 9) + 2 * 32;
  EXPECT_EQ(net.num_parameters(), 8 * 3 * 9 + 16 + 2 * block8 + block8to16 + block16 + 170);

  const TensorDict state = net.state_dict();
  std::set<std::string> keys, want;
  for (const auto& [name, _] : state) keys.insert(name);
  for (const auto& n : names_of(net.named_parameters())) want.insert(n);
  for (const auto& n : want_buffers) want.insert(n);
  EXPECT_EQ(keys, want);
  // The dict holds the module's tensors themselves.
  EXPECT_EQ(state.at("fc.weight").impl(), net.fc->weight.impl());
}

TEST(Module, ChildrenAndApplyOrder) {
  TinyResNet net;
  std::vector<std::string> names;
  for (const auto& [name, child] : net.named_children()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"conv1", "bn1", "layer1", "layer2", "head", "fc"}));
  EXPECT_EQ(net.children().size(), 6u);
  EXPECT_EQ(net.children()[2], net.layer1);
  std::vector<std::string> visited;
  net.layer2->apply([&](nn::Module& m) { visited.push_back(m.name()); });
  EXPECT_EQ(visited, (std::vector<std::string>{
                         "Conv2d", "BatchNorm2d", "Conv2d", "BatchNorm2d", "Conv2d",
                         "BatchNorm2d", "Sequential", "BasicBlock", "Conv2d", "BatchNorm2d",
                         "Conv2d", "BatchNorm2d", "BasicBlock", "Sequential"}));
}

TEST(Module, TrainAndEvalReachEveryDescendant) {
  TinyResNet net;
  auto modes = [&] {
    std::set<bool> seen;
    net.apply([&](nn::Module& m) { seen.insert(m.is_training()); });
    return seen;
  };
  EXPECT_EQ(modes(), std::set<bool>{true});
  net.eval();
  EXPECT_EQ(modes(), std::set<bool>{false});
  // In eval mode batch norm reads its running statistics and leaves them as they are.
  manual_seed(1);
  const Tensor x = randn({2, 3, 8, 8});
  const Tensor y1 = net.forward(x), y2 = net.forward(x);
  EXPECT_EQ(y1.to_vector<float>(), y2.to_vector<float>());
  EXPECT_EQ(net.bn1->num_batches_tracked.item<int64_t>(), 0);
  net.train();
  EXPECT_EQ(modes(), std::set<bool>{true});
  net.forward(x);
  EXPECT_EQ(net.bn1->num_batches_tracked.item<int64_t>(), 1);
  net.layer1->eval();  // a subtree alone
  EXPECT_FALSE(net.layer1->at<BasicBlock>(1)->bn2->is_training());
  EXPECT_TRUE(net.layer2->at<BasicBlock>(1)->bn2->is_training());
}

TEST(Module, ZeroGradToNoneOrToZeros) {
  TinyResNet net;
  manual_seed(2);
  sum(net.forward(randn({2, 3, 8, 8}))).backward();
  for (const Tensor& p : net.parameters()) ASSERT_TRUE(p.grad().defined());
  net.zero_grad(/*set_to_none=*/false);
  for (const Tensor& p : net.parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(p.grad().shape(), p.shape());
    for (double v : testing::values(p.grad())) ASSERT_EQ(v, 0);
  }
  net.zero_grad();
  for (const Tensor& p : net.parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(Module, RegistrationErrors) {
  nn::Module m;
  m.register_parameter("w", zeros({2}));
  EXPECT_EQ(error_of([&] { m.register_buffer("w", zeros({2})); }),
            "register_buffer: 'w' is already registered in Module");
  EXPECT_EQ(error_of([&] { m.register_module("w", std::make_shared<nn::ReLU>()); }),
            "register_module: 'w' is already registered in Module");
  EXPECT_EQ(error_of([&] { m.register_parameter("a.b", zeros({2})); }),
            "register_parameter: name 'a.b' in Module contains '.' (dots separate the levels of a "
            "dotted name)");
  EXPECT_EQ(error_of([&] { m.register_parameter("", zeros({2})); }),
            "register_parameter: empty name in Module");
  EXPECT_EQ(error_of([&] { m.register_module("r", std::shared_ptr<nn::ReLU>()); }),
            "register_module: 'r' in Module is null");
  EXPECT_EQ(error_of([&] { m.register_parameter("i", zeros({2}, DType::I64)); }),
            "register_parameter: 'i' in Module is i64[2]; only floating-point parameters can "
            "require grad");
  // A non-trainable integer parameter is fine, and an undefined one is not registered.
  m.register_parameter("steps", zeros({}, DType::I64), /*requires_grad=*/false);
  EXPECT_FALSE(m.register_parameter("none", Tensor()).defined());
  EXPECT_EQ(names_of(m.named_parameters()), (std::vector<std::string>{"w", "steps"}));
}

TEST(Module, TiedTensorsAreListedOnceAndSavedUnderEveryName) {
  auto embed = std::make_shared<nn::Embedding>(10, 4);
  nn::Module tied;  // a GPT's input embedding and output projection share one tensor
  tied.register_parameter("a", embed->weight);
  tied.register_parameter("b", embed->weight);
  EXPECT_EQ(names_of(tied.named_parameters()), std::vector<std::string>{"a"});
  EXPECT_EQ(tied.num_parameters(), 40);
  EXPECT_EQ(tied.state_dict().size(), 2u);
}

TEST(Module, StrPrintsTheTree) {
  nn::Sequential net(std::make_shared<nn::Linear>(4, 3), std::make_shared<nn::ReLU>(),
                     std::make_shared<nn::Sequential>(std::make_shared<nn::Dropout>(0.25)),
                     std::make_shared<nn::Conv2d>(
                         2, 4, 3, nn::Conv2dOptions{.padding = 1, .groups = 2, .bias = false}));
  EXPECT_EQ(net.str(),
            "Sequential(\n"
            "  (0): Linear(in_features=4, out_features=3, bias=true)\n"
            "  (1): ReLU()\n"
            "  (2): Sequential(\n"
            "    (0): Dropout(p=0.25)\n"
            "  )\n"
            "  (3): Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=2, "
            "bias=false)\n"
            ")");
}

TEST(Module, ToCastsFloatTensorsInPlaceForEveryHandle) {
  nn::Sequential net(std::make_shared<nn::Conv2d>(1, 2, 3), std::make_shared<nn::BatchNorm2d>(2));
  const Tensor handle = net.at<nn::Conv2d>(0)->weight;  // a handle held outside the module
  const std::vector<double> before = testing::values(handle);
  manual_seed(3);
  sum(net.forward(randn({1, 1, 5, 5}))).backward();
  net.to(DType::F64);
  EXPECT_EQ(handle.dtype(), DType::F64);
  EXPECT_EQ(testing::values(handle), before);  // f32 values are exact in f64
  for (const Tensor& p : net.parameters()) {
    EXPECT_EQ(p.dtype(), DType::F64);
    EXPECT_FALSE(p.grad().defined());
    EXPECT_TRUE(p.requires_grad());
  }
  auto bn = net.at<nn::BatchNorm2d>(1);
  EXPECT_EQ(bn->running_var.dtype(), DType::F64);
  EXPECT_EQ(bn->num_batches_tracked.dtype(), DType::I64);
  EXPECT_EQ(net.forward(randn({1, 1, 5, 5}, DType::F64)).dtype(), DType::F64);
  EXPECT_EQ(error_of([&] { net.to(DType::I32); }).substr(0, 41),
            "to: i32 is not a floating-point dtype at ");
}

}  // namespace
}  // namespace lt
