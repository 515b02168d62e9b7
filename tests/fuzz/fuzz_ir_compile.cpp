// libFuzzer target: IR text -> lowering, codegen and a run against the reference interpreter
// (tests/fuzz/ir_compile_check.h).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "runtime/thread_pool.h"
#include "tests/fuzz/ir_compile_check.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Two threads whatever the host, so that kernels split their rows the same way everywhere.
  lt::rt::set_num_threads(2);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    lt::fuzz::check_ir_compile({reinterpret_cast<const char*>(data), size});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_ir_compile: %s\n", e.what());
    std::abort();
  }
  return 0;
}
