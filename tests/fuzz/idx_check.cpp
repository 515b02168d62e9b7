#include "tests/fuzz/idx_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <system_error>

#include "frontend/data/idx.h"
#include "ir/error.h"
#include "tests/fuzz/check_failure.h"

namespace lt::fuzz {
namespace {

/// One in-memory file for the process's inputs (no disk traffic per input).
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("lt-fuzz-idx", 0)) {
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "memfd_create");
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  /// Replaces the contents; returns a path that opens them.
  std::string write(std::string_view bytes) {
    if (ftruncate(fd_, 0) != 0 ||
        pwrite(fd_, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
      throw std::system_error(errno, std::generic_category(), "writing the memory file");
    return fmt::format("/proc/self/fd/{}", fd_);
  }

 private:
  int fd_;
};

/// The plain IDX format read directly: nullopt where the file is malformed.
std::optional<data::IdxArray> read_plain(std::string_view f, int64_t max_items) {
  auto byte = [&](size_t i) { return static_cast<uint8_t>(f[i]); };
  if (f.size() < 4 || byte(0) != 0 || byte(1) != 0 || byte(2) != 8) return std::nullopt;
  const size_t nd = byte(3);
  if (nd < 1 || nd > 8 || f.size() < 4 + 4 * nd) return std::nullopt;
  data::IdxArray a;
  // The reader's limit: the non-zero dims multiply to at most 2^40 (in 128 bits: no overflow).
  unsigned __int128 nonzero = 1;
  for (size_t d = 0; d < nd; ++d) {
    const size_t at = 4 + 4 * d;
    a.dims.push_back(int64_t{byte(at)} << 24 | int64_t{byte(at + 1)} << 16 |
                     int64_t{byte(at + 2)} << 8 | byte(at + 3));
    if (a.dims.back() != 0) nonzero *= static_cast<uint64_t>(a.dims.back());
    if (nonzero > (uint64_t{1} << 40)) return std::nullopt;
  }
  const size_t data = f.size() - (4 + 4 * nd);
  const int64_t items = max_items < 0 ? a.dims[0] : std::min(max_items, a.dims[0]);
  const uint64_t need = static_cast<uint64_t>(items) * static_cast<uint64_t>(a.item_size());
  if (data < need || (items == a.dims[0] && data != need)) return std::nullopt;
  a.dims[0] = items;
  a.bytes.assign(f.begin() + static_cast<std::ptrdiff_t>(4 + 4 * nd),
                 f.begin() + static_cast<std::ptrdiff_t>(4 + 4 * nd + need));
  return a;
}

bool gzipped(std::string_view f) {
  return f.size() >= 2 && static_cast<uint8_t>(f[0]) == 0x1f && static_cast<uint8_t>(f[1]) == 0x8b;
}

/// One read_idx call, checked.
bool check_read(const std::string& path, std::string_view bytes, int64_t max_items) {
  std::optional<data::IdxArray> got;
  try {
    got = data::read_idx(path, max_items);
  } catch (const Error&) {
  } catch (const std::exception& e) {
    throw CheckFailure(fmt::format("read_idx(max_items {}): unexpected exception: {}", max_items,
                                   e.what()));
  }
  if (got) {
    const int64_t size = got->dims.empty() ? -1 : got->dims[0] * got->item_size();
    if (got->dims.empty() || got->dims.size() > 8 || size != static_cast<int64_t>(got->bytes.size()))
      throw CheckFailure(fmt::format("read_idx(max_items {}): dims {} but {} bytes", max_items,
                                     got->dims, got->bytes.size()));
  }
  if (gzipped(bytes)) return got.has_value();
  const std::optional<data::IdxArray> want = read_plain(bytes, max_items);
  if (got.has_value() != want.has_value())
    throw CheckFailure(fmt::format("read_idx(max_items {}) {} a plain file that is {}",
                                   max_items, got ? "reads" : "rejects",
                                   want ? "well formed" : "malformed"));
  if (got && (got->dims != want->dims || got->bytes != want->bytes))
    throw CheckFailure(fmt::format("read_idx(max_items {}): dims {}, expected {}, or other bytes",
                                   max_items, got->dims, want->dims));
  return got.has_value();
}

}  // namespace

bool check_idx(std::string_view bytes) {
  static MemoryFile file;
  const std::string path = file.write(bytes);
  const bool whole = check_read(path, bytes, -1);
  check_read(path, bytes, 1);
  return whole;
}

}  // namespace lt::fuzz
