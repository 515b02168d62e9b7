#include "frontend/io/safetensors_reader.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>

#include "frontend/io/safetensors_header.h"
#include "frontend/tensor_impl.h"

namespace lt::io {

// The format stores little-endian data, which lazytrain's buffers hold as they are.
static_assert(std::endian::native == std::endian::little, "the loader copies data unconverted");

void MemorySource::read(uint64_t offset, void* dst, uint64_t n) const {
  LT_CHECK(offset <= bytes_.size() && n <= bytes_.size() - offset, "read past the image");
  if (n) std::memcpy(dst, bytes_.data() + offset, n);
}

namespace {

/// Booleans are one byte each, 0 or 1; any other byte would be an invalid C++ bool.
void check_bools(const TensorEntry& e, const unsigned char* bytes) {
  for (uint64_t i = 0; i < e.end - e.begin; ++i)
    if (bytes[i] > 1)
      throw Error(fmt::format("tensor {}: BOOL element {} is byte 0x{:02x}, not 0 or 1",
                              json_quoted(e.name), i, bytes[i]));
}

}  // namespace

Checkpoint decode_safetensors(const ByteSource& src) {
  const uint64_t size = src.size();
  if (size < 8)
    throw Error(fmt::format("file is {} bytes, shorter than the 8-byte header length", size));
  unsigned char length_bytes[8];
  src.read(0, length_bytes, 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | length_bytes[i];
  if (n > size - 8)
    throw Error(
        fmt::format("header length {} runs past the end of the file ({} bytes follow "
                    "the length)",
                    n, size - 8));
  std::string text(n, '\0');
  src.read(8, text.data(), n);
  Header header = parse_header(text, size - 8 - n);

  Checkpoint out;
  out.metadata = std::move(header.metadata);
  for (const TensorEntry& e : header.tensors) {
    auto impl = make_impl(e.type);
    src.read(8 + n + e.begin, impl->data(), e.end - e.begin);
    if (e.type.dtype == DType::Bool) check_bools(e, impl->as<unsigned char>());
    out.tensors.emplace(e.name, Tensor(std::move(impl)));
  }
  return out;
}

}  // namespace lt::io
