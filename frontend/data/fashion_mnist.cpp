// Fashion-MNIST from the IDX files of Debian's dataset-fashion-mnist package (or any directory
// holding the four files, gzipped or not).
#include <fmt/format.h>

#include <filesystem>

#include "frontend/data/idx.h"
#include "frontend/options/store.h"
#include "frontend/tensor_impl.h"
#include "lt/data.h"
#include "lt/options.h"

namespace lt::data {
namespace {

constexpr int64_t kSide = 28;
constexpr int64_t kClasses = 10;

/// dir/name.gz, else dir/name; the error names both so the user sees what was looked for.
std::string find_file(const std::string& dir, const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const std::string& candidate : {name + ".gz", name}) {
    const fs::path p = fs::path(dir) / candidate;
    if (fs::exists(p, ec)) return p.string();
  }
  throw InputError(fmt::format(
      "load_fashion_mnist: no {0}.gz or {0} in {1} (install the dataset-fashion-mnist package or "
      "point LT_FASHION_MNIST_DIR at a directory holding the IDX files)",
      name, dir));
}

Tensor images_tensor(const IdxArray& a, const std::string& path, bool normalize) {
  if (a.dims.size() != 3 || a.dims[1] != kSide || a.dims[2] != kSide)
    throw InputError(fmt::format(
        "load_fashion_mnist: {}: expected images of dims [N,28,28], got {}", path,
        shape_str(a.dims)));
  auto impl = make_impl({DType::F32, {a.dims[0], kSide * kSide}});
  // One affine map from a byte: x/255, then optionally (x - mean)/std.
  const double scale = normalize ? 1.0 / (255.0 * kFashionMnistStd) : 1.0 / 255.0;
  const double shift = normalize ? -kFashionMnistMean / kFashionMnistStd : 0.0;
  float* out = impl->as<float>();
  for (size_t i = 0; i < a.bytes.size(); ++i)
    out[i] = static_cast<float>(a.bytes[i] * scale + shift);
  return Tensor(std::move(impl));
}

Tensor labels_tensor(const IdxArray& a, const std::string& path) {
  if (a.dims.size() != 1)
    throw InputError(fmt::format("load_fashion_mnist: {}: expected labels of dims [N], got {}",
                                 path, shape_str(a.dims)));
  auto impl = make_impl({DType::I64, {a.dims[0]}});
  int64_t* out = impl->as<int64_t>();
  for (size_t i = 0; i < a.bytes.size(); ++i) {
    if (a.bytes[i] >= kClasses)
      throw InputError(fmt::format("load_fashion_mnist: {}: label {} of item {} is not in [0,{})",
                                   path, a.bytes[i], i, kClasses));
    out[i] = a.bytes[i];
  }
  return Tensor(std::move(impl));
}

}  // namespace

std::string fashion_mnist_dir() {
  init();
  return options::text(options::Setting::FashionMnistDir);
}

TensorDataset load_fashion_mnist(Split split, const FashionMnistOptions& options) {
  const std::string dir = options.dir.empty() ? fashion_mnist_dir() : options.dir;
  const std::string prefix = split == Split::Train ? "train" : "t10k";
  const std::string images_path = find_file(dir, prefix + "-images-idx3-ubyte");
  const std::string labels_path = find_file(dir, prefix + "-labels-idx1-ubyte");
  const IdxArray images = read_idx(images_path, options.limit);
  const IdxArray labels = read_idx(labels_path, options.limit);
  if (images.dims[0] != labels.dims[0])
    throw InputError(fmt::format("load_fashion_mnist: {} holds {} images but {} holds {} labels",
                                 images_path, images.dims[0], labels_path, labels.dims[0]));
  return TensorDataset{images_tensor(images, images_path, options.normalize),
                 labels_tensor(labels, labels_path)};
}

}  // namespace lt::data
