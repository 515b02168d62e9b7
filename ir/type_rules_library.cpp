// Library family: matmul, convolution, pooling (NCHW).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "ir/type_rules.h"

namespace lt::ir {
namespace {

void need_float(const TensorType& t) {
  if (t.dtype != DType::F32 && t.dtype != DType::F64)
    type_fail(fmt::format("needs f32 or f64, got {}", type_str(t)));
}

/// GEMM-like rows (operand column Gemm: matmul, convolutions) also take bf16 and f16 operands
/// (autocast): they accumulate in f32 and round the result to the operands' dtype.
void need_gemm_float(const TensorType& t) {
  if (t.dtype != DType::F32 && t.dtype != DType::F64 && t.dtype != DType::BF16 &&
      t.dtype != DType::F16)
    type_fail(fmt::format("needs f32, f64, bf16 or f16, got {}", type_str(t)));
}

/// The result dtype of a GEMM-like op on `dt` operands: dt, or with f32_out (bf16 and f16
/// operands only) f32, the accumulator unrounded.
DType gemm_result(DType dt, bool f32_out) {
  if (!f32_out) return dt;
  if (dt != DType::BF16 && dt != DType::F16)
    type_fail(fmt::format("f32_out needs bf16 or f16 operands, got {}", dtype_name(dt)));
  return DType::F32;
}

/// PyTorch's words (its library ops do not promote either), then the two types.
std::string dtype_mismatch(const TensorType& want, const TensorType& got) {
  return fmt::format("expected scalar type {} but found {}: {} vs {}", torch_name(want.dtype),
                     torch_name(got.dtype), type_str(want), type_str(got));
}

void need_rank(const TensorType& t, int64_t r, const char* what) {
  if (t.rank() != r) type_fail(fmt::format("{} must have rank {}, got {}", what, r, type_str(t)));
}

void need_pairs(std::initializer_list<const Ints*> v) {
  for (const Ints* p : v)
    if (p->size() != 2)
      type_fail(fmt::format("needs 2 spatial values, got [{}]", fmt::join(*p, ",")));
}

TensorType matmul_rule(const TensorType& a, const TensorType& b, const MatMulAttrs& at) {
  if (a.rank() < 2 || b.rank() < 2)
    type_fail(fmt::format("operands must have rank >= 2, got {} and {}", type_str(a), type_str(b)));
  if (a.dtype != b.dtype) type_fail(dtype_mismatch(a, b));
  // Integer matmul as PyTorch's CPU one (indices, counts); bool has no kernel there either.
  if (a.dtype != DType::I64 && a.dtype != DType::I32) need_gemm_float(a);
  const int64_t m = at.transpose_a ? a.shape.end()[-1] : a.shape.end()[-2];
  const int64_t ka = at.transpose_a ? a.shape.end()[-2] : a.shape.end()[-1];
  const int64_t kb = at.transpose_b ? b.shape.end()[-1] : b.shape.end()[-2];
  const int64_t n = at.transpose_b ? b.shape.end()[-2] : b.shape.end()[-1];
  if (ka != kb)
    type_fail(fmt::format("contraction sizes differ: {} vs {} ({} x {})", ka, kb, type_str(a),
                          type_str(b)));
  Shape batch;
  if (!broadcast_shapes(std::span(a.shape).first(a.shape.size() - 2),
                        std::span(b.shape).first(b.shape.size() - 2), &batch))
    type_fail(fmt::format("cannot broadcast batch dims of {} and {}", type_str(a), type_str(b)));
  batch.push_back(m);
  batch.push_back(n);
  return {gemm_result(a.dtype, at.f32_out), std::move(batch)};
}

int64_t conv_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  // in, k, s, p, d <= kMaxElements: only the kernel's extent can pass int64, and then it does
  // not fit.
  const int64_t extent = saturating_add(saturating_mul(d, k - 1), 1);
  return (in + 2 * p - extent) / s + 1;
}

/// Output shape of conv2d for input shape x and weight shape w; checks everything. Channels-last
/// shapes are checked as their [N, C, H, W] order and the output given back channels-last.
Shape conv_shape(const Shape& x_given, const Shape& w, const ConvAttrs& a) {
  const Shape x = a.channels_last ? Shape{x_given[0], x_given[3], x_given[1], x_given[2]}
                                  : x_given;
  need_pairs({&a.stride, &a.padding, &a.dilation});
  for (int i = 0; i < 2; ++i)
    if (a.stride[i] < 1 || a.dilation[i] < 1 || a.padding[i] < 0 ||
        std::max({a.stride[i], a.dilation[i], a.padding[i]}) > kMaxElements)
      type_fail(fmt::format("bad stride/padding/dilation [{}]/[{}]/[{}]", fmt::join(a.stride, ","),
                            fmt::join(a.padding, ","), fmt::join(a.dilation, ",")));
  if (a.groups < 1 || a.groups > kMaxElements || x[1] % a.groups != 0 ||
      w[0] % a.groups != 0)
    type_fail(fmt::format("groups={} must divide in channels {} and out channels {}", a.groups,
                          x[1], w[0]));
  if (saturating_mul(w[1], a.groups) != x[1])
    type_fail(fmt::format("weight {} expects {} input channels, input has {}", shape_str(w),
                          saturating_mul(w[1], a.groups), x[1]));
  const int64_t oh = conv_out(x[2], w[2], a.stride[0], a.padding[0], a.dilation[0]);
  const int64_t ow = conv_out(x[3], w[3], a.stride[1], a.padding[1], a.dilation[1]);
  if (oh < 1 || ow < 1)
    type_fail(fmt::format("kernel {} does not fit input {}", shape_str(w), shape_str(x_given)));
  return a.channels_last ? Shape{x[0], oh, ow, w[0]} : Shape{x[0], w[0], oh, ow};
}

Shape pool_shape(const Shape& x, const PoolAttrs& a) {
  need_pairs({&a.kernel, &a.stride, &a.padding});
  for (int i = 0; i < 2; ++i)
    if (a.kernel[i] < 1 || a.stride[i] < 1 || a.padding[i] < 0 ||
        a.padding[i] > a.kernel[i] / 2 || std::max(a.kernel[i], a.stride[i]) > kMaxElements)
      type_fail(fmt::format("bad kernel/stride/padding [{}]/[{}]/[{}]", fmt::join(a.kernel, ","),
                            fmt::join(a.stride, ","), fmt::join(a.padding, ",")));
  // PyTorch's rule: ceil_mode rounds up, but the last window must start inside the input or its
  // left padding.
  auto out = [&](int i) {
    const int64_t n = x[2 + i] + 2 * a.padding[i] - a.kernel[i];
    if (n < 0) return int64_t{0};
    int64_t o = (n + (a.ceil_mode ? a.stride[i] - 1 : 0)) / a.stride[i] + 1;
    if (a.ceil_mode && (o - 1) * a.stride[i] >= x[2 + i] + a.padding[i]) --o;
    return o;
  };
  const int64_t oh = out(0), ow = out(1);
  if (oh < 1 || ow < 1) type_fail(fmt::format("window does not fit input {}", shape_str(x)));
  return {x[0], x[1], oh, ow};
}

/// Max pooling's output shape: of [N, C, H, W], or of [N, H, W, C] where channels_last.
Shape max_pool_shape(const Shape& x, const PoolAttrs& a) {
  if (!a.channels_last) return pool_shape(x, a);
  const Shape y = pool_shape({x[0], x[3], x[1], x[2]}, a);
  return {y[0], y[2], y[3], y[1]};
}

void need_same(const TensorType& got, const Shape& want, const char* what) {
  if (got.shape != want)
    type_fail(fmt::format("{} must be {}, got {}", what, shape_str(want), type_str(got)));
}

}  // namespace

TypeList infer_library(LibraryOp op, std::span<const TensorType> in, const Attrs& a) {
  const bool gemm_like = info(to_op(op)).operands == OperandKind::Gemm;
  if (op != LibraryOp::MatMul)  // matmul_rule checks its operands' ranks first
    for (const TensorType& t : in) gemm_like ? need_gemm_float(t) : need_float(t);
  for (const TensorType& t : in)
    if (t.dtype != in[0].dtype) type_fail(dtype_mismatch(in[0], t));
  const DType dt = in[0].dtype;
  switch (op) {
    case LibraryOp::MatMul: return {matmul_rule(in[0], in[1], std::get<MatMulAttrs>(a))};
    case LibraryOp::Conv2d: {
      need_rank(in[0], 4, "input");
      need_rank(in[1], 4, "weight");
      const auto& ca = std::get<ConvAttrs>(a);
      return {{gemm_result(dt, ca.f32_out), conv_shape(in[0].shape, in[1].shape, ca)}};
    }
    case LibraryOp::Conv2dInputGrad: {  // (grad_out, w), grad_shape = input shape
      const auto& ca = std::get<ConvAttrs>(a);
      if (ca.grad_shape.size() != 4) type_fail("grad_shape must be the rank-4 input shape");
      need_rank(in[1], 4, "weight");
      need_same(in[0], conv_shape(ca.grad_shape, in[1].shape, ca), "grad_out");
      return {{gemm_result(dt, ca.f32_out), ca.grad_shape}};
    }
    case LibraryOp::Conv2dWeightGrad: {  // (x, grad_out), grad_shape = weight shape
      const auto& ca = std::get<ConvAttrs>(a);
      if (ca.grad_shape.size() != 4) type_fail("grad_shape must be the rank-4 weight shape");
      need_rank(in[0], 4, "input");
      need_same(in[1], conv_shape(in[0].shape, ca.grad_shape, ca), "grad_out");
      return {{gemm_result(dt, ca.f32_out), ca.grad_shape}};
    }
    case LibraryOp::MaxPool2d:
      need_rank(in[0], 4, "input");
      if (std::get<PoolAttrs>(a).through_relu) type_fail("through_relu is for max_pool2d_grad");
      return {{dt, max_pool_shape(in[0].shape, std::get<PoolAttrs>(a))}};
    case LibraryOp::AvgPool2d:
      need_rank(in[0], 4, "input");
      if (std::get<PoolAttrs>(a).channels_last) type_fail("channels_last is for max pooling");
      if (std::get<PoolAttrs>(a).through_relu) type_fail("through_relu is for max_pool2d_grad");
      return {{dt, pool_shape(in[0].shape, std::get<PoolAttrs>(a))}};
    case LibraryOp::MaxPool2dGrad:  // (x, grad_out)
      need_rank(in[0], 4, "input");
      need_same(in[1], max_pool_shape(in[0].shape, std::get<PoolAttrs>(a)), "grad_out");
      return {in[0]};
    case LibraryOp::AvgPool2dGrad: {  // (grad_out), grad_shape = input shape
      const auto& pa = std::get<PoolAttrs>(a);
      if (pa.channels_last) type_fail("channels_last is for max pooling");
      if (pa.through_relu) type_fail("through_relu is for max_pool2d_grad");
      if (pa.grad_shape.size() != 4) type_fail("grad_shape must be the rank-4 input shape");
      need_same(in[0], pool_shape(pa.grad_shape, pa), "grad_out");
      return {{dt, pa.grad_shape}};
    }
  }
  type_fail("unknown library op");
}

}  // namespace lt::ir
