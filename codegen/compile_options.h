// What a compile takes besides the plans and what it reports: dumps, the on-disk object cache
// folder, kernel counts and times. Shared by every backend's compile entry (backends/backend.h),
// which reaches its codegen, here in codegen/, through them.
#pragma once
#include <string>

namespace lt::codegen {

struct CompileOptions {
  std::string dump_dir;     // non-empty: LLVM IR before/after optimization and assembly
  std::string dump_prefix;  // file stem for the dumps
  std::string cache_dir;    // non-empty: look up and store the object in this on-disk cache
                            // folder, under object_key
};

struct CompileStats {
  int loop_kernels = 0;      // JIT-compiled fusion groups (epilogues included)
  int library_launches = 0;  // eager-kernel calls without a compiled epilogue
  double llvm_ms = 0;        // emit + optimize + codegen time
  std::string object_file;   // the disk-cache entry of the step's kernels; "" when not cached
};

}  // namespace lt::codegen
