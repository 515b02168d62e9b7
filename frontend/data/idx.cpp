// IDX reading through zlib, which also passes plain files through, so one path reads both.
#include "frontend/data/idx.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "ir/error.h"
#include "ir/shape.h"

namespace lt::data {
namespace {

constexpr int kMaxDims = 8;
// No IDX file of interest comes near this; it keeps the size arithmetic far from overflow.
constexpr int64_t kMaxBytes = int64_t{1} << 40;
constexpr int64_t kFirstChunkBytes = int64_t{1} << 16;  // then as much as was read

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) fail("no such file");
    if (!std::filesystem::is_regular_file(path, ec)) fail("not a regular file");
    file_.reset(gzopen(path.c_str(), "rb"));
    if (!file_) fail(fmt::format("cannot open: {}", std::strerror(errno)));
    gzbuffer(file_.get(), 1 << 17);
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(fmt::format("read_idx: {}: {}", path_, what));
  }

  /// Reads up to n bytes; returns how many arrived (fewer only at the end of the data).
  int64_t read(uint8_t* dst, int64_t n) {
    int64_t got = 0;
    while (got < n) {
      // gzread takes an unsigned count and returns int: read in chunks below 1 GiB.
      const unsigned chunk = static_cast<unsigned>(std::min<int64_t>(n - got, 1 << 30));
      const int r = gzread(file_.get(), dst + got, chunk);
      if (r < 0) check_gz_error();
      if (r <= 0) break;
      got += r;
    }
    // A cut gzip stream reads as a short count with Z_BUF_ERROR ("unexpected end of file"): the
    // caller reports it as truncation, like a short plain file. Other zlib errors are corruption.
    if (got < n) check_gz_error();
    return got;
  }

  void read_exactly(uint8_t* dst, int64_t n, const char* what) {
    const int64_t got = read(dst, n);
    if (got < n) fail(fmt::format("truncated {}: got {} of {} bytes", what, got, n));
  }

 private:
  void check_gz_error() const {
    int err = Z_OK;
    const char* msg = gzerror(file_.get(), &err);
    if (err == Z_ERRNO) fail(fmt::format("read error: {}", std::strerror(errno)));
    if (err != Z_OK && err != Z_BUF_ERROR) fail(fmt::format("corrupt gzip data: {}", msg));
  }

  std::string path_;
  GzFile file_;
};

uint32_t big_endian_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

std::vector<int64_t> read_header(Reader& in) {
  uint8_t magic[4];
  in.read_exactly(magic, 4, "header");
  if (magic[0] != 0 || magic[1] != 0)
    in.fail(fmt::format("bad magic 0x{:08x}: not an IDX file", big_endian_u32(magic)));
  if (magic[2] != 0x08)
    in.fail(fmt::format("element type 0x{:02x} is not unsigned byte (0x08)", magic[2]));
  const int ndim = magic[3];
  if (ndim < 1 || ndim > kMaxDims)
    in.fail(fmt::format("header declares {} dims (1 to {} supported)", ndim, kMaxDims));

  uint8_t raw[4 * kMaxDims];
  in.read_exactly(raw, 4 * ndim, "header");
  std::vector<int64_t> dims(ndim);
  for (int i = 0; i < ndim; ++i) dims[i] = big_endian_u32(raw + 4 * i);
  // The product of the non-zero dims bounds every partial product (the item size, the total),
  // also when a zero dim makes the total 0. Checked one factor at a time so it never overflows.
  int64_t nonzero = 1;
  for (int64_t d : dims) {
    if (d == 0) continue;
    if (nonzero > kMaxBytes / d) {
      if (std::find(dims.begin(), dims.end(), 0) != dims.end())
        in.fail(fmt::format("dims {}: the non-zero dims multiply to more than {}",
                            shape_str(dims), kMaxBytes));
      in.fail(fmt::format("dims {} hold more than {} bytes", shape_str(dims), kMaxBytes));
    }
    nonzero *= d;
  }
  return dims;
}

}  // namespace

int64_t IdxArray::item_size() const {
  int64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

IdxArray read_idx(const std::string& path, int64_t max_items) {
  Reader in(path);
  IdxArray out;
  out.dims = read_header(in);
  const int64_t want_items = max_items < 0 ? out.dims[0] : std::min(max_items, out.dims[0]);
  const int64_t need = want_items * out.item_size();
  // The buffer grows as the data arrives, doubling, so a header that declares more than the
  // file holds costs at most twice the data there is.
  int64_t got = 0;
  while (got < need) {
    const int64_t chunk = std::min(need - got, std::max(got, kFirstChunkBytes));
    out.bytes.resize(static_cast<size_t>(got + chunk));
    const int64_t n = in.read(out.bytes.data() + got, chunk);
    got += n;
    if (n < chunk) break;
  }
  if (got < need)
    in.fail(fmt::format("truncated: dims {} need {} data bytes, got {}", shape_str(out.dims),
                        out.dims[0] * out.item_size(), got));
  if (want_items == out.dims[0]) {
    uint8_t extra;
    if (in.read(&extra, 1) != 0)
      in.fail(fmt::format("trailing bytes after the {} data bytes of dims {}", need,
                          shape_str(out.dims)));
  }
  out.dims[0] = want_items;
  return out;
}

}  // namespace lt::data
