// The check behind fuzz_ir_compile: check_ir_lower's steps, then codegen, then a run of the
// compiled step against the reference interpreter on data drawn from the input's hash
// (tests/fuzz/reference_spread.h has the comparison rules). Graphs past a size budget are only
// lowered, so that one input costs at most a few dozen LLVM kernels and small buffers.
#pragma once
#include <string_view>

namespace lt::fuzz {

/// The budget: at most this many nodes, and elements in any one value.
inline constexpr int kMaxCompiledNodes = 48;
inline constexpr int64_t kMaxCompiledElements = int64_t{1} << 14;

/// What one input did.
enum class CompileOutcome {
  Rejected,  // the parser, the verifier or a pass threw lt::Error
  OverBudget,  // lowered, not compiled
  DataError,   // compiled; the reference and the compiled step both rejected the data
  Compared,    // compiled, run and compared
};

/// fuzz_ir_compile's check of one input; throws CheckFailure on a bug.
CompileOutcome check_ir_compile(std::string_view text);

}  // namespace lt::fuzz
