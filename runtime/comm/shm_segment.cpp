#include "runtime/comm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace lt::rt::comm {

ShmSegment::ShmSegment(ShmSegment&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  if (this != &o) {
    release();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

ShmSegment::~ShmSegment() { release(); }

void ShmSegment::release() {
  if (data_) munmap(data_, static_cast<size_t>(size_));
  data_ = nullptr;
  size_ = 0;
}

std::string ShmSegment::map(int fd, const std::string& name, int64_t bytes) {
  void* p = mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  close(fd);
  if (p == MAP_FAILED) return fmt::format("mmap of {}: {}", name, std::strerror(err));
  release();
  data_ = static_cast<std::byte*>(p);
  size_ = bytes;
  return "";
}

std::string ShmSegment::create(const std::string& name, int64_t bytes) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return fmt::format("shm_open of {}: {}", name, std::strerror(errno));
  // posix_fallocate returns the error rather than setting errno.
  if (const int err = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); err != 0) {
    close(fd);
    shm_unlink(name.c_str());
    return fmt::format("{} bytes for {} in /dev/shm: {}", bytes, name, std::strerror(err));
  }
  return map(fd, name, bytes);
}

std::string ShmSegment::open(const std::string& name, int64_t bytes) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) return fmt::format("shm_open of {}: {}", name, std::strerror(errno));
  return map(fd, name, bytes);
}

void ShmSegment::unlink(const std::string& name) { shm_unlink(name.c_str()); }

}  // namespace lt::rt::comm
