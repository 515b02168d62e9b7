#include "frontend/io/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>

#include "frontend/io/atomic_file_testing.h"
#include "ir/error.h"

namespace lt::io {
namespace {

struct Interrupt {
  uint64_t after_bytes = 0;
  void (*stop)() = nullptr;
};
Interrupt g_interrupt;

std::string errno_text() { return std::system_category().message(errno); }

/// Fires the test hook when the file holds exactly its byte count.
void maybe_interrupt(uint64_t written) {
  if (g_interrupt.stop && g_interrupt.after_bytes == written)
    std::exchange(g_interrupt.stop, nullptr)();
}

}  // namespace

void testing::interrupt_writes_after(uint64_t after_bytes, void (*stop)()) {
  g_interrupt = {after_bytes, stop};
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  const std::filesystem::path p(path_);
  dir_ = p.parent_path().empty() ? "." : p.parent_path().string();
  temp_ = (std::filesystem::path(dir_) /
           fmt::format(".{}.tmp.{}", p.filename().string(), static_cast<long>(getpid())))
              .string();
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) throw Error(fmt::format("cannot create {}: {}", temp_, errno_text()));
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  close_fd();
  ::unlink(temp_.c_str());
}

void AtomicFile::close_fd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void AtomicFile::write(const void* data, uint64_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    maybe_interrupt(written_);
    uint64_t chunk = n;
    if (g_interrupt.stop && g_interrupt.after_bytes > written_)
      chunk = std::min(chunk, g_interrupt.after_bytes - written_);
    const ssize_t got = ::write(fd_, p, chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw Error(fmt::format("cannot write {}: {}", temp_, errno_text()));
    p += got;
    n -= static_cast<uint64_t>(got);
    written_ += static_cast<uint64_t>(got);
  }
}

void AtomicFile::commit() {
  maybe_interrupt(written_);
  if (::fsync(fd_) != 0) throw Error(fmt::format("cannot sync {}: {}", temp_, errno_text()));
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) throw Error(fmt::format("cannot close {}: {}", temp_, errno_text()));
  if (::rename(temp_.c_str(), path_.c_str()) != 0)
    throw Error(fmt::format("cannot rename {} to {}: {}", temp_, path_, errno_text()));
  committed_ = true;
  // The rename is in the directory's data: sync it too, or a power loss may undo it.
  const int dir = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) throw Error(fmt::format("cannot open directory {}: {}", dir_, errno_text()));
  const int synced = ::fsync(dir);
  const int err = errno;
  ::close(dir);
  if (synced != 0)
    throw Error(
        fmt::format("cannot sync directory {}: {}", dir_, std::system_category().message(err)));
}

}  // namespace lt::io
