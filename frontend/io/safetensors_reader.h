// Decoding a safetensors image into tensors, from a file or from memory (the fuzz target), with
// every read checked against the image's size first.
#pragma once
#include <cstdint>
#include <string_view>

#include "lt/serialize.h"

namespace lt::io {

/// Where the bytes of a safetensors image come from.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  /// Copies bytes [offset, offset + n), which lie within size(), to dst. Throws lt::Error when
  /// the bytes cannot be read.
  virtual void read(uint64_t offset, void* dst, uint64_t n) const = 0;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  void read(uint64_t offset, void* dst, uint64_t n) const override;

 private:
  std::string_view bytes_;
};

/// Decodes and checks a whole image: header length, header (see parse_header), BOOL bytes.
/// Throws lt::Error stating the problem (the caller adds the file).
Checkpoint decode_safetensors(const ByteSource& src);

}  // namespace lt::io
