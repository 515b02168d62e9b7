// The CPU backend's loop-kernel rules: what its LLVM loop kernels (codegen/) take on.
#pragma once
#include "ir/kernel_rules.h"

namespace lt::backends {

/// Loop kernels compute elementwise ops on compute dtypes (bf16 and f16 through casts only),
/// never one that checks data; end in sum/mean/max/min of a compute dtype other than bool that
/// reduce at least two elements per output; fold views but a transpose of a large tensor (which
/// the eager kernel's blocked transpose does faster); follow matmul (written whole) and conv2d
/// (image by image) as their epilogue, where those have one float output.
const ir::KernelRules& cpu_kernel_rules();

}  // namespace lt::backends
