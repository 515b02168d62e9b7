// IDX files (the MNIST container format): a big-endian header of magic + dims, then the raw
// elements. Only unsigned-byte payloads are read, which is what every *MNIST file holds.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace lt::data {

struct IdxArray {
  std::vector<int64_t> dims;   // dims[0] counts items (images, labels)
  std::vector<uint8_t> bytes;  // dims[0] * item_size() bytes, row-major
  int64_t item_size() const;   // product of dims[1..]
};

/// Reads a gzipped or plain unsigned-byte IDX file. With max_items >= 0 only the first
/// min(max_items, dims[0]) items are read (and dims[0] shrinks to match), so trailing bytes are
/// checked only when the whole file is read. Throws lt::InputError naming the file and the problem:
/// missing file, bad magic, bad dims, truncated header or data, trailing bytes, corrupt gzip.
IdxArray read_idx(const std::string& path, int64_t max_items = -1);

}  // namespace lt::data
