// The check behind fuzz_safetensors: bytes given to the checkpoint loader
// (lt::io::decode_safetensors, the decoder behind lt::load) are either rejected with lt::Error or
// decoded into tensors that match the file. The match is checked against an independent reading
// of the header (nlohmann::json directly, not the loader's header parser): the same names,
// dtypes and shapes, and each tensor's bytes equal to its declared range of the data buffer.
#pragma once
#include <string_view>

namespace lt::fuzz {

/// True when `bytes` decoded, false when rejected with lt::Error. Throws CheckFailure on a bug.
bool check_safetensors(std::string_view bytes);

}  // namespace lt::fuzz
