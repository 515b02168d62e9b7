// Scratch for one image of a kernel's output when the output is not written whole (OutputBlocks).
// Kernel-internal.
#pragma once
#include <cstdint>
#include <memory>

namespace lt::rt {

/// One image's worth of scratch, placed so that its address minus the image's element offset is
/// 64-byte aligned (as OutputBlocks promises).
template <class T>
class ImageScratch {
 public:
  explicit ImageScratch(int64_t elems)
      : raw_(elems > 0 ? new char[elems * sizeof(T) + 2 * kAlign] : nullptr) {}
  T* at(int64_t offset) {
    const auto base = (reinterpret_cast<uintptr_t>(raw_.get()) + kAlign - 1) / kAlign * kAlign;
    return reinterpret_cast<T*>(base + (offset * sizeof(T)) % kAlign);
  }

 private:
  static constexpr uintptr_t kAlign = 64;
  std::unique_ptr<char[]> raw_;
};

}  // namespace lt::rt
