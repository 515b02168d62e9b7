#include "tests/fuzz/safetensors_check.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "frontend/io/safetensors_reader.h"
#include "frontend/tensor_impl.h"
#include "ir/error.h"
#include "tests/fuzz/check_failure.h"

namespace lt::fuzz {
namespace {

const std::map<std::string, std::pair<DType, size_t>>& dtypes() {
  static const std::map<std::string, std::pair<DType, size_t>> m = {
      {"BOOL", {DType::Bool, 1}}, {"F16", {DType::F16, 2}}, {"BF16", {DType::BF16, 2}},
      {"I32", {DType::I32, 4}},   {"F32", {DType::F32, 4}}, {"F64", {DType::F64, 8}},
      {"I64", {DType::I64, 8}}};
  return m;
}

/// Checks an accepted file's tensors against the header as nlohmann::json reads it.
void check_accepted(std::string_view bytes, const Checkpoint& ckpt) {
  if (bytes.size() < 8) throw CheckFailure("accepted a file shorter than its length field");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = header_len << 8 | static_cast<uint8_t>(bytes[i]);
  if (header_len > bytes.size() - 8)
    throw CheckFailure(fmt::format("accepted a header of {} bytes in a file of {}", header_len,
                                   bytes.size()));
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(8, header_len));
  } catch (const std::exception& e) {
    throw CheckFailure(fmt::format("accepted a header that is not JSON: {}", e.what()));
  }
  const std::string_view data = bytes.substr(8 + header_len);
  size_t n = 0;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    ++n;
    const auto it = ckpt.tensors.find(name);
    if (it == ckpt.tensors.end()) throw CheckFailure(fmt::format("tensor '{}' not decoded", name));
    const Tensor& t = it->second;
    const auto dt = dtypes().find(entry.at("dtype").get<std::string>());
    if (dt == dtypes().end() || dt->second.first != t.dtype())
      throw CheckFailure(fmt::format("tensor '{}': dtype {} decoded as {}", name,
                                     entry.at("dtype").dump(), dtype_name(t.dtype())));
    Shape shape;
    for (const auto& d : entry.at("shape")) shape.push_back(d.get<int64_t>());
    if (shape != t.shape())
      throw CheckFailure(fmt::format("tensor '{}': shape {} decoded as {}", name,
                                     entry.at("shape").dump(), type_str(t.type())));
    const auto begin = entry.at("data_offsets").at(0).get<uint64_t>();
    const auto end = entry.at("data_offsets").at(1).get<uint64_t>();
    const size_t size = t.type().bytes();
    if (end < begin || end > data.size() || end - begin != size)
      throw CheckFailure(fmt::format("tensor '{}': offsets [{}, {}) accepted for {} bytes of {}",
                                     name, begin, end, size, data.size()));
    if (size > 0 && std::memcmp(t.impl()->data(), data.data() + begin, size) != 0)
      throw CheckFailure(fmt::format("tensor '{}': decoded bytes differ from the file's", name));
  }
  if (n != ckpt.tensors.size())
    throw CheckFailure(fmt::format("{} tensors in the header, {} decoded", n, ckpt.tensors.size()));
}

}  // namespace

bool check_safetensors(std::string_view bytes) {
  Checkpoint ckpt;
  try {
    ckpt = io::decode_safetensors(io::MemorySource(bytes));
  } catch (const Error&) {
    return false;
  } catch (const std::exception& e) {
    throw CheckFailure(fmt::format("decode_safetensors: unexpected exception: {}", e.what()));
  }
  check_accepted(bytes, ckpt);
  return true;
}

}  // namespace lt::fuzz
