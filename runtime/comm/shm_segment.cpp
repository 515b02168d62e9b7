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
    : data_(std::exchange(o.data_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      fd_(std::exchange(o.fd_, -1)),
      name_(std::move(o.name_)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  if (this != &o) {
    release();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    fd_ = std::exchange(o.fd_, -1);
    name_ = std::move(o.name_);
  }
  return *this;
}

ShmSegment::~ShmSegment() { release(); }

void ShmSegment::release() {
  if (data_) munmap(data_, static_cast<size_t>(size_));
  if (fd_ >= 0) close(fd_);
  data_ = nullptr;
  size_ = 0;
  fd_ = -1;
}

std::string ShmSegment::map(int fd, const std::string& name, int64_t bytes) {
  void* p = mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    close(fd);
    return fmt::format("mmap of {}: {}", name, std::strerror(err));
  }
  release();
  data_ = static_cast<std::byte*>(p);
  size_ = bytes;
  fd_ = fd;
  name_ = name;
  return "";
}

std::string ShmSegment::create(const std::string& name, int64_t bytes) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return fmt::format("shm_open of {}: {}", name, std::strerror(errno));
  std::string error;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    error = fmt::format("{} bytes for {}: {}", bytes, name, std::strerror(errno));
    close(fd);
  } else {
    error = map(fd, name, bytes);
  }
  if (!error.empty()) shm_unlink(name.c_str());
  return error;
}

std::string ShmSegment::open(const std::string& name, int64_t bytes) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) return fmt::format("shm_open of {}: {}", name, std::strerror(errno));
  return map(fd, name, bytes);
}

std::string ShmSegment::reserve(int64_t offset, int64_t bytes) {
  // posix_fallocate returns the error rather than setting errno.
  const int err = posix_fallocate(fd_, static_cast<off_t>(offset), static_cast<off_t>(bytes));
  if (err == 0) return "";
  return fmt::format("{} bytes for {} in /dev/shm: {}", bytes, name_, std::strerror(err));
}

void ShmSegment::unlink(const std::string& name) { shm_unlink(name.c_str()); }

}  // namespace lt::rt::comm
