// Image padding and CIFAR-style augmentation (random shifted crop, horizontal flip), on the host
// like the batch gather: the results are fresh device data that lazy graphs read as inputs.
#include <fmt/format.h>

#include <vector>

#include "frontend/data/splitmix.h"
#include "frontend/lazy/tracer.h"
#include "frontend/tensor_impl.h"
#include "lt/data.h"

namespace lt::data {
namespace {

const float* image_data(const Tensor& x, const char* what, Loc loc) {
  if (x.rank() != 4 || x.dtype() != DType::F32)
    throw Error(fmt::format("{}: needs f32 images [N, C, H, W], got {} at {}", what,
                            type_str(x.type()), location_str(loc)));
  if (x.impl()->pending()) lazy::sync(x, what, loc);
  LT_CHECK(x.impl()->buffer, "{}: {} holds no data", what, type_str(x.type()));
  return x.impl()->as<float>();
}

void check_pad(int64_t pad, const char* what, Loc loc) {
  if (pad < 0 || pad > 1024)
    throw Error(
        fmt::format("{}: pad must be in [0, 1024], got {} at {}", what, pad, location_str(loc)));
}

}  // namespace

Tensor pad_images(const Tensor& images, int64_t pad, double fill, Loc loc) {
  const float* src = image_data(images, "pad_images", loc);
  check_pad(pad, "pad_images", loc);
  const int64_t n = images.size(0), c = images.size(1), h = images.size(2), w = images.size(3);
  const int64_t oh = h + 2 * pad, ow = w + 2 * pad;
  auto out = make_impl({DType::F32, {n, c, oh, ow}});
  float* dst = out->as<float>();
  for (int64_t p = 0; p < n * c; ++p)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x) {
        const int64_t sy = y - pad, sx = x - pad;
        dst[(p * oh + y) * ow + x] = sy >= 0 && sy < h && sx >= 0 && sx < w
                                         ? src[(p * h + sy) * w + sx]
                                         : static_cast<float>(fill);
      }
  return Tensor(std::move(out));
}

Tensor random_crop_flip(const Tensor& images, int64_t pad, bool flip, double fill, uint64_t seed,
                        int64_t epoch, int64_t batch, int64_t first_row, Loc loc) {
  const float* src = image_data(images, "random_crop_flip", loc);
  check_pad(pad, "random_crop_flip", loc);
  const int64_t n = images.size(0), c = images.size(1), h = images.size(2), w = images.size(3);
  auto out = make_impl({DType::F32, {n, c, h, w}});
  float* dst = out->as<float>();
  if (first_row < 0)
    throw Error(fmt::format("random_crop_flip: first_row must be >= 0, got {} at {}", first_row,
                            location_str(loc)));
  uint64_t batch_state = seed;
  batch_state = splitmix64(batch_state) ^ static_cast<uint64_t>(epoch);
  batch_state = splitmix64(batch_state) ^ static_cast<uint64_t>(batch);
  const auto span = static_cast<uint64_t>(2 * pad + 1);
  for (int64_t i = 0; i < n; ++i) {
    // Each row draws from its own row number, so a replica augmenting its rows alone draws what
    // the whole batch's augmentation would give them.
    uint64_t state = batch_state;
    state = splitmix64(state) ^ static_cast<uint64_t>(first_row + i);
    const int64_t dy = static_cast<int64_t>(below(state, span)) - pad;
    const int64_t dx = static_cast<int64_t>(below(state, span)) - pad;
    const bool mirror = flip && (splitmix64(state) >> 63) != 0;
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* s = src + (i * c + ch) * h * w;
      float* d = dst + (i * c + ch) * h * w;
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          const int64_t sy = y + dy, sx = (mirror ? w - 1 - x : x) + dx;
          d[y * w + x] = sy >= 0 && sy < h && sx >= 0 && sx < w ? s[sy * w + sx]
                                                                : static_cast<float>(fill);
        }
    }
  }
  return Tensor(std::move(out));
}

}  // namespace lt::data
