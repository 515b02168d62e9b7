// Nn family.
#include <fmt/format.h>

#include "ir/type_rules.h"

namespace lt::ir {
namespace {

void need_float(const TensorType& t, const char* what) {
  if (t.dtype != DType::F32 && t.dtype != DType::F64)
    type_fail(fmt::format("{} must be f32 or f64, got {}", what, type_str(t)));
}
void need_int(const TensorType& t, const char* what) {
  if (!is_integer(t.dtype))
    type_fail(fmt::format("{} must be i32 or i64, got {}", what, type_str(t)));
}
void need_type(const TensorType& got, const TensorType& want, const char* what) {
  if (got != want)
    type_fail(fmt::format("{} must be {}, got {}", what, type_str(want), type_str(got)));
}

/// Layer norm's gamma: x's trailing dims, x's dtype.
void need_trailing_gamma(const TensorType& x, const TensorType& g) {
  if (g.rank() < 1 || g.rank() > x.rank() ||
      !std::equal(g.shape.begin(), g.shape.end(), x.shape.end() - g.rank()))
    type_fail(fmt::format("gamma {} must match the trailing dims of {}", type_str(g), type_str(x)));
  need_type(g, {x.dtype, g.shape}, "gamma");
}

/// Batch norm's input x: f32 or f64, or f16 or bf16 (read widened; the op's row says
/// FloatWidensFirst) where gamma is f32. Returns the dtype the op computes and results in.
DType bn_compute_dtype(const TensorType& x, const TensorType& gamma) {
  if ((x.dtype == DType::BF16 || x.dtype == DType::F16) && gamma.dtype == DType::F32)
    return DType::F32;
  if (x.dtype == DType::BF16 || x.dtype == DType::F16)
    type_fail(fmt::format("input {} needs an f32 gamma, got {}", type_str(x), type_str(gamma)));
  need_float(x, "input");
  return x.dtype;
}

/// Batch norm's per-channel operands: [C] of the compute dtype, C = x's dim `axis` (1 up to its
/// last).
TensorType bn_channels(const TensorType& x, DType dtype, int64_t axis) {
  if (x.rank() < 2) type_fail(fmt::format("input must have rank >= 2, got {}", type_str(x)));
  if (axis < 1 || axis >= x.rank())
    type_fail(fmt::format("channel axis {} must be in [1, {}) for {}", axis, x.rank(),
                          type_str(x)));
  return {dtype, {x.shape[axis]}};
}

TypeList norm_rule(NnOp op, std::span<const TensorType> in, int64_t bn_axis) {
  const TensorType& x = in[0];
  if (op == NnOp::BatchNorm) {
    const DType dt = bn_compute_dtype(x, in[1]);
    const TensorType c = bn_channels(x, dt, bn_axis);
    need_type(in[1], c, "gamma");
    need_type(in[2], c, "beta");
    need_type(in[3], c, "running_mean");
    need_type(in[4], c, "running_var");
    return {{dt, x.shape}, c, c, c, c};
  }
  need_float(x, "input");
  const TensorType& g = in[1];
  need_trailing_gamma(x, g);
  need_type(in[2], g, "beta");
  TensorType stats{x.dtype, Shape(x.shape.begin(), x.shape.end() - g.rank())};
  return {x, stats, stats};
}

/// layer_norm_grad: (x, gamma, mean, rstd, gy) -> (dx, dgamma, dbeta).
TypeList layer_norm_grad_rule(std::span<const TensorType> in) {
  const TensorType &x = in[0], &g = in[1];
  need_float(x, "input");
  need_trailing_gamma(x, g);
  const TensorType stats{x.dtype, Shape(x.shape.begin(), x.shape.end() - g.rank())};
  need_type(in[2], stats, "mean");
  need_type(in[3], stats, "rstd");
  need_type(in[4], x, "grad");
  return {x, g, g};
}

}  // namespace

TypeList infer_nn(NnOp op, std::span<const TensorType> in, const Attrs& a) {
  switch (op) {
    case NnOp::BatchNorm: {
      const auto& bn = std::get<BatchNormAttrs>(a);
      if (bn.eps < 0) type_fail("eps must be >= 0");
      if (!(bn.momentum >= 0 && bn.momentum <= 1))
        type_fail(fmt::format("momentum {} outside [0, 1]", bn.momentum));
      return norm_rule(op, in, bn.axis);
    }
    case NnOp::BatchNormGrad: {
      const TensorType& x = in[0];
      const auto& attrs = std::get<BatchNormGradAttrs>(a);
      const DType dt = bn_compute_dtype(x, in[1]);
      const TensorType c = bn_channels(x, dt, attrs.axis);
      const TensorType wide{dt, x.shape};
      need_type(in[1], c, "gamma");
      need_type(in[2], c, "mean");
      need_type(in[3], c, "invstd");
      need_type(in[4], wide, "grad");
      if (attrs.bf16_dx && dt != DType::F32)
        type_fail(fmt::format("bf16_dx needs an f32 gradient, got {}", type_str(in[4])));
      return {{attrs.bf16_dx ? DType::BF16 : dt, x.shape}, c, c};
    }
    case NnOp::LayerNorm:
      if (std::get<NormAttrs>(a).eps < 0) type_fail("eps must be >= 0");
      return norm_rule(op, in, 0);
    case NnOp::LayerNormGrad: return layer_norm_grad_rule(in);
    case NnOp::Softmax:
    case NnOp::LogSoftmax: {
      need_float(in[0], "input");
      const int64_t ax = std::get<AxisAttrs>(a).axis;
      if (ax < 0 || ax >= in[0].rank())
        type_fail(fmt::format("axis {} out of range for {}", ax, type_str(in[0])));
      return {in[0]};
    }
    case NnOp::CrossEntropy: {
      need_float(in[0], "logits");
      need_int(in[1], "labels");
      if (in[0].rank() != 2 || in[1].rank() != 1 || in[1].shape[0] != in[0].shape[0])
        type_fail(fmt::format("needs logits [N,C] and labels [N], got {} and {}", type_str(in[0]),
                              type_str(in[1])));
      const double ls = std::get<CrossEntropyAttrs>(a).label_smoothing;
      if (ls < 0 || ls > 1) type_fail(fmt::format("label_smoothing {} outside [0, 1]", ls));
      return {{in[0].dtype, {}}};
    }
    case NnOp::Embedding: {
      need_float(in[0], "table");
      need_int(in[1], "ids");
      if (in[0].rank() != 2) type_fail(fmt::format("table must be [V,D], got {}", type_str(in[0])));
      Shape s = in[1].shape;
      s.push_back(in[0].shape[1]);
      return {{in[0].dtype, std::move(s)}};
    }
    case NnOp::EmbeddingGrad: {
      need_float(in[0], "grad");
      need_int(in[1], "ids");
      Shape want = in[1].shape;
      if (in[0].rank() != in[1].rank() + 1 ||
          !std::equal(want.begin(), want.end(), in[0].shape.begin()))
        type_fail(fmt::format("grad {} does not match ids {}", type_str(in[0]), type_str(in[1])));
      const int64_t v = std::get<EmbeddingGradAttrs>(a).num_weights;
      if (v < 1) type_fail(fmt::format("num_weights must be >= 1, got {}", v));
      return {{in[0].dtype, {v, in[0].shape.back()}}};
    }
    case NnOp::Cumsum: {
      const TensorType& x = in[0];
      if (!is_compute_type(x.dtype) || x.dtype == DType::Bool)
        type_fail(fmt::format("does not take {}", type_str(x)));
      const int64_t ax = std::get<CumsumAttrs>(a).axis;
      if (ax < 0 || ax >= x.rank())
        type_fail(fmt::format("axis {} out of range for {}", ax, type_str(x)));
      return {x};
    }
    case NnOp::TopK: {
      const TensorType& x = in[0];
      if (!is_compute_type(x.dtype) || x.dtype == DType::Bool)
        type_fail(fmt::format("does not take {}", type_str(x)));
      const auto& t = std::get<TopKAttrs>(a);
      if (t.axis < 0 || t.axis >= x.rank())
        type_fail(fmt::format("axis {} out of range for {}", t.axis, type_str(x)));
      if (t.k < 0 || t.k > x.shape[t.axis])
        type_fail(fmt::format("k = {} outside [0, {}] (the size of axis {})", t.k,
                              x.shape[t.axis], t.axis));
      Shape s = x.shape;
      s[t.axis] = t.k;
      return {{x.dtype, s}, {DType::I64, s}};
    }
    case NnOp::Gather:
    case NnOp::Scatter:
    case NnOp::ScatterAdd: return infer_gather(op, in, std::get<AxisAttrs>(a).axis);
    case NnOp::OptBarrier: {
      if (in.empty()) type_fail("needs at least one operand");
      return TypeList(in.begin(), in.end());
    }
    case NnOp::OneHot: {
      need_int(in[0], "ids");
      const auto& oa = std::get<OneHotAttrs>(a);
      if (oa.num_classes < 1)
        type_fail(fmt::format("num_classes must be >= 1, got {}", oa.num_classes));
      if (!is_compute_type(oa.dtype)) type_fail("dtype must be a compute type");
      Shape s = in[0].shape;
      s.push_back(oa.num_classes);
      return {{oa.dtype, std::move(s)}};
    }
  }
  type_fail("unknown nn op");
}

}  // namespace lt::ir
