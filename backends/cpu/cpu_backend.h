// The CPU backend: loop kernels JIT-compiled by LLVM for the host CPU (codegen/), everything
// else the eager kernels of runtime/.
#pragma once
#include "backends/backend.h"

namespace lt::backends {

/// The CPU backend (one, for the whole process): cpu_kernel_rules(), cpu_recipe() and
/// codegen::compile.
const Backend& cpu();

}  // namespace lt::backends
