// libFuzzer target: bytes read as a safetensors checkpoint (tests/fuzz/safetensors_check.h).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "tests/fuzz/safetensors_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    lt::fuzz::check_safetensors({reinterpret_cast<const char*>(data), size});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_safetensors: %s\n", e.what());
    std::abort();
  }
  return 0;
}
