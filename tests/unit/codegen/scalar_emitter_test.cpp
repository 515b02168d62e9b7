// Every elementwise row, compiled alone into a loop kernel on each operand type its column takes
// (where the emitter takes it: integer division stays an eager kernel), against its
// ir::scalar definition: a row without an emitter fails to compile, one whose emitter computes
// something else fails here.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "codegen/loop_emitter.h"
#include "codegen/scalar_emitter.h"
#include "ir/elementwise_scalar.h"
#include "runtime/executable.h"
#include "tests/unit/codegen/test_modules.h"

namespace lt::codegen {
namespace {

using ir::ElementwiseOp;

template <class T>
constexpr DType kDType = std::is_same_v<T, bool>      ? DType::Bool
                         : std::is_same_v<T, int32_t> ? DType::I32
                         : std::is_same_v<T, int64_t> ? DType::I64
                         : std::is_same_v<T, double>  ? DType::F64
                                                      : DType::F32;

/// Floats: [-20, 20] in steps of 0.01 and the values where rows change behavior (NaN, +-inf,
/// +-0, tiny, huge); integers: [-2000, 2000] and the extremes; bool: both.
template <class T>
std::vector<T> sweep() {
  using L = std::numeric_limits<T>;
  if constexpr (std::is_same_v<T, bool>) {
    return {false, true, true, false};
  } else if constexpr (std::is_floating_point_v<T>) {
    std::vector<T> v = {L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), -T(0),
                        L::denorm_min(), L::min(), L::max(), L::lowest(), T(1e-10), T(-1e-10),
                        T(1e-30), T(50), T(-50), T(88), T(-88), T(100), T(-100), T(1e10)};
    for (int i = -2000; i <= 2000; ++i) v.push_back(static_cast<T>(i * 0.01));
    return v;
  } else {
    std::vector<T> v = {L::min(), L::max()};
    for (int i = -2000; i <= 2000; ++i) v.push_back(static_cast<T>(i));
    return v;
  }
}

/// Equal for integers and bools; for floats NaN with NaN, an inf with the same inf, else within
/// 8 ulps of `scale` (the values the row computes on: libm and LLVM's vector math differ there
/// in the last bits, and gelu loses more to cancellation).
template <class R>
bool close(R got, R want, double scale) {
  if constexpr (!std::is_floating_point_v<R>) {
    return got == want;
  } else {
    if (std::isnan(want) || std::isinf(want))
      return std::isnan(want) ? std::isnan(got) : got == want;
    const double tol = 8 * std::numeric_limits<R>::epsilon() * (std::fabs(double(want)) + scale);
    return std::fabs(double(got) - double(want)) <= tol;
  }
}

/// A loop kernel of one graph's one node.
struct Kernel {
  std::unique_ptr<Jit> jit;
  rt::LoopKernelFn fn = nullptr;
  int64_t rows = 0;
};

Kernel compile_node(const ir::Graph& g) {
  std::vector<ir::FusionGroup> groups(1);
  groups[0].kind = ir::KernelKind::Loop;
  groups[0].shape = g.node(0).types[0].shape;
  groups[0].nodes = {0};
  ir::fill_group_io(g, std::vector<int>{0}, groups);
  Kernel k;
  k.jit = Jit::create();
  testing::TestModule tm(*k.jit);
  k.rows = emit_loop_kernel(*tm.m, g, groups[0], "kernel").rows;
  tm.add_to(*k.jit);
  k.fn = reinterpret_cast<rt::LoopKernelFn>(k.jit->lookup("kernel"));
  return k;
}

/// Bools as their bytes, the kernels' storage.
template <class T>
using Stored = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

/// Row E on `arity` operands of type T ([n] each; where: a bool condition first; cast: to f64),
/// compiled, against its definition at every element.
template <ElementwiseOp E, class T>
void check_row() {
  constexpr ir::OpInfo row = ir::info(E);
  constexpr bool select = row.operands == ir::OperandKind::Select;
  const std::vector<T> x = sweep<T>();
  const int64_t n = static_cast<int64_t>(x.size());
  // Operand k is x shifted by k * 7 elements (binary rows meet every pair of kinds of values).
  std::vector<std::vector<Stored<T>>> in;
  std::vector<std::vector<uint8_t>> cond;
  ir::Graph g("row");
  std::vector<ir::Value> params;
  for (int k = select ? 1 : 0; k < row.arity; ++k) {
    if (select && cond.empty()) {
      cond.push_back({});
      for (int64_t i = 0; i < n; ++i) cond[0].push_back(static_cast<uint8_t>((i / 3) % 2));
      params.push_back(g.add_param({DType::Bool, {n}}));
    }
    std::vector<Stored<T>> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<Stored<T>>(x[(i + 7 * k) % n]);
    in.push_back(std::move(v));
    params.push_back(g.add_param({kDType<T>, {n}}));
  }
  ir::Attrs attrs = ir::NoAttrs{};
  if constexpr (row.result == ir::ResultKind::Attr) attrs = ir::CastAttrs{DType::F64};
  g.set_results({g.add(ir::to_op(E), params, attrs)});
  if (!backends::cpu().rules().computes(g, 0)) return;  // a node loop kernels leave alone
  const Kernel k = compile_node(g);
  using R = std::conditional_t<row.result == ir::ResultKind::Attr, double,
                               decltype(ir::scalar::apply_row<E, T>(std::span<const T>()))>;
  std::vector<Stored<R>> y(n);
  std::vector<void*> buffers;
  for (auto& c : cond) buffers.push_back(c.data());
  for (auto& v : in) buffers.push_back(v.data());
  buffers.push_back(y.data());
  k.fn(buffers.data(), 0, k.rows);
  int bad = 0;
  for (int64_t i = 0; i < n && bad < 5; ++i) {
    std::array<T, 3> xs{};
    size_t m = 0;
    if (select) xs[m++] = static_cast<T>(cond[0][i]);
    double scale = 1;
    for (const auto& v : in) {
      xs[m++] = static_cast<T>(v[i]);
      if (std::isfinite(static_cast<double>(v[i]))) scale += std::fabs(static_cast<double>(v[i]));
    }
    R want;
    if constexpr (row.result == ir::ResultKind::Attr) want = ir::scalar::cast<double>(xs[0]);
    else want = ir::scalar::apply_row<E, T>(std::span<const T>(xs.data(), m));
    const R got = static_cast<R>(y[i]);
    if (!close(got, want, scale)) {
      std::string args;
      for (size_t j = 0; j < m; ++j) args += (j ? ", " : "") + std::to_string(xs[j]);
      ADD_FAILURE() << ir::mnemonic(ir::to_op(E)) << " " << dtype_name(kDType<T>) << "(" << args
                    << ") = " << got << " compiled, " << want << " by its definition";
      ++bad;
    }
  }
}

TEST(ScalarEmitter, EveryElementwiseRowMatchesItsScalarDefinition) {
  for (ir::Op op : ir::all_ops()) {
    const auto e = ir::as_elementwise(op);
    if (!e) continue;
    SCOPED_TRACE(std::string(ir::mnemonic(op)));
    ir::visit_row(*e, [&]<ElementwiseOp E>(ir::Row<E>) {
      constexpr ir::OperandKind kind = ir::info(E).operands;
      if constexpr (ir::scalar::takes<float>(kind)) check_row<E, float>();
      if constexpr (ir::scalar::takes<double>(kind)) check_row<E, double>();
      if constexpr (ir::scalar::takes<int32_t>(kind)) check_row<E, int32_t>();
      if constexpr (ir::scalar::takes<int64_t>(kind)) check_row<E, int64_t>();
      if constexpr (ir::scalar::takes<bool>(kind)) check_row<E, bool>();
    });
  }
}

}  // namespace
}  // namespace lt::codegen
