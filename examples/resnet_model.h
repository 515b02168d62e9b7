// ResNet-20 in the CIFAR style (He et al. 2016, section 4.2): a 3x3 conv to 16 channels, three
// stages of three basic blocks (16, 32, 64 channels; the second and third start with stride 2),
// BatchNorm after every conv, a 1x1 conv + BatchNorm projection where a block changes the
// shape, global average pooling and a linear classifier. Convolutions carry no bias (the
// BatchNorm after each has one); weights use Kaiming-normal for ReLU, as torchvision's ResNets.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "lt/lt.h"

namespace lt::examples {

class BasicBlock : public nn::Module {
 public:
  BasicBlock(int64_t in, int64_t out, int64_t stride) {
    conv1 = register_module("conv1", conv(in, out, 3, stride));
    bn1 = register_module("bn1", std::make_shared<nn::BatchNorm2d>(out));
    conv2 = register_module("conv2", conv(out, out, 3, 1));
    bn2 = register_module("bn2", std::make_shared<nn::BatchNorm2d>(out));
    if (stride != 1 || in != out)
      shortcut = register_module(
          "shortcut",
          std::make_shared<nn::Sequential>(conv(in, out, 1, stride),
                                           std::make_shared<nn::BatchNorm2d>(out)));
  }

  Tensor forward(const Tensor& x) {
    Tensor h = relu(bn1->forward(conv1->forward(x)));
    h = bn2->forward(conv2->forward(h));
    const Tensor skip = shortcut ? shortcut->forward(x) : x;
    return relu(h + skip);
  }

  static std::shared_ptr<nn::Conv2d> conv(int64_t in, int64_t out, int64_t k, int64_t stride) {
    auto c = std::make_shared<nn::Conv2d>(
        in, out, k, nn::Conv2dOptions{.stride = stride, .padding = k / 2, .bias = false});
    nn::init::kaiming_normal_(c->weight, 0, nn::init::FanMode::FanOut,
                              nn::init::Nonlinearity::ReLU);
    return c;
  }

  std::shared_ptr<nn::Conv2d> conv1, conv2;
  std::shared_ptr<nn::BatchNorm2d> bn1, bn2;
  std::shared_ptr<nn::Sequential> shortcut;  ///< 1x1 conv + BatchNorm where the shape changes
};

class ResNet20 : public nn::Module {
 public:
  explicit ResNet20(int64_t in_channels = 1, int64_t classes = 10) {
    conv1 = register_module("conv1", BasicBlock::conv(in_channels, 16, 3, 1));
    bn1 = register_module("bn1", std::make_shared<nn::BatchNorm2d>(16));
    int64_t in = 16;
    for (int64_t stage = 0; stage < 3; ++stage) {
      const int64_t out = 16 << stage;
      auto layer = std::make_shared<nn::Sequential>();
      for (int64_t b = 0; b < 3; ++b) {
        layer->push_back(std::make_shared<BasicBlock>(in, out, stage > 0 && b == 0 ? 2 : 1));
        in = out;
      }
      layers.push_back(register_module("layer" + std::to_string(stage + 1), layer));
    }
    pool = register_module("avgpool", std::make_shared<nn::AdaptiveAvgPool2d>(1));
    fc = register_module("fc", std::make_shared<nn::Linear>(64, classes));
  }

  /// Logits [N, classes] of images [N, C, 32, 32].
  Tensor forward(const Tensor& x) {
    Tensor h = relu(bn1->forward(conv1->forward(x)));
    for (const auto& layer : layers) h = layer->forward(h);
    return fc->forward(flatten(pool->forward(h), 1));
  }

  std::shared_ptr<nn::Conv2d> conv1;
  std::shared_ptr<nn::BatchNorm2d> bn1;
  std::vector<std::shared_ptr<nn::Sequential>> layers;  ///< layer1..3: three blocks each
  std::shared_ptr<nn::AdaptiveAvgPool2d> pool;
  std::shared_ptr<nn::Linear> fc;
};

}  // namespace lt::examples
