// A small CNN for 28x28 inputs: conv32-pool-conv64-pool-fc128-fc10 (3x3 convs, padding 1, ReLU,
// 2x2 max pools), as in the step benchmark of the compiler issue.
#pragma once
#include <cmath>
#include <vector>

#include "lt/lt.h"

namespace lt::examples {

class Cnn {
 public:
  explicit Cnn(int64_t in_channels = 1) {
    c1_ = param({32, in_channels, 3, 3}, in_channels * 9);
    b1_ = param({32}, in_channels * 9);
    c2_ = param({64, 32, 3, 3}, 32 * 9);
    b2_ = param({64}, 32 * 9);
    f1_ = param({128, 64 * 7 * 7}, 64 * 7 * 7);
    fb1_ = param({128}, 64 * 7 * 7);
    f2_ = param({10, 128}, 128);
    fb2_ = param({10}, 128);
  }

  /// Logits [N,10] of images [N,C,28,28].
  Tensor forward(const Tensor& x) const {
    const Conv2dOptions same{{1, 1}, {1, 1}, {1, 1}, 1};
    Tensor h = max_pool2d(relu(conv2d(x, c1_, b1_, same)));
    h = max_pool2d(relu(conv2d(h, c2_, b2_, same)));
    h = relu(linear(flatten(h, 1), f1_, fb1_));
    return linear(h, f2_, fb2_);
  }

  std::vector<Tensor> parameters() const { return {c1_, b1_, c2_, b2_, f1_, fb1_, f2_, fb2_}; }

 private:
  static Tensor param(Shape shape, int64_t fan_in) {
    const double bound = std::sqrt(6.0 / static_cast<double>(fan_in));
    return ((rand(std::move(shape)) * 2.0 - 1.0) * bound).requires_grad_();
  }
  Tensor c1_, b1_, c2_, b2_, f1_, fb1_, f2_, fb2_;
};

}  // namespace lt::examples
