// Device memory: one 64-byte-aligned host allocation, shared by every tensor that reads it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace lt::rt {

class Buffer {
  struct Made {};  // allocate() is the only way in (std::allocate_shared needs a public ctor)

 public:
  /// Data of at most this many bytes (0-d values, a traced step makes hundreds) lives inside
  /// the Buffer object, so such a buffer is one recycled block, not three mallocs.
  static constexpr size_t kInlineBytes = 64;

  static std::shared_ptr<Buffer> allocate(size_t bytes);
  Buffer(Made, void* data, size_t bytes) : data_(data ? data : inline_), bytes_(bytes) {}
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

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

  /// Restarts peak tracking from the bytes live now (benchmarks measure one phase at a time).
  static void reset_peak();

 private:
  void* data_;
  size_t bytes_;
  alignas(64) unsigned char inline_[kInlineBytes];
};

}  // namespace lt::rt
