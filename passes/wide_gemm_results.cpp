#include "passes/wide_gemm_results.h"

#include <variant>

#include "ir/op.h"
#include "passes/result_casts.h"

namespace lt::passes {
namespace {

bool gemm_like(ir::Op op) {
  return op == ir::Op::MatMul || op == ir::Op::Conv2d || op == ir::Op::Conv2dInputGrad ||
         op == ir::Op::Conv2dWeightGrad;
}

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
