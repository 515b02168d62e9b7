#include "ir/hash.h"

namespace lt::ir {

Hasher& Hasher::add(std::string_view s) {
  // FNV-1a over the bytes, then one combine: strings are rare (CPU names, cache keys).
  uint64_t f = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) f = (f ^ c) * 0x100000001b3ULL;
  return add(f).add(s.size());
}

}  // namespace lt::ir
