// A small CNN for 28x28 inputs: conv32-pool-conv64-pool-fc128-fc10 (3x3 convs, padding 1, ReLU,
// 2x2 max pools), as in the step benchmark of the compiler issue.
#pragma once
#include <cmath>
#include <memory>

#include "lt/lt.h"
#include "lt/nn.h"

namespace lt::examples {

class Cnn : public nn::Module {
 public:
  explicit Cnn(int64_t in_channels = 1) {
    const nn::Conv2dOptions same{.padding = 1};
    conv1 = register_module("conv1", std::make_shared<nn::Conv2d>(in_channels, 32, 3, same));
    conv2 = register_module("conv2", std::make_shared<nn::Conv2d>(32, 64, 3, same));
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(64 * 7 * 7, 128));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(128, 10));
    // Kaiming (He) uniform for ReLU, U(+-sqrt(6 / fan_in)), for weights and biases alike.
    auto he_uniform = [](const Tensor& w, const Tensor& b) {
      const auto fan_in = static_cast<double>(nn::init::fan_in_and_fan_out(w).first);
      const double bound = std::sqrt(6.0 / fan_in);
      nn::init::uniform_(w, -bound, bound);
      nn::init::uniform_(b, -bound, bound);
    };
    he_uniform(conv1->weight, conv1->bias);
    he_uniform(conv2->weight, conv2->bias);
    he_uniform(fc1->weight, fc1->bias);
    he_uniform(fc2->weight, fc2->bias);
  }

  /// Logits [N,10] of images [N,C,28,28].
  Tensor forward(const Tensor& x) {
    Tensor h = max_pool2d(relu(conv1->forward(x)));
    h = max_pool2d(relu(conv2->forward(h)));
    h = relu(fc1->forward(flatten(h, 1)));
    return fc2->forward(h);
  }

  std::shared_ptr<nn::Conv2d> conv1, conv2;
  std::shared_ptr<nn::Linear> fc1, fc2;
};

}  // namespace lt::examples
