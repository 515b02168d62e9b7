#include "codegen/object_cache.h"

#include <fcntl.h>
#include <llvm/ExecutionEngine/ObjectCache.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>

namespace lt::codegen {
namespace {

constexpr char kMagic[8] = {'L', 'T', 'O', 'B', 'J', 0, 0, 0};
// Bump when the header or the object's meaning changes; it is part of the file name hash, so old
// entries are simply never looked at again.
constexpr uint32_t kFormatVersion = 1;
constexpr std::string_view kIdPrefix = "ltc:";
constexpr size_t kMaxKeyChars = 160;
// Anything larger is certainly not one of our objects: a garbled size field must not make us
// allocate it.
constexpr uint64_t kMaxPayload = uint64_t{1} << 32;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t header_size;
  uint64_t compiler_hash;
  uint64_t payload_size;
  uint64_t checksum;  // FNV-1a 64 of the payload
};
static_assert(sizeof(Header) == 40);

std::atomic<uint64_t> g_hits{0}, g_misses{0}, g_writes{0}, g_corrupt{0}, g_write_errors{0};

uint64_t fnv1a64(const void* data, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool valid_key(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeyChars || key.front() == '.') return false;
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// One line per bad entry: a corrupt entry is removed and rewritten, and a successful rewrite
// re-arms the report (forget_report); an entry that cannot be removed or rewritten (read-only
// folder) thus prints once per process, not on every compile.
std::mutex g_report_mu;
std::set<std::string> g_reported;

void report_once(const std::string& what, const std::string& line) {
  std::lock_guard lock(g_report_mu);
  if (g_reported.insert(what).second) std::fprintf(stderr, "%s\n", line.c_str());
}

void forget_report(const std::string& what) {
  std::lock_guard lock(g_report_mu);
  g_reported.erase(what);
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool read_all(int fd, char* p, size_t n) {
  while (n > 0) {
    const ssize_t got = ::read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t put = ::write(fd, p, n);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

// Written to a temp file in the same folder and renamed over `path`, so that a reader (this or
// another process) sees the old file, no file or the whole new one. No fsync: a torn entry after
// a crash fails the size or checksum test and is recompiled. "" or what went wrong.
std::string write_file(const std::string& path, std::initializer_list<std::string_view> parts) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) return ec.message();
  static std::atomic<uint64_t> seq{0};
  const std::string tmp =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(seq++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return std::strerror(errno);
  std::string why;
  for (std::string_view part : parts)
    if (why.empty() && !write_all(fd, part.data(), part.size())) why = std::strerror(errno);
  if (::close(fd) != 0 && why.empty()) why = std::strerror(errno);
  if (why.empty() && ::rename(tmp.c_str(), path.c_str()) != 0) why = std::strerror(errno);
  if (!why.empty()) ::unlink(tmp.c_str());
  return why;
}

class DiskObjectCache final : public llvm::ObjectCache {
 public:
  DiskObjectCache(std::string dir, std::string_view compiler_id) : dir_(std::move(dir)) {
    const std::string id =
        std::string(compiler_id) + "|lt-object-format=" + std::to_string(kFormatVersion);
    compiler_hash_ = fnv1a64(id.data(), id.size());
  }

  std::unique_ptr<llvm::MemoryBuffer> getObject(const llvm::Module* m) override {
    const std::optional<std::string> path = path_for(m->getModuleIdentifier());
    if (!path) return nullptr;
    Fd f{::open(path->c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) {
      ++g_misses;
      return nullptr;
    }
    std::unique_ptr<llvm::MemoryBuffer> obj;
    const std::string why = read_entry(f.fd, m->getModuleIdentifier(), &obj);
    if (!why.empty()) {
      ++g_corrupt;
      ++g_misses;
      report_once(*path, "lt: cache entry " + *path + " is corrupt (" + why + "); recompiling");
      ::unlink(path->c_str());  // the recompile writes a fresh entry
      return nullptr;
    }
    ++g_hits;
    return obj;
  }

  void notifyObjectCompiled(const llvm::Module* m, llvm::MemoryBufferRef obj) override {
    const std::optional<std::string> path = path_for(m->getModuleIdentifier());
    if (!path) return;
    const std::string why = write_entry(*path, obj);
    if (!why.empty()) {
      ++g_write_errors;
      report_once(dir_, "lt: cannot write to the object cache " + dir_ + " (" + why +
                            "); compiled code is not cached");
      return;
    }
    forget_report(*path);
    ++g_writes;
  }

  std::optional<std::string> path_for(std::string_view id) const {
    if (!id.starts_with(kIdPrefix)) return std::nullopt;
    const std::string_view key = id.substr(kIdPrefix.size());
    if (!valid_key(key)) return std::nullopt;
    return dir_ + "/" + std::string(key) + "-" + hex16(compiler_hash_) + ".o";
  }

 private:
  // What is wrong with the entry, or "" with the payload in *out.
  std::string read_entry(int fd, llvm::StringRef name,
                         std::unique_ptr<llvm::MemoryBuffer>* out) const {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return std::strerror(errno);
    const auto size = static_cast<uint64_t>(st.st_size);
    Header h{};
    if (size < sizeof h || !read_all(fd, reinterpret_cast<char*>(&h), sizeof h))
      return "truncated header: " + std::to_string(size) + " bytes";
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return "bad magic";
    if (h.version != kFormatVersion || h.header_size != sizeof h)
      return "format version " + std::to_string(h.version);
    if (h.compiler_hash != compiler_hash_) return "compiler hash mismatch";
    if (h.payload_size > kMaxPayload) return "bad payload size";
    if (size != sizeof h + h.payload_size)
      return "truncated: " + std::to_string(size - sizeof h) + " bytes, header says " +
             std::to_string(h.payload_size);
    auto buf = llvm::WritableMemoryBuffer::getNewUninitMemBuffer(h.payload_size, name);
    if (!buf || !read_all(fd, buf->getBufferStart(), h.payload_size)) return "read failed";
    if (fnv1a64(buf->getBufferStart(), h.payload_size) != h.checksum) return "checksum mismatch";
    *out = std::move(buf);
    return "";
  }

  std::string write_entry(const std::string& path, llvm::MemoryBufferRef obj) const {
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kFormatVersion;
    h.header_size = sizeof h;
    h.compiler_hash = compiler_hash_;
    h.payload_size = obj.getBufferSize();
    h.checksum = fnv1a64(obj.getBufferStart(), obj.getBufferSize());
    return write_file(path, {std::string_view(reinterpret_cast<const char*>(&h), sizeof h),
                             std::string_view(obj.getBufferStart(), obj.getBufferSize())});
  }

  std::string dir_;
  uint64_t compiler_hash_ = 0;
};

}  // namespace

ObjectCacheStats object_cache_stats() {
  return {g_hits.load(), g_misses.load(), g_writes.load(), g_corrupt.load(), g_write_errors.load()};
}

std::string object_cache_module_id(std::string_view key) {
  if (valid_key(key)) return std::string(kIdPrefix) + std::string(key);
  return std::string(kIdPrefix) + "h" + hex16(fnv1a64(key.data(), key.size()));
}

std::string object_cache_entry(const llvm::ObjectCache& cache, std::string_view module_id) {
  const auto* disk = dynamic_cast<const DiskObjectCache*>(&cache);
  if (!disk) return "";
  return disk->path_for(module_id).value_or("");
}

std::string install_object_cache_entry(const std::string& path, std::string_view bytes) {
  return write_file(path, {bytes});
}

std::unique_ptr<llvm::ObjectCache> make_disk_object_cache(std::string dir,
                                                          std::string_view compiler_id) {
  return std::make_unique<DiskObjectCache>(std::move(dir), compiler_id);
}

}  // namespace lt::codegen
