// lt::vision, as torchvision beside torch: images read from JPEG files (libjpeg-turbo), a
// Dataset over a folder in ImageFolder's layout, and the transforms of torchvision's ImageNet
// recipe (RandomResizedCrop, horizontal flip, Resize + CenterCrop, Normalize) on the host. A
// separate library (target lazytrain::vision) so that the engine itself needs no JPEG codec.
//   auto train = std::make_shared<vision::ImageFolder>("/data/imagenet/train");
//   // example i: {f32[3, H, W] pixels in [0, 1], i64[] class index}
//   vision::Rng rng({seed, epoch, batch, row});
//   Tensor x = vision::normalize(vision::random_resized_crop(image, 224, rng));
#pragma once
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "lt/data.h"

namespace lt::vision {

/// splitmix64 over a seed made of several numbers: every draw depends on those numbers alone,
/// the same on every platform, thread and rank (std:: distributions differ between libraries).
class Rng {
 public:
  explicit Rng(std::initializer_list<uint64_t> seed);
  uint64_t next();
  double uniform(double lo, double hi);  ///< in [lo, hi)
  int64_t below(int64_t n);              ///< in [0, n)
  double normal();                       ///< N(0, 1)

 private:
  uint64_t state_;
};

/// An 8-bit RGB image, rows of interleaved R, G, B.
struct Image {
  int64_t height = 0, width = 0;
  std::vector<uint8_t> rgb;
};

/// Decodes a JPEG (grayscale and CMYK are converted to RGB). Throws lt::InputError naming
/// `what` (the file) and libjpeg's message for data that is not a JPEG it can read.
Image decode_jpeg(std::span<const uint8_t> bytes, const std::string& what);
Image read_jpeg(const std::string& path);
/// Writes `image` as a baseline JPEG of `quality` (1..100), atomically.
void write_jpeg(const std::string& path, const Image& image, int quality = 90);

/// f32[3, H, W] with values in [0, 1] (torchvision's ToTensor).
Tensor to_tensor(const Image& image);

/// torchvision.datasets.ImageFolder: root/<class>/<file>.{jpg,jpeg} (case-insensitive), classes
/// sorted by name and indexed from 0, files sorted by path within each class. Example i is
/// {to_tensor(read_jpeg(file i)), i64[] class}. The constructor throws lt::InputError for a
/// missing root or one without any class folder holding an image.
class ImageFolder final : public data::Dataset {
 public:
  explicit ImageFolder(std::string root);
  int64_t size() const override { return static_cast<int64_t>(samples_.size()); }
  data::Example get(int64_t index) const override;

  const std::string& root() const { return root_; }
  const std::vector<std::string>& classes() const { return classes_; }
  /// File i's path and class index.
  const std::pair<std::string, int64_t>& sample(int64_t index) const;

 private:
  std::string root_;
  std::vector<std::string> classes_;
  std::vector<std::pair<std::string, int64_t>> samples_;
};

/// The crop box of torchvision's RandomResizedCrop.get_params: up to 10 draws of an area
/// fraction in `scale` and a log-uniform aspect ratio in `ratio`, the first box that fits; else
/// the whole image cropped to the nearest ratio in range, centred.
struct CropBox {
  int64_t top = 0, left = 0, height = 0, width = 0;
};
CropBox random_resized_crop_box(int64_t height, int64_t width, Rng& rng,
                                std::pair<double, double> scale = {0.08, 1.0},
                                std::pair<double, double> ratio = {3.0 / 4.0, 4.0 / 3.0});

/// Crop `box` of an image f32[C, H, W], resized to [C, out_h, out_w] by bilinear interpolation
/// with antialiasing when it shrinks (a triangle filter as wide as the scale, as PIL's and
/// torchvision's antialiased bilinear resize). Throws lt::Error for a box outside the image.
Tensor resized_crop(const Tensor& image, const CropBox& box, int64_t out_h, int64_t out_w,
                    Loc loc = Loc::current());
/// RandomResizedCrop(size): random_resized_crop_box, then resized_crop to size x size.
Tensor random_resized_crop(const Tensor& image, int64_t size, Rng& rng, Loc loc = Loc::current());
/// Resize(size): the shorter side to `size`, the other in proportion (truncated, as
/// torchvision), antialiased bilinear.
Tensor resize(const Tensor& image, int64_t size, Loc loc = Loc::current());
/// CenterCrop(size): the central size x size (torchvision's rounding of the offsets).
Tensor center_crop(const Tensor& image, int64_t size, Loc loc = Loc::current());
/// RandomHorizontalFlip(p): mirrored left-right with probability p.
Tensor random_horizontal_flip(const Tensor& image, Rng& rng, double p = 0.5,
                              Loc loc = Loc::current());

/// ImageNet's per-channel mean and standard deviation of [0, 1] pixels (torchvision's recipe).
inline constexpr float kImageNetMean[3] = {0.485f, 0.456f, 0.406f};
inline constexpr float kImageNetStd[3] = {0.229f, 0.224f, 0.225f};
/// Normalize(mean, std) of f32[3, H, W], ImageNet's constants by default.
Tensor normalize(const Tensor& image, std::span<const float, 3> mean = kImageNetMean,
                 std::span<const float, 3> std = kImageNetStd, Loc loc = Loc::current());

}  // namespace lt::vision
