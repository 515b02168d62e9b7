#include "ir/attrs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cstring>
#include <utility>

#include "ir/hash.h"

namespace lt::ir {
namespace {

std::string value_str(int64_t v) { return fmt::format("{}", v); }
std::string value_str(bool v) { return v ? "true" : "false"; }
std::string value_str(double v) { return fmt::format("{}", v); }
std::string value_str(DType v) { return std::string(dtype_name(v)); }
std::string value_str(ReduceKind v) { return std::string(reduce_kind_name(v)); }
std::string value_str(const Ints& v) { return fmt::format("[{}]", fmt::join(v, ",")); }

uint64_t value_hash(int64_t v) { return static_cast<uint64_t>(v); }
uint64_t value_hash(bool v) { return v ? 1 : 2; }
uint64_t value_hash(double v) { return std::bit_cast<uint64_t>(v); }
uint64_t value_hash(DType v) { return static_cast<uint64_t>(v) + 101; }
uint64_t value_hash(ReduceKind v) { return static_cast<uint64_t>(v) + 211; }
uint64_t value_hash(const Ints& v) {
  uint64_t h = v.size();
  for (int64_t x : v) h = hash_mix(h, static_cast<uint64_t>(x));
  return h;
}

/// Calls fn(index, field) for each field the text holds: the required ones, and the optional ones
/// that differ from their default (required_fields).
template <class S, class Fn>
void for_each_shown(const S& s, Fn&& fn) {
  static const S defaults{};
  const auto fields = s.fields();
  const auto default_fields = defaults.fields();
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((I < required_fields<S>() || !(std::get<I>(fields) == std::get<I>(default_fields))
          ? fn(I, std::get<I>(fields))
          : void()),
     ...);
  }(std::make_index_sequence<S::kNames.size()>{});
}

constexpr std::array<std::string_view, 4> kReduceKindNames{"sum", "mean", "max", "min"};

}  // namespace

std::string_view reduce_kind_name(ReduceKind k) {
  return kReduceKindNames.at(static_cast<size_t>(k));
}

bool parse_reduce_kind(std::string_view s, ReduceKind* out) {
  for (size_t i = 0; i < kReduceKindNames.size(); ++i)
    if (s == kReduceKindNames[i]) {
      *out = static_cast<ReduceKind>(i);
      return true;
    }
  return false;
}

std::string attrs_str(const Attrs& a) {
  return std::visit(
      [](const auto& s) -> std::string {
        using S = std::decay_t<decltype(s)>;
        if constexpr (S::kNames.size() == 0) {
          return "";
        } else {
          std::string out = "{";
          for_each_shown(s, [&](size_t i, const auto& f) {
            out += fmt::format("{}{}={}", i ? ", " : "", S::kNames[i], value_str(f));
          });
          return out + "}";
        }
      },
      a);
}

uint64_t attrs_hash(const Attrs& a) {
  uint64_t h = a.index() * 0x100000001b3ULL;
  std::visit([&](const auto& s) {
    for_each_shown(s, [&](size_t, const auto& f) { h = hash_mix(h, value_hash(f)); });
  }, a);
  return h;
}

}  // namespace lt::ir
