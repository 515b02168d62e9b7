// The safetensors header: a JSON object mapping each tensor name to its dtype, shape and byte
// range in the data buffer, plus an optional "__metadata__" string map. Encoding follows the
// layout Python's `safetensors` writes; parsing checks every rule of the format.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/shape.h"
#include "lt/serialize.h"

namespace lt::io {

struct TensorEntry {
  std::string name;
  TensorType type;
  uint64_t begin = 0;  ///< byte range [begin, end) in the data buffer
  uint64_t end = 0;
};

struct Header {
  std::vector<TensorEntry> tensors;  ///< in data-buffer order
  StringDict metadata;
};

/// The format's name of a dtype: "F32", "BF16", "BOOL", ...
std::string_view safetensors_dtype(DType t);

/// A string as a JSON literal (quoted, escaped), the way names appear in the header and errors;
/// bytes that are not UTF-8 become U+FFFD.
std::string json_quoted(const std::string& s);

/// Orders tensors as the `safetensors` library does (larger dtype alignment first, then by
/// name) and gives them contiguous byte ranges from 0.
std::vector<TensorEntry> layout_tensors(std::vector<TensorEntry> tensors);

/// Compact JSON ("__metadata__" first when not empty, then the tensors in the given order),
/// padded with spaces to a multiple of 8 bytes so the data that follows stays aligned.
/// Throws lt::Error when a name or metadata string is not valid UTF-8.
std::string encode_header(const std::vector<TensorEntry>& tensors, const StringDict& metadata);

/// Parses and checks a header for a data buffer of `data_bytes` bytes: JSON shape, dtypes,
/// shapes, offsets in range, consistent with the shape, covering the buffer without overlap.
/// Throws lt::Error stating the problem (the caller adds the file).
Header parse_header(std::string_view json, uint64_t data_bytes);

}  // namespace lt::io
