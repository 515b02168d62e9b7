// A compiled step: a list of launches over buffer slots. Codegen fills it (function pointers of
// JIT-compiled loop kernels, or eager kernels for library ops); the runtime runs it.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/shape.h"
#include "runtime/buffer.h"

namespace lt::rt {

using BufferPtr = std::shared_ptr<Buffer>;

/// Signature of a JIT-compiled loop kernel: `buffers` holds the data pointers of the launch's
/// slots (inputs then outputs); the kernel computes rows [row_begin, row_end) of its iteration
/// space (rows of the innermost dim, see Launch::rows).
using LoopKernelFn = void (*)(void* const* buffers, int64_t row_begin, int64_t row_end);

struct Launch {
  enum class Kind : uint8_t { Loop, Library } kind = Kind::Library;
  // Loop: a compiled kernel split across the thread pool by rows.
  LoopKernelFn fn = nullptr;
  int64_t rows = 0;        // iteration-space rows
  int64_t row_grain = 1;   // rows per chunk at least
  // Library: an eager kernel call.
  ir::Op op{};
  ir::Attrs attrs;
  // Both: slots read and written (slot numbers index the step's buffer table; their types are
  // the executable's slot types).
  std::vector<int> in_slots, out_slots;
  std::string name;  // for metrics and dumps
};

/// Buffer slots: [0, num_params) are the parameters; the rest are allocated per run (types in
/// slot_types), and the results are the slots in result_slots.
class Executable {
 public:
  Executable(int num_params, std::vector<TensorType> slot_types, std::vector<Launch> launches,
             std::vector<int> result_slots, std::shared_ptr<void> keep_alive);
  /// One buffer per result.
  std::vector<BufferPtr> run(std::span<const BufferPtr> params) const;
  const std::vector<Launch>& launches() const { return launches_; }

 private:
  int num_params_;
  std::vector<TensorType> slot_types_;  // every slot, parameters included
  std::vector<Launch> launches_;
  std::vector<int> result_slots_;
  std::vector<std::vector<int>> free_after_;  // per launch: slots that die after it
  std::shared_ptr<void> keep_alive_;          // owns the JIT code the launches point into
};

}  // namespace lt::rt
