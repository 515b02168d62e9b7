#include "passes/wide_gemm_results.h"

#include <variant>

#include "ir/op.h"
#include "passes/result_casts.h"

namespace lt::passes {
namespace {

// The rows of operand column Gemm accumulate in f32 and round to their operands' dtype.
bool gemm_like(ir::Op op) { return ir::info(op).operands == ir::OperandKind::Gemm; }

ir::Attrs with_f32_out(ir::Attrs a) {
  std::visit(
      [](auto& s) {
        if constexpr (requires { s.f32_out; }) s.f32_out = true;
      },
      a);
  return a;
}

}  // namespace

bool wide_gemm_results(ir::Graph& g) {
  return fold_result_casts(
      g, DType::F32,
      [](const ir::Node& n) { return gemm_like(n.op) && n.types[0].dtype == DType::BF16; },
      with_f32_out);
}

}  // namespace lt::passes
