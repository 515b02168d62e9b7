// lt::save and lt::load: safetensors files on disk.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "frontend/io/atomic_file.h"
#include "frontend/io/safetensors_header.h"
#include "frontend/io/safetensors_reader.h"
#include "frontend/lazy/tracer.h"
#include "frontend/tensor_impl.h"
#include "lt/serialize.h"

namespace lt {
namespace {

std::string errno_text() { return std::system_category().message(errno); }

class FileSource final : public io::ByteSource {
 public:
  explicit FileSource(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error(fmt::format("cannot open: {}", errno_text()));
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw Error(fmt::format("cannot stat: {}", errno_text()));
    if (!S_ISREG(st.st_mode)) throw Error("not a regular file");
    size_ = static_cast<uint64_t>(st.st_size);
  }
  ~FileSource() override { ::close(fd_); }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  uint64_t size() const override { return size_; }
  void read(uint64_t offset, void* dst, uint64_t n) const override {
    char* p = static_cast<char*>(dst);
    while (n > 0) {
      const ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw Error(fmt::format("cannot read: {}", errno_text()));
      if (got == 0) throw Error("file ended early (it shrank while being read)");
      p += got;
      offset += static_cast<uint64_t>(got);
      n -= static_cast<uint64_t>(got);
    }
  }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace

void save(const std::string& path, const TensorDict& tensors, const StringDict& metadata, Loc loc) {
  const auto fail = [&](std::string_view problem) {
    return Error(fmt::format("save: {}: {} at {}", path, problem, location_str(loc)));
  };
  std::vector<io::TensorEntry> entries;
  std::vector<Tensor> values;
  for (const auto& [name, t] : tensors) {
    if (!t.defined()) throw fail(fmt::format("tensor {} is undefined", io::json_quoted(name)));
    entries.push_back({name, t.type(), 0, 0});
    values.push_back(t);
  }
  lazy::sync(values, "save", loc);  // every pending tensor in one graph
  try {
    entries = io::layout_tensors(std::move(entries));
    const std::string header = io::encode_header(entries, metadata);
    unsigned char length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(header.size() >> (8 * i));
    io::AtomicFile file(path);
    file.write(length, sizeof length);
    file.write(header.data(), header.size());
    for (const io::TensorEntry& e : entries)
      file.write(tensors.at(e.name).impl()->data(), e.end - e.begin);
    file.commit();
  } catch (const Error& e) {
    throw fail(e.what());
  }
}

Checkpoint load(const std::string& path, Loc loc) {
  try {
    return io::decode_safetensors(FileSource(path));
  } catch (const Error& e) {
    throw Error(fmt::format("load: {}: {} at {}", path, e.what(), location_str(loc)));
  }
}

}  // namespace lt
