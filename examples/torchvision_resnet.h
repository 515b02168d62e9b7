// torchvision's ResNet-18/34/50/101 (torchvision.models.resnet*): the same modules under the
// same names (conv1, bn1, layer1.0.conv1, layer2.0.downsample.0, fc, ...) and the same
// initialization (Kaiming-normal fan-out convs, BatchNorm at 1 and 0, nn.Linear's default fc),
// so that a state_dict exported from torchvision loads strictly. ResNet-50 and -101 use the
// bottleneck block with the stride on its 3x3 conv (torchvision's "ResNet v1.5").
#pragma once
#include <fmt/format.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lt/lt.h"

namespace lt::examples {

namespace torchvision_detail {

inline std::shared_ptr<nn::Conv2d> conv(int64_t in, int64_t out, int64_t k, int64_t stride) {
  auto c = std::make_shared<nn::Conv2d>(
      in, out, k, nn::Conv2dOptions{.stride = stride, .padding = k / 2, .bias = false});
  nn::init::kaiming_normal_(c->weight, 0, nn::init::FanMode::FanOut, nn::init::Nonlinearity::ReLU);
  return c;
}

inline std::shared_ptr<nn::BatchNorm2d> bn(int64_t channels) {
  return std::make_shared<nn::BatchNorm2d>(channels);  // weight 1, bias 0: torchvision's init
}

}  // namespace torchvision_detail

/// A residual block of torchvision's: BasicBlock (two 3x3 convs, expansion 1) or Bottleneck
/// (1x1, 3x3 with the stride, 1x1 to 4x the width).
class TorchvisionBlock : public nn::Module {
 public:
  TorchvisionBlock(bool bottleneck, int64_t in, int64_t planes, int64_t stride) {
    using namespace torchvision_detail;
    const int64_t out = planes * (bottleneck ? 4 : 1);
    if (bottleneck) {
      conv1 = register_module("conv1", conv(in, planes, 1, 1));
      bn1 = register_module("bn1", bn(planes));
      conv2 = register_module("conv2", conv(planes, planes, 3, stride));
      bn2 = register_module("bn2", bn(planes));
      conv3 = register_module("conv3", conv(planes, out, 1, 1));
      bn3 = register_module("bn3", bn(out));
    } else {
      conv1 = register_module("conv1", conv(in, planes, 3, stride));
      bn1 = register_module("bn1", bn(planes));
      conv2 = register_module("conv2", conv(planes, planes, 3, 1));
      bn2 = register_module("bn2", bn(planes));
    }
    relu = register_module("relu", std::make_shared<nn::ReLU>());
    if (stride != 1 || in != out)
      downsample = register_module(
          "downsample", std::make_shared<nn::Sequential>(conv(in, out, 1, stride), bn(out)));
  }

  Tensor forward(const Tensor& x) {
    Tensor h = relu->forward(bn1->forward(conv1->forward(x)));
    h = bn2->forward(conv2->forward(h));
    if (conv3) h = bn3->forward(conv3->forward(relu->forward(h)));
    return relu->forward(h + (downsample ? downsample->forward(x) : x));
  }

  std::shared_ptr<nn::Conv2d> conv1, conv2, conv3;  ///< conv3: bottleneck only
  std::shared_ptr<nn::BatchNorm2d> bn1, bn2, bn3;
  std::shared_ptr<nn::ReLU> relu;
  std::shared_ptr<nn::Sequential> downsample;  ///< 1x1 conv + BatchNorm where the shape changes
};

class TorchvisionResNet : public nn::Module {
 public:
  /// The architectures by torchvision's names: block kind and blocks per stage.
  static const std::map<std::string, std::pair<bool, std::vector<int64_t>>>& archs() {
    static const std::map<std::string, std::pair<bool, std::vector<int64_t>>> a = {
        {"resnet18", {false, {2, 2, 2, 2}}},
        {"resnet34", {false, {3, 4, 6, 3}}},
        {"resnet50", {true, {3, 4, 6, 3}}},
        {"resnet101", {true, {3, 4, 23, 3}}}};
    return a;
  }

  /// torchvision.models.<arch>(num_classes=classes). Throws lt::InputError for another arch.
  TorchvisionResNet(const std::string& arch, int64_t classes = 1000) {
    using namespace torchvision_detail;
    const auto it = archs().find(arch);
    if (it == archs().end())
      throw InputError(fmt::format("unknown --arch {} (resnet18, resnet34, resnet50, resnet101)",
                                   arch));
    const auto& [bottleneck, blocks] = it->second;
    conv1 = register_module("conv1", conv(3, 64, 7, 2));
    bn1 = register_module("bn1", bn(64));
    relu = register_module("relu", std::make_shared<nn::ReLU>());
    maxpool = register_module("maxpool", std::make_shared<nn::MaxPool2d>(3, 2, 1));
    int64_t in = 64;
    for (size_t stage = 0; stage < 4; ++stage) {
      const int64_t planes = 64 << stage;
      auto layer = std::make_shared<nn::Sequential>();
      for (int64_t b = 0; b < blocks[stage]; ++b) {
        const int64_t stride = stage > 0 && b == 0 ? 2 : 1;
        auto block = std::make_shared<TorchvisionBlock>(bottleneck, in, planes, stride);
        residual_blocks.push_back(block);
        layer->push_back(block);
        in = planes * (bottleneck ? 4 : 1);
      }
      layers.push_back(register_module(fmt::format("layer{}", stage + 1), layer));
    }
    avgpool = register_module("avgpool", std::make_shared<nn::AdaptiveAvgPool2d>(1));
    fc = register_module("fc", std::make_shared<nn::Linear>(in, classes));
  }

  /// Logits [N, classes] of images [N, 3, H, W] (H, W >= 32). With checkpoint_blocks each
  /// residual block runs under lt::checkpoint (its activations recomputed in backward).
  Tensor forward(const Tensor& x) {
    Tensor h = maxpool->forward(relu->forward(bn1->forward(conv1->forward(x))));
    if (checkpoint_blocks) {
      for (const auto& block : residual_blocks)
        h = lt::checkpoint([&block](const Tensor& t) { return block->forward(t); }, h);
    } else {
      for (const auto& layer : layers) h = layer->forward(h);
    }
    return fc->forward(flatten(avgpool->forward(h), 1));
  }

  bool checkpoint_blocks = false;

  std::shared_ptr<nn::Conv2d> conv1;
  std::shared_ptr<nn::BatchNorm2d> bn1;
  std::shared_ptr<nn::ReLU> relu;
  std::shared_ptr<nn::MaxPool2d> maxpool;
  std::vector<std::shared_ptr<nn::Sequential>> layers;  ///< layer1..4
  std::vector<std::shared_ptr<TorchvisionBlock>> residual_blocks;  ///< their blocks, in order
  std::shared_ptr<nn::AdaptiveAvgPool2d> avgpool;
  std::shared_ptr<nn::Linear> fc;
};

}  // namespace lt::examples
