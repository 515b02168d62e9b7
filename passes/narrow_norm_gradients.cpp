#include "passes/narrow_norm_gradients.h"

#include <variant>

#include "passes/result_casts.h"

namespace lt::passes {

bool narrow_norm_gradients(ir::Graph& g) {
  return fold_result_casts(
      g, DType::BF16,
      [](const ir::Node& n) {
        return n.op == ir::Op::BatchNormGrad && n.types[0].dtype == DType::F32;
      },
      [](const ir::Attrs& a) {
        auto attrs = std::get<ir::BatchNormGradAttrs>(a);
        attrs.bf16_dx = true;
        return ir::Attrs(attrs);
      });
}

}  // namespace lt::passes
