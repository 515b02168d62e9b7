// Elementwise kernels, generic over the rows of ir/ops/elementwise.def: each row runs its
// ir::scalar struct element by element, on the operand types its column takes. Unary rows with a
// vectorized path of their own (Eigen's array functions) opt in below; binary rows and where run
// one flat loop when every input is the output's layout or a single value (same shapes, tensor
// with scalar), else walk broadcast runs (broadcast_loop.h); all split across threads.
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ir/elementwise_scalar.h"
#include "ir/error.h"
#include "runtime/kernels/broadcast_loop.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/storage_types.h"

namespace lt::rt {
namespace {

using ir::ElementwiseOp;
using ir::Row;
using enum ir::ElementwiseOp;
namespace S = ir::scalar;
constexpr int64_t kGrain = 16384;

template <class T>
using ArrMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using ConstArrMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

/// parallel_for with every chunk starting at a multiple of 64 elements from the start. Eigen
/// computes a range's unaligned head and its tail with scalar code whose exp/tanh/... differ from
/// the packet code in the last bit, so chunk boundaries that depend on the thread count would
/// change results; these fall on packet boundaries of the (64-byte aligned) buffers instead.
template <class F>
void parallel_for_packets(int64_t n, F&& f) {
  constexpr int64_t kBlock = 64;  // elements: a multiple of every packet size
  parallel_for((n + kBlock - 1) / kBlock, kGrain / kBlock, [&](int64_t b, int64_t e) {
    f(b * kBlock, std::min(n, e * kBlock));
  });
}

/// y = math(x) over [0, n) with Eigen's packets, but libm's function (as compiled kernels and fold
/// compute it) at the elements where edge(x) holds, which Eigen gets wrong:
/// - log of a positive subnormal: Eigen takes it for the smallest normal number (its log(1e-40f)
///   is -87.34, not -92.10);
/// - exp below log(smallest normal), where the result is subnormal or 0: Eigen clamps the
///   argument (at -88.72 for f32), so its exp(-1000) is 2.9e-39, not 0.
/// Blocks are first looked over for such elements (the block is then in L1 for Eigen's pass); a
/// block holding one gets libm's values there. Blocks are whole packets from a 64-element
/// boundary, so the other elements get the bits of one Eigen call over [0, n). x may be y.
template <class T, class Edge, class EigenMath, class Libm>
void with_libm_edges(const T* x, T* y, int64_t n, Edge edge, EigenMath math, Libm libm) {
  constexpr int64_t kBlock = 2048;  // elements: a multiple of 64, 8-16 KiB
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t m = std::min(kBlock, n - s);
    int any = 0;  // an int, not a bool: GCC vectorizes this loop only then
    for (int64_t i = s; i < s + m; ++i) any |= edge(x[i]);
    if (any == 0) {
      ArrMap<T>(y + s, m) = math(ConstArrMap<T>(x + s, m));
      continue;
    }
    alignas(64) std::array<T, kBlock> in;
    std::copy(x + s, x + s + m, in.begin());
    ArrMap<T>(y + s, m) = math(ConstArrMap<T>(in.data(), m));
    for (int64_t i = 0; i < m; ++i)
      if (edge(in[i])) y[s + i] = libm(in[i]);
  }
}

template <class T>
void log_with_subnormals(const T* x, T* y, int64_t n) {
  constexpr T kMinNormal = std::numeric_limits<T>::min();
  with_libm_edges(
      x, y, n, [](T v) { return (v > T(0)) & (v < kMinNormal); },
      [](const auto& a) { return a.log(); }, [](T v) { return S::Log::apply(v); });
}

template <class T>
void exp_with_underflow(const T* x, T* y, int64_t n) {
  static const T log_min = std::log(std::numeric_limits<T>::min());
  with_libm_edges(
      x, y, n, [](T v) { return v < log_min; }, [](const auto& a) { return a.exp(); },
      [](T v) { return S::Exp::apply(v); });
}

/// y = math(x) over [0, n), one Eigen expression.
template <class T, class Math>
void eigen(const T* x, T* y, int64_t n, Math math) {
  ArrMap<T>(y, n) = math(ConstArrMap<T>(x, n));
}

// The unary rows with a vectorized path of their own, over [0, n) of float x into y (which may
// be x): an opt-in, one overload per row. Each computes its ir::scalar struct's meaning within a
// few ulps (UnaryKernel.EveryRowMatchesItsScalarDefinition); every other unary row runs the
// struct itself (unary below).
template <class T>
void fast(Row<Exp>, const T* x, T* y, int64_t n) { exp_with_underflow(x, y, n); }
template <class T>
void fast(Row<Log>, const T* x, T* y, int64_t n) { log_with_subnormals(x, y, n); }
template <class T>
void fast(Row<Sqrt>, const T* x, T* y, int64_t n) {
  eigen(x, y, n, [](const auto& a) { return a.sqrt(); });
}
template <class T>
void fast(Row<Rsqrt>, const T* x, T* y, int64_t n) {
  eigen(x, y, n, [](const auto& a) { return a.rsqrt(); });
}
template <class T>
void fast(Row<Tanh>, const T* x, T* y, int64_t n) {
  eigen(x, y, n, [](const auto& a) { return a.tanh(); });
}
template <class T>
void fast(Row<Sigmoid>, const T* x, T* y, int64_t n) {
  eigen(x, y, n, [](const auto& a) { return a.logistic(); });
}
template <class T>
void fast(Row<Sin>, const T* x, T* y, int64_t n) {
  eigen(x, y, n, [](const auto& a) { return a.sin(); });
}
template <class T>
void fast(Row<Cos>, const T* x, T* y, int64_t n) {
  eigen(x, y, n, [](const auto& a) { return a.cos(); });
}
template <class T>
void fast(Row<Reciprocal>, const T* x, T* y, int64_t n) {
  eigen(x, y, n, [](const auto& a) { return a.inverse(); });
}
// ir::scalar::Gelu's expression on Eigen arrays, with Eigen's tanh.
template <class T>
void fast(Row<Gelu>, const T* x, T* y, int64_t n) {
  eigen(x, y, n, [](const auto& a) {
    return S::Gelu::formula<T>(a, [](const auto& v) { return v.tanh(); });
  });
}
// ir::scalar::GeluErfGrad with its exp vectorized as Exp's, through a buffer of its own (y may
// be x's buffer), 64-byte aligned as the tensors are: Eigen's scalar head of an unaligned buffer
// would give other bits than its packets, depending on where the stack frame lies.
template <class T>
void fast(Row<GeluErfGrad>, const T* x, T* y, int64_t n) {
  alignas(64) std::array<T, 256> pdf;
  for (int64_t s = 0; s < n; s += static_cast<int64_t>(pdf.size())) {
    const int64_t m = std::min<int64_t>(n - s, pdf.size());
    for (int64_t i = 0; i < m; ++i) pdf[i] = S::GeluErfGrad::exp_arg(x[s + i]);
    exp_with_underflow(pdf.data(), pdf.data(), m);
    for (int64_t i = 0; i < m; ++i) y[s + i] = S::GeluErfGrad::with_exp(x[s + i], pdf[i]);
  }
}

template <ElementwiseOp E, class T>
concept HasFastPath = requires(const T* x, T* y) { fast(Row<E>{}, x, y, int64_t{0}); };

/// A unary row over every element: its fast path, or its ir::scalar struct (IsFinite's result
/// is bool). Chunks start at multiples of 64 elements (parallel_for_packets).
template <ElementwiseOp E, class T>
void unary(const TensorRef& in, const TensorRef& out) {
  using R = decltype(S::Fn<E>::apply(T{}));
  const T* x = in.as<T>();
  R* y = out.as<R>();
  parallel_for_packets(out.numel(), [&](int64_t b, int64_t e) {
    if constexpr (HasFastPath<E, T>) {
      fast(Row<E>{}, x + b, y + b, e - b);
    } else {
      for (int64_t i = b; i < e; ++i) y[i] = S::Fn<E>::apply(x[i]);
    }
  });
}

// Casts: every pair of dtypes, the 2-byte float types through Eigen's half/bfloat16.
void cast(const TensorRef& x, const TensorRef& y) {
  dispatch_storage(x.dtype(), [&](auto s) {
    dispatch_storage(y.dtype(), [&](auto d) {
      using Src = decltype(s);
      using Dst = decltype(d);
      const Src* src = x.as<Src>();
      Dst* dst = y.as<Dst>();
      parallel_for(x.numel(), kGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) dst[i] = convert_value<Dst>(src[i]);
      });
    });
  });
}

// --- binary ---------------------------------------------------------------------------------

// An input of one run of outputs: element i is p[i] when it moves along the run, else the one
// value it broadcasts, loaded once into a local (a load through p each iteration could alias
// the output and would keep the loop from vectorizing).
template <bool kMoves, class T>
struct RunInput {
  const T* p;
  T value;
  explicit RunInput(const T* x) : p(x), value(kMoves ? T{} : *x) {}
  T operator[](int64_t i) const {
    if constexpr (kMoves) return p[i];
    else return value;
  }
};

// Every loop over a run is one flat loop: out[i] = f(a[i], b[i]) with each input moving or
// fixed, known at compile time. The output may be the same buffer as a moving input (in-place
// ops); elements never depend on other elements, so that is safe (hence ivdep).
// (GCC only: clang's nearest pragma demands vectorization and warns wherever it cannot.)
#if defined(__clang__)
#define LT_IVDEP
#else
#define LT_IVDEP _Pragma("GCC ivdep")
#endif
template <bool kA, bool kB, class R, class T, class F>
void binary_run(const T* a, const T* b, R* out, int64_t n, F f) {
  const RunInput<kA, T> x(a);
  const RunInput<kB, T> y(b);
  LT_IVDEP
  for (int64_t i = 0; i < n; ++i) out[i] = f(x[i], y[i]);
}

template <class R, class T, class F>
void binary_run(bool a_moves, bool b_moves, const T* a, const T* b, R* out, int64_t n, F f) {
  if (a_moves && b_moves) binary_run<true, true>(a, b, out, n, f);
  else if (a_moves) binary_run<true, false>(a, b, out, n, f);
  else if (b_moves) binary_run<false, true>(a, b, out, n, f);
  else binary_run<false, false>(a, b, out, n, f);
}

template <class T>
using SameSizeUnsigned =
    std::conditional_t<sizeof(T) == 1, uint8_t,
                       std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;

/// c ? x : y (ir::scalar::Where), selected on the bits. GCC 12 vectorizes neither a
/// `bool ? T : T` select with T wider than a byte ("stmt not supported": it branches per element)
/// nor a bool-to-int conversion; a byte compared with 0 and a bit mask do vectorize.
template <class T>
T select_bits(uint8_t c, T x, T y) {
  using U = SameSizeUnsigned<T>;
  static_assert(sizeof(U) == sizeof(T));
  const U mask = c != 0 ? static_cast<U>(~U{0}) : U{0};
  return std::bit_cast<T>(
      static_cast<U>((std::bit_cast<U>(x) & mask) | (std::bit_cast<U>(y) & ~mask)));
}

template <bool kC, bool kA, bool kB, class T>
void where_run(const bool* c, const T* a, const T* b, T* out, int64_t n) {
  // Bools read as their bytes (char types may alias any object).
  const RunInput<kC, uint8_t> cond(reinterpret_cast<const uint8_t*>(c));
  const RunInput<kA, T> x(a);
  const RunInput<kB, T> y(b);
  LT_IVDEP
  for (int64_t i = 0; i < n; ++i) out[i] = select_bits(cond[i], x[i], y[i]);
}

template <class T>
void where_run(const std::array<bool, 3>& moves, const bool* c, const T* a, const T* b, T* out,
               int64_t n) {
  const int key = (moves[0] ? 4 : 0) | (moves[1] ? 2 : 0) | (moves[2] ? 1 : 0);
  switch (key) {
    case 7: return where_run<true, true, true>(c, a, b, out, n);
    case 6: return where_run<true, true, false>(c, a, b, out, n);
    case 5: return where_run<true, false, true>(c, a, b, out, n);
    case 4: return where_run<true, false, false>(c, a, b, out, n);
    case 3: return where_run<false, true, true>(c, a, b, out, n);
    case 2: return where_run<false, true, false>(c, a, b, out, n);
    case 1: return where_run<false, false, true>(c, a, b, out, n);
    case 0: return where_run<false, false, false>(c, a, b, out, n);
  }
  LT_UNREACHABLE();
}

/// True when every input is laid out like the output (same numel: broadcasting only added
/// size-1 dims) or is a single value, so the op is one flat run; moves[k] says which inputs are
/// the former. The common eager cases: same shapes, and a tensor with a scalar.
template <size_t N>
bool flat_layout(const std::array<const TensorRef*, N>& in, const TensorRef& out,
                 std::array<bool, N>& moves) {
  const int64_t n = out.numel();
  for (size_t k = 0; k < N; ++k) {
    const int64_t m = in[k]->numel();
    if (m != n && m != 1) return false;
    moves[k] = m == n;
  }
  return true;
}

template <class R, class T, class F>
void binary_loop(const TensorRef& a, const TensorRef& b, const TensorRef& out, F f) {
  const T* pa = a.as<T>();
  const T* pb = b.as<T>();
  R* po = out.as<R>();
  std::array<bool, 2> moves;
  if (flat_layout<2>({&a, &b}, out, moves)) {
    parallel_for(out.numel(), kGrain, [&](int64_t s, int64_t e) {
      binary_run(moves[0], moves[1], pa + (moves[0] ? s : 0), pb + (moves[1] ? s : 0), po + s,
                 e - s, f);
    });
    return;
  }
  const auto plan = make_broadcast_plan<2>(out.shape(), {&a.shape(), &b.shape()});
  const bool a_moves = plan.inner_stride[0] != 0, b_moves = plan.inner_stride[1] != 0;
  for_each_run(plan, kGrain, [&](int64_t o, const std::array<int64_t, 2>& off, int64_t n) {
    binary_run(a_moves, b_moves, pa + off[0], pb + off[1], po + o, n, f);
  });
}

/// Rows whose checks column holds for T check their operands before the loop (ir::checks_data).
template <ElementwiseOp E, class T>
void check_data(const TensorRef& b) {
  constexpr ir::DataCheck c = ir::info(E).checks;
  if constexpr (c == ir::DataCheck::Yes || (c == ir::DataCheck::IfInt && std::is_integral_v<T>)) {
    static_assert(E == Div || E == Remainder || E == FloorDivide || E == Fmod,
                  "a row that checks its data needs its check here");
    const T* pb = b.as<T>();
    for (int64_t i = 0; i < b.numel(); ++i)
      if (pb[i] == 0)
        throw Error(fmt::format("{}: integer division by zero", ir::mnemonic(ir::to_op(E))));
  }
}

// The row's struct is passed in a lambda (a distinct type per row), never as a function pointer:
// one shared pointer-typed instantiation would keep the call out of line and the loop scalar.
template <ElementwiseOp E, class T>
void binary(const TensorRef& a, const TensorRef& b, const TensorRef& o) {
  using F = S::Fn<E>;
  check_data<E, T>(b);
  binary_loop<decltype(F::apply(T{}, T{})), T>(a, b, o, [](T x, T y) { return F::apply(x, y); });
}

template <class T>
void where(const TensorRef& c, const TensorRef& a, const TensorRef& b, const TensorRef& out) {
  const bool* pc = c.as<bool>();
  const T* pa = a.as<T>();
  const T* pb = b.as<T>();
  T* po = out.as<T>();
  std::array<bool, 3> moves;
  if (flat_layout<3>({&c, &a, &b}, out, moves)) {
    parallel_for(out.numel(), kGrain, [&](int64_t s, int64_t e) {
      where_run(moves, pc + (moves[0] ? s : 0), pa + (moves[1] ? s : 0),
                pb + (moves[2] ? s : 0), po + s, e - s);
    });
    return;
  }
  const auto plan = make_broadcast_plan<3>(out.shape(), {&c.shape(), &a.shape(), &b.shape()});
  const std::array<bool, 3> run_moves = {plan.inner_stride[0] != 0, plan.inner_stride[1] != 0,
                                         plan.inner_stride[2] != 0};
  for_each_run(plan, kGrain, [&](int64_t o, const std::array<int64_t, 3>& off, int64_t n) {
    where_run(run_moves, pc + off[0], pa + off[1], pb + off[2], po + o, n);
  });
}

}  // namespace

namespace {

/// f(T{}) for dt's C++ type, among the types row E's operand column takes (the type rule
/// rejected the others).
template <ElementwiseOp E, class F>
void dispatch_operands(DType dt, F&& f) {
  dispatch_dtype(dt, [&](auto t) {
    if constexpr (S::takes<decltype(t)>(ir::info(E).operands)) f(t);
    else LT_UNREACHABLE();
  });
}

template <ElementwiseOp E>
void run_row(Ins in, Outs out) {
  constexpr ir::OpInfo row = ir::info(E);
  if constexpr (row.result == ir::ResultKind::Attr) {  // cast, to the attribute's dtype
    cast(in[0], out[0]);
  } else if constexpr (row.operands == ir::OperandKind::Select) {
    dispatch_operands<E>(in[1].dtype(),
                         [&](auto t) { where<decltype(t)>(in[0], in[1], in[2], out[0]); });
  } else if constexpr (row.arity == 1) {
    dispatch_operands<E>(in[0].dtype(), [&](auto t) { unary<E, decltype(t)>(in[0], out[0]); });
  } else {
    static_assert(row.arity == 2, "an elementwise row of another arity needs its loop here");
    dispatch_operands<E>(in[0].dtype(),
                         [&](auto t) { binary<E, decltype(t)>(in[0], in[1], out[0]); });
  }
}

}  // namespace

void run_elementwise(ir::ElementwiseOp op, const ir::Attrs&, Ins in, Outs out) {
  ir::visit_row(op, [&]<ElementwiseOp E>(Row<E>) { run_row<E>(in, out); });
}

}  // namespace lt::rt
