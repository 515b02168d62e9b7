// Typed attribute structs, one per op kind (never an untyped "arg"). Each names its fields once in
// fields()/kNames; printing, parsing, hashing and equality all walk that one list.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

#include "ir/dtype.h"
#include "ir/shape.h"

namespace lt::ir {

using Ints = Dims;

/// How a collective combines the ranks' tensors. Mean is the sum scaled by 1/world size.
enum class ReduceKind : uint8_t { Sum, Mean, Max, Min };
std::string_view reduce_kind_name(ReduceKind k);
/// Parses "sum", "mean", "max" or "min"; false for anything else.
bool parse_reduce_kind(std::string_view s, ReduceKind* out);

/// How many of S's fields the text always holds: all, unless S declares kRequired. The fields
/// after those are optional: printed, and hashed, only when they differ from their default, and
/// given their default when the text leaves them out, so adding one keeps every existing text.
template <class S>
constexpr size_t required_fields() {
  if constexpr (requires { S::kRequired; }) return S::kRequired;
  else return S::kNames.size();
}

#define LT_ATTR_FIELDS(...) \
  auto fields() const { return std::tie(__VA_ARGS__); } \
  auto fields() { return std::tie(__VA_ARGS__); }

struct NoAttrs {
  static constexpr std::array<const char*, 0> kNames{};
  auto fields() const { return std::tuple<>(); }
  auto fields() { return std::tuple<>(); }
  bool operator==(const NoAttrs&) const = default;
};
struct CastAttrs {
  DType to = DType::F32;
  static constexpr std::array kNames{"to"};
  LT_ATTR_FIELDS(to)
  bool operator==(const CastAttrs&) const = default;
};
struct ReduceAttrs {
  Ints axes;  // sorted, non-negative; empty = every axis
  bool keepdim = false;
  static constexpr std::array kNames{"axes", "keepdim"};
  LT_ATTR_FIELDS(axes, keepdim)
  bool operator==(const ReduceAttrs&) const = default;
};
struct ReshapeAttrs {
  Shape shape;
  static constexpr std::array kNames{"shape"};
  LT_ATTR_FIELDS(shape)
  bool operator==(const ReshapeAttrs&) const = default;
};
struct PermuteAttrs {
  Ints perm;
  static constexpr std::array kNames{"perm"};
  LT_ATTR_FIELDS(perm)
  bool operator==(const PermuteAttrs&) const = default;
};
struct ExpandAttrs {
  Shape shape;
  static constexpr std::array kNames{"shape"};
  LT_ATTR_FIELDS(shape)
  bool operator==(const ExpandAttrs&) const = default;
};
struct SliceAttrs {
  Ints start, stop, step;  // one entry per axis, already clamped: 0 <= start <= stop <= dim
  static constexpr std::array kNames{"start", "stop", "step"};
  LT_ATTR_FIELDS(start, stop, step)
  bool operator==(const SliceAttrs&) const = default;
};
struct ConcatAttrs {
  int64_t axis = 0;
  static constexpr std::array kNames{"axis"};
  LT_ATTR_FIELDS(axis)
  bool operator==(const ConcatAttrs&) const = default;
};
struct PadAttrs {
  Ints lo, hi;  // per axis, >= 0
  double value = 0;
  static constexpr std::array kNames{"lo", "hi", "value"};
  LT_ATTR_FIELDS(lo, hi, value)
  bool operator==(const PadAttrs&) const = default;
};
struct MatMulAttrs {
  bool transpose_a = false, transpose_b = false;  // of the last two dims
  // bf16 or f16 operands: the result is the f32 accumulator itself, not its rounding to the
  // operands' dtype (passes/wide_gemm_results.h sets it; the text shows it only when true).
  bool f32_out = false;
  static constexpr std::array kNames{"transpose_a", "transpose_b", "f32_out"};
  static constexpr size_t kRequired = 2;
  LT_ATTR_FIELDS(transpose_a, transpose_b, f32_out)
  bool operator==(const MatMulAttrs&) const = default;
};
struct ConvAttrs {
  Ints stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1;
  Shape grad_shape;  // conv2d_input_grad: the input's shape; conv2d_weight_grad: the weight's
  // Activations (input, output and their gradients) are [N, H, W, C] instead of [N, C, H, W];
  // weights stay [O, C/groups, KH, KW]. The layout pass picks it (passes/channels_last.h).
  bool channels_last = false;
  bool f32_out = false;  // as MatMulAttrs::f32_out
  static constexpr std::array kNames{"stride",     "padding",       "dilation", "groups",
                                     "grad_shape", "channels_last", "f32_out"};
  static constexpr size_t kRequired = 6;
  LT_ATTR_FIELDS(stride, padding, dilation, groups, grad_shape, channels_last, f32_out)
  bool operator==(const ConvAttrs&) const = default;
};
struct PoolAttrs {
  Ints kernel{2, 2}, stride{2, 2}, padding{0, 0};
  Shape grad_shape;        // avg_pool2d_grad: the input's shape
  bool ceil_mode = false;  // output size rounds up (windows may overhang the padded input)
  bool count_include_pad = true;  // avg: divide by the window clipped to the padded input
  // max_pool2d and its gradient only: activations are [N, H, W, C] (as ConvAttrs's).
  bool channels_last = false;
  // max_pool2d_grad only: a window whose maximum is not above 0 passes no gradient, as if the
  // gradient went on through a ReLU before the pool (where(x > 0, max_pool2d_grad(x, g), 0)).
  bool through_relu = false;
  static constexpr std::array kNames{"kernel",        "stride",           "padding",
                                     "grad_shape",    "ceil_mode",        "count_include_pad",
                                     "channels_last", "through_relu"};
  static constexpr size_t kRequired = 6;
  LT_ATTR_FIELDS(kernel, stride, padding, grad_shape, ceil_mode, count_include_pad,
                 channels_last, through_relu)
  bool operator==(const PoolAttrs&) const = default;
};
struct NormAttrs {
  double eps = 1e-5;
  static constexpr std::array kNames{"eps"};
  LT_ATTR_FIELDS(eps)
  bool operator==(const NormAttrs&) const = default;
};
struct BatchNormAttrs {
  double eps = 1e-5;
  double momentum = 0.1;  // running = (1 - momentum) * running + momentum * batch statistic
  int64_t axis = 1;       // the channel axis: 1 for [N, C, ...], the last for channels-last
  static constexpr std::array kNames{"eps", "momentum", "axis"};
  LT_ATTR_FIELDS(eps, momentum, axis)
  bool operator==(const BatchNormAttrs&) const = default;
};
struct BatchNormGradAttrs {
  int64_t axis = 1;      // batch_norm's channel axis
  bool bf16_dx = false;  // dx rounded to bf16 (from its f32 value, as a cast rounds)
  static constexpr std::array kNames{"axis", "bf16_dx"};
  static constexpr size_t kRequired = 1;
  LT_ATTR_FIELDS(axis, bf16_dx)
  bool operator==(const BatchNormGradAttrs&) const = default;
};
struct AxisAttrs {
  int64_t axis = -1;  // normalized to non-negative by the frontend
  static constexpr std::array kNames{"axis"};
  LT_ATTR_FIELDS(axis)
  bool operator==(const AxisAttrs&) const = default;
};
struct CrossEntropyAttrs {
  double label_smoothing = 0;
  int64_t ignore_index = -100;  // rows with this label add nothing and are not counted
  static constexpr std::array kNames{"label_smoothing", "ignore_index"};
  LT_ATTR_FIELDS(label_smoothing, ignore_index)
  bool operator==(const CrossEntropyAttrs&) const = default;
};
struct EmbeddingGradAttrs {
  int64_t num_weights = 0;
  static constexpr std::array kNames{"num_weights"};
  LT_ATTR_FIELDS(num_weights)
  bool operator==(const EmbeddingGradAttrs&) const = default;
};
struct OneHotAttrs {
  int64_t num_classes = 0;
  DType dtype = DType::F32;
  static constexpr std::array kNames{"num_classes", "dtype"};
  LT_ATTR_FIELDS(num_classes, dtype)
  bool operator==(const OneHotAttrs&) const = default;
};
struct FullAttrs {
  Shape shape;
  DType dtype = DType::F32;
  double value = 0;
  static constexpr std::array kNames{"shape", "dtype", "value"};
  LT_ATTR_FIELDS(shape, dtype, value)
  bool operator==(const FullAttrs&) const = default;
};
struct IotaAttrs {
  int64_t size = 0;
  DType dtype = DType::I64;
  double start = 0, step = 1;
  static constexpr std::array kNames{"size", "dtype", "start", "step"};
  LT_ATTR_FIELDS(size, dtype, start, step)
  bool operator==(const IotaAttrs&) const = default;
};
struct RandomAttrs {
  Shape shape;
  DType dtype = DType::F32;
  static constexpr std::array kNames{"shape", "dtype"};
  LT_ATTR_FIELDS(shape, dtype)
  bool operator==(const RandomAttrs&) const = default;
};
struct CumsumAttrs {
  int64_t axis = 0;      // non-negative
  bool reverse = false;  // sums from the end of the axis (the gradient of a forward cumsum)
  static constexpr std::array kNames{"axis", "reverse"};
  LT_ATTR_FIELDS(axis, reverse)
  bool operator==(const CumsumAttrs&) const = default;
};
struct TopKAttrs {
  int64_t k = 1;
  int64_t axis = 0;     // non-negative
  bool largest = true;  // false: the k smallest
  static constexpr std::array kNames{"k", "axis", "largest"};
  LT_ATTR_FIELDS(k, axis, largest)
  bool operator==(const TopKAttrs&) const = default;
};
struct AllReduceAttrs {
  ReduceKind reduce = ReduceKind::Sum;
  static constexpr std::array kNames{"reduce"};
  LT_ATTR_FIELDS(reduce)
  bool operator==(const AllReduceAttrs&) const = default;
};
/// A reduce_scatter or all_gather of a 1-d operand over `world` ranks (the world size the graph
/// was traced for: the result's length depends on it, and the kernel checks it). `world` has no
/// usable default: 0 fails the type rule.
struct ReduceScatterAttrs {
  ReduceKind reduce = ReduceKind::Sum;
  int64_t world = 0;  // >= 1
  static constexpr std::array kNames{"reduce", "world"};
  LT_ATTR_FIELDS(reduce, world)
  bool operator==(const ReduceScatterAttrs&) const = default;
};
struct AllGatherAttrs {
  int64_t world = 0;  // >= 1
  static constexpr std::array kNames{"world"};
  LT_ATTR_FIELDS(world)
  bool operator==(const AllGatherAttrs&) const = default;
};
#undef LT_ATTR_FIELDS

using Attrs =
    std::variant<NoAttrs, CastAttrs, ReduceAttrs, ReshapeAttrs, PermuteAttrs, ExpandAttrs,
                 SliceAttrs, ConcatAttrs, PadAttrs, MatMulAttrs, ConvAttrs, PoolAttrs, NormAttrs,
                 AxisAttrs, CrossEntropyAttrs, EmbeddingGradAttrs, OneHotAttrs, FullAttrs,
                 IotaAttrs, RandomAttrs, CumsumAttrs, TopKAttrs, AllReduceAttrs, BatchNormAttrs,
                 BatchNormGradAttrs, ReduceScatterAttrs, AllGatherAttrs>;

/// Index of an attribute struct in the Attrs variant.
template <class T, class V = Attrs>
struct AttrsIndex;
template <class T, class... Ts>
struct AttrsIndex<T, std::variant<Ts...>> {
  static constexpr size_t value = [] {
    size_t i = 0;
    (void)((std::is_same_v<T, Ts> ? false : (++i, true)) && ...);
    return i;
  }();
};

/// "{axes=[1], keepdim=true}", or "" for NoAttrs. Doubles print in shortest round-trip form.
std::string attrs_str(const Attrs& a);
/// Hash of the attribute values (structural, stable within one build).
uint64_t attrs_hash(const Attrs& a);

}  // namespace lt::ir
