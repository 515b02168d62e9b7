#include "frontend/io/safetensors_header.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

namespace lt::io {
namespace {

using nlohmann::json;

// The format's dtypes that lazytrain holds, in the `safetensors` library's dtype order, which
// is increasing alignment: the writer puts larger ones first.
constexpr DType kFormatOrder[] = {DType::Bool, DType::F16, DType::BF16, DType::I32,
                                  DType::F32,  DType::F64, DType::I64};

int format_rank(DType t) {
  for (int i = 0; i < static_cast<int>(std::size(kFormatOrder)); ++i)
    if (kFormatOrder[i] == t) return i;
  LT_UNREACHABLE();
}

/// A JSON value for an error message, cut short when long.
std::string brief(const json& v) {
  std::string s = v.dump();
  return s.size() <= 40 ? s : s.substr(0, 37) + "...";
}

/// Bytes outside printable ASCII as \xNN, so a message about binary garbage stays one line.
std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f)
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  return out;
}

void check_utf8(const std::string& s, std::string_view what) {
  try {
    (void)json(s).dump();
  } catch (const json::type_error&) {
    throw Error(fmt::format("{} {} is not valid UTF-8", what, printable(s)));
  }
}

std::string list_dtypes() {
  std::string out;
  for (DType t : kAllDTypes)
    out += fmt::format("{}{}", out.empty() ? "" : ", ", safetensors_dtype(t));
  return out;
}

int64_t checked_numel(const Shape& shape, const std::string& who) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      throw Error(
          fmt::format("{}: shape {} has more elements than fit in 64 bits", who, shape_str(shape)));
  return n;
}

Shape parse_shape(const json& v, const std::string& who) {
  const auto fail = [&] {
    return Error(fmt::format("{}: \"shape\" must be a list of non-negative integers, got {}", who,
                             brief(v)));
  };
  if (!v.is_array()) throw fail();
  Shape shape;
  for (const json& d : v) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(INT64_MAX)) throw fail();
    shape.push_back(d.get<int64_t>());
  }
  return shape;
}

TensorEntry parse_entry(const std::string& name, const json& v, uint64_t data_bytes) {
  const std::string who = "tensor " + json_quoted(name);
  if (!v.is_object())
    throw Error(fmt::format("{}: entry is a JSON {}, not an object", who, v.type_name()));
  for (const auto& [key, _] : v.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets")
      throw Error(fmt::format("{}: unexpected key {}", who, json_quoted(key)));
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!v.contains(key)) throw Error(fmt::format("{}: missing \"{}\"", who, key));

  TensorEntry e{name, {}, 0, 0};
  const json& dtype = v.at("dtype");
  if (!dtype.is_string())
    throw Error(fmt::format("{}: \"dtype\" must be a string, got {}", who, brief(dtype)));
  const auto& dname = dtype.get_ref<const std::string&>();
  const DType* found = std::find_if(std::begin(kAllDTypes), std::end(kAllDTypes),
                                    [&](DType t) { return safetensors_dtype(t) == dname; });
  if (found == std::end(kAllDTypes))
    throw Error(fmt::format("{}: unknown dtype {} (lazytrain reads {})", who, json_quoted(dname),
                            list_dtypes()));
  e.type.dtype = *found;
  e.type.shape = parse_shape(v.at("shape"), who);

  const json& off = v.at("data_offsets");
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
      !off[1].is_number_unsigned())
    throw Error(fmt::format("{}: \"data_offsets\" must be two non-negative integers, got {}", who,
                            brief(off)));
  e.begin = off[0].get<uint64_t>();
  e.end = off[1].get<uint64_t>();
  const std::string range = fmt::format("[{},{}]", e.begin, e.end);
  if (e.begin > e.end)
    throw Error(fmt::format("{}: data_offsets {} begin after they end", who, range));
  if (e.end > data_bytes)
    throw Error(fmt::format("{}: data_offsets {} run past the {}-byte data buffer", who, range,
                            data_bytes));
  const uint64_t numel = static_cast<uint64_t>(checked_numel(e.type.shape, who));
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(numel, dtype_size(e.type.dtype), &bytes))
    throw Error(fmt::format("{}: {} takes more bytes than fit in 64 bits", who, type_str(e.type)));
  if (bytes != e.end - e.begin)
    throw Error(fmt::format("{}: {} takes {} bytes, data_offsets {} hold {}", who, type_str(e.type),
                            bytes, range, e.end - e.begin));
  return e;
}

StringDict parse_metadata(const json& v) {
  if (!v.is_object())
    throw Error(fmt::format("\"__metadata__\" is a JSON {}, not an object", v.type_name()));
  StringDict out;
  for (const auto& [key, value] : v.items()) {
    if (!value.is_string())
      throw Error(fmt::format("\"__metadata__\" value of {} must be a string, got {}",
                              json_quoted(key), brief(value)));
    out[key] = value.get<std::string>();
  }
  return out;
}

/// The tensors, in data order, must tile the buffer: no overlap, no byte left to none.
void check_coverage(std::vector<TensorEntry>& tensors, uint64_t data_bytes) {
  std::sort(tensors.begin(), tensors.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  uint64_t pos = 0;
  const TensorEntry* last = nullptr;  // the entry that ends at pos
  for (const TensorEntry& e : tensors) {
    if (e.begin < pos)
      throw Error(fmt::format("tensors {} [{},{}] and {} [{},{}] overlap", json_quoted(last->name),
                              last->begin, last->end, json_quoted(e.name), e.begin, e.end));
    if (e.begin > pos)
      throw Error(
          fmt::format("bytes [{},{}) of the data buffer belong to no tensor", pos, e.begin));
    if (e.end > e.begin || !last) last = &e;
    pos = e.end;
  }
  if (pos != data_bytes)
    throw Error(
        fmt::format("bytes [{},{}) of the data buffer belong to no tensor", pos, data_bytes));
}

}  // namespace

std::string json_quoted(const std::string& s) {
  return json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string_view safetensors_dtype(DType t) {
  switch (t) {
    case DType::Bool: return "BOOL";
    case DType::I32: return "I32";
    case DType::I64: return "I64";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::F32: return "F32";
    case DType::F64: return "F64";
  }
  LT_UNREACHABLE();
}

std::vector<TensorEntry> layout_tensors(std::vector<TensorEntry> tensors) {
  std::sort(tensors.begin(), tensors.end(), [](const TensorEntry& a, const TensorEntry& b) {
    const int ra = format_rank(a.type.dtype), rb = format_rank(b.type.dtype);
    return ra != rb ? ra > rb : a.name < b.name;
  });
  uint64_t offset = 0;
  for (TensorEntry& e : tensors) {
    e.begin = offset;
    e.end = offset += e.type.bytes();
  }
  return tensors;
}

std::string encode_header(const std::vector<TensorEntry>& tensors, const StringDict& metadata) {
  std::string out = "{";
  if (!metadata.empty()) {
    out += "\"__metadata__\":{";
    for (const auto& [key, value] : metadata) {
      check_utf8(key, "metadata key");
      check_utf8(value, "metadata value");
      out += fmt::format("{}{}:{}", out.back() == '{' ? "" : ",", json_quoted(key),
                         json_quoted(value));
    }
    out += "}";
  }
  for (const TensorEntry& e : tensors) {
    check_utf8(e.name, "tensor name");
    if (e.name == "__metadata__")
      throw Error("the tensor name \"__metadata__\" is the format's metadata key");
    out +=
        fmt::format("{}{}:{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
                    out.size() > 1 ? "," : "", json_quoted(e.name), safetensors_dtype(e.type.dtype),
                    fmt::join(e.type.shape, ","), e.begin, e.end);
  }
  out += "}";
  out.append((8 - out.size() % 8) % 8, ' ');
  return out;
}

Header parse_header(std::string_view text, uint64_t data_bytes) {
  // nlohmann keeps the last of repeated keys; the format has no use for them, so refuse them.
  std::vector<std::set<std::string>> open_objects;
  const auto on_event = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open_objects.emplace_back();
    if (event == json::parse_event_t::object_end) open_objects.pop_back();
    if (event == json::parse_event_t::key &&
        !open_objects.back().insert(parsed.get<std::string>()).second)
      throw Error(fmt::format("header repeats the key {}", json_quoted(parsed.get<std::string>())));
    return true;
  };
  json root;
  try {
    root = json::parse(text.begin(), text.end(), on_event);
  } catch (const json::exception& e) {  // a parse_error, or out_of_range for a number like 1e400
    std::string_view what = e.what();
    if (const size_t tag = what.find("] "); tag != what.npos) what.remove_prefix(tag + 2);
    throw Error(fmt::format("header is not valid JSON: {}", printable(what)));
  }
  if (!root.is_object())
    throw Error(fmt::format("header is a JSON {}, not an object", root.type_name()));
  Header h;
  for (const auto& [name, value] : root.items()) {
    if (name == "__metadata__")
      h.metadata = parse_metadata(value);
    else
      h.tensors.push_back(parse_entry(name, value, data_bytes));
  }
  check_coverage(h.tensors, data_bytes);
  return h;
}

}  // namespace lt::io
