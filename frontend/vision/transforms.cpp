// torchvision's ImageNet transforms on host images f32[C, H, W]. Resizing is separable: each
// output pixel of an axis is a weighted sum of the input pixels under a triangle filter centred
// on it and widened by the shrink factor (PIL's antialiased bilinear), so that downscaling by 4
// averages 4 pixels instead of sampling 2.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "frontend/lazy/tracer.h"
#include "frontend/tensor_impl.h"
#include "frontend/views.h"
#include "lt/vision.h"

namespace lt::vision {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct Planes {
  const float* data;
  int64_t c, h, w;
};

Planes planes(const Tensor& x, const char* what, Loc loc) {
  if (x.rank() != 3 || x.dtype() != DType::F32)
    throw Error(fmt::format("{}: needs an f32 image [C, H, W], got {} at {}", what,
                            type_str(x.type()), location_str(loc)));
  if (x.impl()->pending()) lazy::sync(x, what, loc);
  refresh(x);
  LT_CHECK(x.impl()->buffer, "{}: {} holds no data", what, type_str(x.type()));
  return {x.impl()->as<float>(), x.size(0), x.size(1), x.size(2)};
}

/// An axis's resampling: output i reads inputs [first[i], first[i] + weights[i].size()).
struct Taps {
  std::vector<int64_t> first;
  std::vector<std::vector<float>> weights;
};

/// PIL's precompute_coeffs for the bilinear (triangle) filter, over [start, start + in).
Taps taps(int64_t start, int64_t in, int64_t out) {
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  const double filter_scale = std::max(scale, 1.0), support = filter_scale;
  Taps t;
  for (int64_t i = 0; i < out; ++i) {
    const double center = (static_cast<double>(i) + 0.5) * scale;
    const auto lo = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const auto hi = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in);
    std::vector<float> w;
    double total = 0;
    for (int64_t j = lo; j < hi; ++j) {
      const double d = std::abs((static_cast<double>(j) - center + 0.5) / filter_scale);
      const double v = d < 1 ? 1 - d : 0;
      w.push_back(static_cast<float>(v));
      total += v;
    }
    for (float& v : w) v = static_cast<float>(v / total);
    t.first.push_back(start + lo);
    t.weights.push_back(std::move(w));
  }
  return t;
}

Tensor new_image(int64_t c, int64_t h, int64_t w) {
  return Tensor(make_impl({DType::F32, {c, h, w}}));
}

void check_size(int64_t size, const char* what, Loc loc) {
  if (size < 1 || size > 1 << 16)
    throw Error(fmt::format("{}: size must be in [1, 65536], got {} at {}", what, size,
                            location_str(loc)));
}

}  // namespace

Rng::Rng(std::initializer_list<uint64_t> seed) : state_(0x6c7a7472u) {
  for (uint64_t s : seed) state_ = splitmix64(state_) ^ s;
}

uint64_t Rng::next() { return splitmix64(state_); }

double Rng::uniform(double lo, double hi) {
  return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
}

int64_t Rng::below(int64_t n) {
  return static_cast<int64_t>(
      (static_cast<unsigned __int128>(next()) * static_cast<uint64_t>(n)) >> 64);
}

double Rng::normal() {  // Box-Muller; 1 - u keeps the logarithm finite
  const double u = uniform(0, 1), v = uniform(0, 1);
  return std::sqrt(-2 * std::log(1 - u)) * std::cos(2 * M_PI * v);
}

Tensor to_tensor(const Image& image) {
  Tensor out = new_image(3, image.height, image.width);
  float* dst = out.impl()->as<float>();
  const int64_t plane = image.height * image.width;
  for (int64_t p = 0; p < plane; ++p)
    for (int64_t c = 0; c < 3; ++c)
      dst[c * plane + p] = static_cast<float>(image.rgb[static_cast<size_t>(p * 3 + c)]) / 255.f;
  return out;
}

CropBox random_resized_crop_box(int64_t height, int64_t width, Rng& rng,
                                std::pair<double, double> scale,
                                std::pair<double, double> ratio) {
  const double area = static_cast<double>(height * width);
  const double log_lo = std::log(ratio.first), log_hi = std::log(ratio.second);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * rng.uniform(scale.first, scale.second);
    const double aspect = std::exp(rng.uniform(log_lo, log_hi));
    const auto w = static_cast<int64_t>(std::nearbyint(std::sqrt(target * aspect)));
    const auto h = static_cast<int64_t>(std::nearbyint(std::sqrt(target / aspect)));
    if (w > 0 && w <= width && h > 0 && h <= height)
      return {rng.below(height - h + 1), rng.below(width - w + 1), h, w};
  }
  const double in_ratio = static_cast<double>(width) / static_cast<double>(height);
  int64_t w = width, h = height;
  if (in_ratio < ratio.first)
    h = static_cast<int64_t>(std::nearbyint(static_cast<double>(w) / ratio.first));
  else if (in_ratio > ratio.second)
    w = static_cast<int64_t>(std::nearbyint(static_cast<double>(h) * ratio.second));
  return {(height - h) / 2, (width - w) / 2, h, w};
}

Tensor resized_crop(const Tensor& image, const CropBox& box, int64_t out_h, int64_t out_w,
                    Loc loc) {
  const Planes in = planes(image, "resized_crop", loc);
  check_size(out_h, "resized_crop", loc);
  check_size(out_w, "resized_crop", loc);
  if (box.top < 0 || box.left < 0 || box.height < 1 || box.width < 1 ||
      box.top + box.height > in.h || box.left + box.width > in.w)
    throw Error(fmt::format("resized_crop: box (top {}, left {}, {}x{}) is not inside the {}x{} "
                            "image at {}",
                            box.top, box.left, box.height, box.width, in.h, in.w,
                            location_str(loc)));
  const Taps across = taps(box.left, box.width, out_w), down = taps(box.top, box.height, out_h);
  Tensor out = new_image(in.c, out_h, out_w);
  float* dst = out.impl()->as<float>();
  std::vector<float> rows(static_cast<size_t>(box.height * out_w));  // one plane, resized across
  for (int64_t ch = 0; ch < in.c; ++ch) {
    const float* src = in.data + ch * in.h * in.w;
    for (int64_t y = 0; y < box.height; ++y) {
      const float* line = src + (box.top + y) * in.w;
      for (int64_t x = 0; x < out_w; ++x) {
        const std::vector<float>& w = across.weights[static_cast<size_t>(x)];
        const float* s = line + across.first[static_cast<size_t>(x)];
        float acc = 0;
        for (size_t k = 0; k < w.size(); ++k) acc += w[k] * s[k];
        rows[static_cast<size_t>(y * out_w + x)] = acc;
      }
    }
    float* plane = dst + ch * out_h * out_w;
    for (int64_t y = 0; y < out_h; ++y) {
      const std::vector<float>& w = down.weights[static_cast<size_t>(y)];
      const int64_t first = down.first[static_cast<size_t>(y)] - box.top;
      for (int64_t x = 0; x < out_w; ++x) {
        float acc = 0;
        for (size_t k = 0; k < w.size(); ++k)
          acc += w[k] * rows[static_cast<size_t>((first + static_cast<int64_t>(k)) * out_w + x)];
        plane[y * out_w + x] = acc;
      }
    }
  }
  return out;
}

Tensor random_resized_crop(const Tensor& image, int64_t size, Rng& rng, Loc loc) {
  const Planes in = planes(image, "random_resized_crop", loc);
  return resized_crop(image, random_resized_crop_box(in.h, in.w, rng), size, size, loc);
}

Tensor resize(const Tensor& image, int64_t size, Loc loc) {
  const Planes in = planes(image, "resize", loc);
  check_size(size, "resize", loc);
  int64_t h = size, w = size;  // torchvision: the long side is size * long / short, truncated
  if (in.h < in.w) w = size * in.w / in.h;
  else if (in.w < in.h) h = size * in.h / in.w;
  return resized_crop(image, {0, 0, in.h, in.w}, h, w, loc);
}

Tensor center_crop(const Tensor& image, int64_t size, Loc loc) {
  const Planes in = planes(image, "center_crop", loc);
  check_size(size, "center_crop", loc);
  if (size > in.h || size > in.w)
    throw Error(fmt::format("center_crop: {}x{} does not fit in the {}x{} image at {}", size,
                            size, in.h, in.w, location_str(loc)));
  // torchvision: int(round((H - size) / 2.0)), Python's round halving to even.
  auto offset = [size](int64_t n) {
    return static_cast<int64_t>(std::nearbyint(static_cast<double>(n - size) / 2.0));
  };
  const int64_t top = offset(in.h), left = offset(in.w);
  Tensor out = new_image(in.c, size, size);
  float* dst = out.impl()->as<float>();
  for (int64_t ch = 0; ch < in.c; ++ch)
    for (int64_t y = 0; y < size; ++y)
      std::copy_n(in.data + (ch * in.h + top + y) * in.w + left, size,
                  dst + (ch * size + y) * size);
  return out;
}

Tensor random_horizontal_flip(const Tensor& image, Rng& rng, double p, Loc loc) {
  const Planes in = planes(image, "random_horizontal_flip", loc);
  Tensor out = new_image(in.c, in.h, in.w);
  float* dst = out.impl()->as<float>();
  const bool mirror = rng.uniform(0, 1) < p;
  for (int64_t r = 0; r < in.c * in.h; ++r)
    for (int64_t x = 0; x < in.w; ++x)
      dst[r * in.w + x] = in.data[r * in.w + (mirror ? in.w - 1 - x : x)];
  return out;
}

Tensor normalize(const Tensor& image, std::span<const float, 3> mean,
                 std::span<const float, 3> std, Loc loc) {
  const Planes in = planes(image, "normalize", loc);
  if (in.c != 3)
    throw Error(fmt::format("normalize: needs 3 channels, got {} at {}", in.c,
                            location_str(loc)));
  Tensor out = new_image(in.c, in.h, in.w);
  float* dst = out.impl()->as<float>();
  const int64_t plane = in.h * in.w;
  for (int64_t ch = 0; ch < 3; ++ch)
    for (int64_t p = 0; p < plane; ++p)
      dst[ch * plane + p] = (in.data[ch * plane + p] - mean[ch]) / std[ch];
  return out;
}

}  // namespace lt::vision
