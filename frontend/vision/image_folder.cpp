// ImageFolder: the class folders and their JPEG files, found once and sorted, so that example i
// is the same file on every rank and in every run.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "frontend/tensor_impl.h"
#include "lt/vision.h"

namespace lt::vision {
namespace {

bool is_jpeg(const std::filesystem::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return ext == ".jpg" || ext == ".jpeg";
}

}  // namespace

ImageFolder::ImageFolder(std::string root) : root_(std::move(root)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(root_, ec))
    throw InputError(fmt::format("ImageFolder: {} is not a directory", root_));
  for (const fs::directory_entry& e : fs::directory_iterator(root_, ec))
    if (e.is_directory()) classes_.push_back(e.path().filename().string());
  std::sort(classes_.begin(), classes_.end());
  for (size_t c = 0; c < classes_.size(); ++c) {
    const std::string& name = classes_[c];
    std::vector<std::string> files;
    for (const fs::directory_entry& e :
         fs::recursive_directory_iterator(fs::path(root_) / name, ec))
      if (e.is_regular_file() && is_jpeg(e.path())) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    // As torchvision's: a class without images would shift every later class's index.
    if (files.empty())
      throw InputError(fmt::format("ImageFolder: found no valid file for the class {} in {} "
                                   "(supported extensions: .jpg, .jpeg)",
                                   name, root_));
    for (std::string& f : files) samples_.emplace_back(std::move(f), static_cast<int64_t>(c));
  }
  if (samples_.empty())
    throw InputError(fmt::format("ImageFolder: {} has no class folders (root/<class>/<image>)",
                                 root_));
}

const std::pair<std::string, int64_t>& ImageFolder::sample(int64_t index) const {
  if (index < 0 || index >= size())
    throw InputError(fmt::format("ImageFolder: index {} is out of range for {} images", index,
                                 size()));
  return samples_[static_cast<size_t>(index)];
}

data::Example ImageFolder::get(int64_t index) const {
  const auto& [path, label] = sample(index);
  auto target = make_impl({DType::I64, {}});
  *target->as<int64_t>() = label;
  return {to_tensor(read_jpeg(path)), Tensor(std::move(target))};
}

}  // namespace lt::vision
