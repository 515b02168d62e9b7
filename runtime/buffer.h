// Device memory: one 64-byte-aligned host allocation, shared by every tensor that reads it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace lt::rt {

/// A std allocator aligned like Buffer (64 bytes), for host arrays that kernels read as if they
/// were buffers: Eigen peels the unaligned head of a row with scalar code, whose exp can differ
/// from its packet exp in the last bit and is slower.
template <class T>
struct Aligned64 {
  using value_type = T;
  Aligned64() = default;
  template <class U>
  Aligned64(const Aligned64<U>&) {}
  T* allocate(size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, size_t) { ::operator delete (p, std::align_val_t{64}); }
  bool operator==(const Aligned64&) const = default;
};

class Buffer {
  struct Made {};  // allocate() is the only way in (std::allocate_shared needs a public ctor)

 public:
  /// Data of at most this many bytes (0-d values, a traced step makes hundreds) lives inside
  /// the Buffer object, so such a buffer is one recycled block, not three mallocs.
  static constexpr size_t kInlineBytes = 64;

  static std::shared_ptr<Buffer> allocate(size_t bytes);
  /// A buffer over memory someone else allocated (a numpy array's, a torch tensor's), aligned
  /// to its elements only: compiled kernels, which assume 64 bytes, read such a buffer through
  /// an aligned copy. `owner` keeps the memory alive and is released when the buffer dies; the
  /// bytes are not counted as live.
  static std::shared_ptr<Buffer> wrap(void* data, size_t bytes, std::shared_ptr<void> owner);
  Buffer(Made, void* data, size_t bytes) : data_(data ? data : inline_), bytes_(bytes) {}
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  /// Whether the memory is another owner's (wrap), who may write to it and sees what is written.
  bool external() const { return external_; }

  /// Bytes currently held by live buffers, and the most ever held at once (for metrics).
  static int64_t live_bytes();
  static int64_t peak_bytes();
  /// Freed blocks are kept for reuse by later allocations of the same size, up to this many
  /// bytes in all (0 keeps none); lowering the limit frees what is over it.
  static constexpr size_t kDefaultCacheLimit = size_t{1024} << 20;
  static void set_cache_limit(size_t bytes);
  static size_t cache_limit();
  /// Bytes of freed blocks kept for reuse now.
  static size_t cached_bytes();
  /// Whether new blocks of 2 MiB or more ask for transparent huge pages (default: yes).
  static void set_huge_pages(bool on);
  static bool huge_pages();

  /// Restarts peak tracking from the bytes live now (benchmarks measure one phase at a time).
  static void reset_peak();

 private:
  void* data_;
  size_t bytes_;
  bool external_ = false;
  std::shared_ptr<void> owner_;
  alignas(64) unsigned char inline_[kInlineBytes];
};

}  // namespace lt::rt
