// A POSIX shared-memory object (shm_open) mapped into this process: the memory the ranks of one
// host share for their all-reduces (shm_all_reduce.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace lt::rt::comm {

class ShmSegment {
 public:
  ShmSegment() = default;
  ShmSegment(ShmSegment&& o) noexcept;
  ShmSegment& operator=(ShmSegment&& o) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  /// Creates the object `name` ("/..."; an existing one is an error), zero-filled, of `bytes`
  /// bytes, and maps it. Returns "" or what failed (the name is then removed again).
  std::string create(const std::string& name, int64_t bytes);
  /// Maps the existing object `name` of `bytes` bytes. Returns "" or what failed.
  std::string open(const std::string& name, int64_t bytes);
  /// Allocates the pages of [offset, offset + bytes) now, so that a full /dev/shm is an error
  /// here rather than a SIGBUS at the first touch (each rank reserves its own part: the pages
  /// count against the memory of the process that allocates them). Returns "" or what failed.
  std::string reserve(int64_t offset, int64_t bytes);
  /// Removes the name (mappings stay valid; the memory goes with the last one).
  static void unlink(const std::string& name);

  std::byte* data() const { return data_; }
  int64_t size() const { return size_; }

 private:
  std::string map(int fd, const std::string& name, int64_t bytes);
  void release();

  std::byte* data_ = nullptr;
  int64_t size_ = 0;
  int fd_ = -1;
  std::string name_;
};

}  // namespace lt::rt::comm
