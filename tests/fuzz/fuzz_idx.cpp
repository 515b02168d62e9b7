// libFuzzer target: bytes read as an IDX file (tests/fuzz/idx_check.h).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "tests/fuzz/idx_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    lt::fuzz::check_idx({reinterpret_cast<const char*>(data), size});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_idx: %s\n", e.what());
    std::abort();
  }
  return 0;
}
