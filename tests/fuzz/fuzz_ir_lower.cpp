// libFuzzer target: IR text -> parse, verify, lowering (tests/fuzz/ir_lower_check.h).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "tests/fuzz/ir_lower_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    lt::fuzz::check_ir_lower({reinterpret_cast<const char*>(data), size});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_ir_lower: %s\n", e.what());
    std::abort();
  }
  return 0;
}
