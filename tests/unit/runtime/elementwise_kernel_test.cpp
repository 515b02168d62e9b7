// The elementwise kernels' fast paths (same shapes, a scalar on either side, row and channel
// broadcasts, where with scalar branches) against a naive broadcasting loop written here over
// each row's ir::scalar definition, bit for bit, on f32/f64/i32/i64/bool with NaN, inf, -0 and
// denormals, at 1 and 2 threads; and every unary row against its definition.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/elementwise_scalar.h"
#include "ir/error.h"
#include "ir/type_rules.h"
#include "runtime/kernels/kernel.h"
#include "runtime/thread_pool.h"

#include "tests/unit/runtime/host_tensor.h"

namespace lt {
namespace {

using testing::Aligned64;

using ir::Op;


/// A tensor as raw bytes; elements are read and written with memcpy (no aliasing questions, and
/// bool is stored as the bytes the kernels see).
struct Buf {
  TensorType type;
  std::vector<std::byte, Aligned64<std::byte>> bytes;

  Buf(DType dt, Shape shape, std::byte fill = std::byte{0})
      : type{dt, std::move(shape)}, bytes(type.bytes(), fill) {}
  rt::TensorRef ref() { return {bytes.data(), &type}; }
  template <class T>
  T get(int64_t i) const {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return v;
  }
  template <class T>
  void put(int64_t i, T v) {
    std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
};

template <class T>
constexpr DType dtype_of = std::is_same_v<T, bool>      ? DType::Bool
                           : std::is_same_v<T, int32_t> ? DType::I32
                           : std::is_same_v<T, int64_t> ? DType::I64
                           : std::is_same_v<T, double>  ? DType::F64
                                                        : DType::F32;

/// Sets the runtime's thread count for a scope.
class Threads {
 public:
  explicit Threads(int n) : saved_(rt::num_threads()) { rt::set_num_threads(n); }
  ~Threads() { rt::set_num_threads(saved_); }

 private:
  int saved_;
};

// --- values -----------------------------------------------------------------------------------

/// Every fourth value special: NaN (one bit pattern, so a kernel that swaps the operands of a
/// commutative op cannot change which NaN wins), +-inf, +-0, denormals, extremes, +-1; else
/// uniform. `small` keeps integers where +, -, * cannot overflow (undefined for signed ints).
template <class T>
T sample(std::mt19937& rng, bool small) {
  using L = std::numeric_limits<T>;
  if constexpr (std::is_same_v<T, bool>) {
    return (rng() & 1) != 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    const T specials[] = {L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), -T(0),
                          L::denorm_min(), -L::denorm_min(), L::max(), L::lowest(), T(1), T(-1)};
    if (rng() % 4 == 0) return specials[rng() % std::size(specials)];
    return static_cast<T>(std::uniform_real_distribution<double>(-4, 4)(rng));
  } else {
    if (small) return static_cast<T>(std::uniform_int_distribution<int>(-30000, 30000)(rng));
    const T specials[] = {T(0), T(1), T(-1), L::min(), L::max()};
    if (rng() % 4 == 0) return specials[rng() % std::size(specials)];
    return static_cast<T>(std::uniform_int_distribution<int64_t>(-1000000, 1000000)(rng));
  }
}

/// Values drawn from a pool of samples: sampling each of millions of elements would dominate the
/// test's time.
template <class T>
Buf random_buf(const Shape& s, std::mt19937& rng, bool small = false) {
  std::vector<T> pool(4099);
  for (size_t i = 0; i < pool.size(); ++i) pool[i] = sample<T>(rng, small);
  Buf b(dtype_of<T>, s);
  const int64_t n = b.type.numel();
  for (int64_t i = 0; i < n; ++i) b.put<T>(i, pool[rng() % pool.size()]);
  return b;
}

// --- the naive reference ----------------------------------------------------------------------

/// Per output dim, the input's element stride: 0 where the input is 1 or lacks the dim.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  int64_t acc = 1;
  for (size_t k = 0; k < in.size(); ++k) {
    const size_t i = in.size() - 1 - k, o = out.size() - 1 - k;
    if (in[i] != 1) st[o] = acc;
    acc *= in[i];
  }
  return st;
}

/// Calls f(out_index, input_indices) for every output element in order, with an odometer over
/// the output's multi-index: nothing shared with the kernels' collapsing or splitting.
template <size_t N, class F>
void for_each_element(const Shape& out, const std::array<const Shape*, N>& in, F f) {
  std::array<std::vector<int64_t>, N> st;
  for (size_t k = 0; k < N; ++k) st[k] = broadcast_strides(*in[k], out);
  std::vector<int64_t> idx(out.size(), 0);
  std::array<int64_t, N> off{};
  const int64_t n = numel(out);
  for (int64_t o = 0; o < n; ++o) {
    f(o, off);
    for (size_t d = out.size(); d-- > 0;) {
      for (size_t k = 0; k < N; ++k) off[k] += st[k][d];
      if (++idx[d] < out[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= idx[d] * st[k][d];
      idx[d] = 0;
    }
  }
}

/// op on x and y by its ir::scalar definition, in T (a comparison's result as 0 or 1).
template <class T>
T ref_value(Op op, T x, T y) {
  const T xy[] = {x, y};
  const std::optional<T> v = ir::scalar::evaluate<T>(*ir::as_elementwise(op), std::span(xy));
  if (!v) ADD_FAILURE() << ir::mnemonic(op) << " does not take this operand type";
  return v.value_or(T{});
}

template <class T>
Buf ref_binary(Op op, const Buf& a, const Buf& b, const TensorType& out_type) {
  Buf out(out_type.dtype, out_type.shape);
  for_each_element<2>(out_type.shape, {&a.type.shape, &b.type.shape},
                      [&](int64_t o, const std::array<int64_t, 2>& i) {
                        const T v = ref_value(op, a.get<T>(i[0]), b.get<T>(i[1]));
                        if (out_type.dtype == DType::Bool) out.put<bool>(o, v != T(0));
                        else out.put<T>(o, v);
                      });
  return out;
}

template <class T>
Buf ref_where(const Buf& c, const Buf& a, const Buf& b, const TensorType& out_type) {
  Buf out(out_type.dtype, out_type.shape);
  for_each_element<3>(out_type.shape, {&c.type.shape, &a.type.shape, &b.type.shape},
                      [&](int64_t o, const std::array<int64_t, 3>& i) {
                        out.put<T>(o, c.get<bool>(i[0]) ? a.get<T>(i[1]) : b.get<T>(i[2]));
                      });
  return out;
}

// --- running the kernel -----------------------------------------------------------------------

/// Runs op with its output typed by infer_types and prefilled with 0xff bytes, so an element
/// the kernel forgets to write fails the comparison.
TensorType out_type(Op op, const std::vector<Buf*>& in) {
  std::vector<TensorType> types;
  for (const Buf* b : in) types.push_back(b->type);
  return ir::infer_types(op, types, ir::NoAttrs{}).at(0);
}

Buf run(Op op, const std::vector<Buf*>& in) {
  std::vector<rt::TensorRef> refs;
  for (Buf* b : in) refs.push_back(b->ref());
  const TensorType t = out_type(op, in);
  Buf out(t.dtype, t.shape, std::byte{0xff});
  const rt::TensorRef outs[] = {out.ref()};
  rt::run_kernel(op, ir::NoAttrs{}, refs, outs);
  return out;
}

/// The index of the first differing element, or -1.
int64_t first_difference(const Buf& x, const Buf& y) {
  if (x.type != y.type) return 0;
  if (x.bytes == y.bytes) return -1;
  const size_t size = dtype_size(x.type.dtype);
  const int64_t n = x.type.numel();
  for (int64_t i = 0; i < n; ++i)
    if (std::memcmp(x.bytes.data() + i * size, y.bytes.data() + i * size, size) != 0) return i;
  return -1;
}

std::string describe(const std::vector<const Buf*>& in) {
  std::string s;
  for (const Buf* b : in) s += type_str(b->type) + " ";
  return s;
}

struct Layout {
  Shape a, b;
};

std::vector<Layout> flat_layouts(const std::vector<int64_t>& sizes) {
  std::vector<Layout> v;
  for (int64_t n : sizes) {
    v.push_back({{n}, {n}});
    v.push_back({{n}, {}});   // scalar on the right
    v.push_back({{}, {n}});   // scalar on the left
    v.push_back({{n}, {1}});  // a numel-1 tensor, not 0-d
    v.push_back({{1, n}, {n}});  // same numel, different rank
  }
  return v;
}

std::vector<Layout> broadcast_layouts() {
  return {{{7, 15}, {15}},           {{15}, {7, 15}},           {{3, 5, 17}, {5, 1}},
          {{2, 3, 4, 5}, {1, 3, 1, 1}}, {{1, 3, 1, 1}, {2, 3, 4, 5}}, {{4, 1, 6}, {1, 5, 1}},
          {{0, 5}, {5}},             {{2, 1, 3}, {}},           {{128, 10}, {128, 1}}};
}

// Large enough that every path splits across threads, with short tails.
std::vector<Layout> large_layouts() {
  auto v = flat_layouts({1000003});
  v.push_back({{1001, 1003}, {1003}});        // row broadcast, many rows
  v.push_back({{3, 333337}, {3, 1}});         // few long rows: split within rows
  v.push_back({{7, 3, 211, 223}, {1, 3, 1, 1}});  // channel broadcast
  return v;
}

/// The binary rows (the table's, arity 2) whose operand column takes T.
template <class T>
std::vector<Op> binary_rows() {
  std::vector<Op> v;
  for (Op op : ir::all_ops()) {
    const ir::OpInfo& row = ir::info(op);
    if (row.family == ir::OpFamily::Elementwise && row.arity == 2 &&
        ir::scalar::takes<T>(row.operands))
      v.push_back(op);
  }
  return v;
}

template <class T>
void check_binary(Op op, const Layout& l, std::mt19937& rng) {
  const bool small = op == Op::Add || op == Op::Sub || op == Op::Mul;
  Buf a = random_buf<T>(l.a, rng, small), b = random_buf<T>(l.b, rng, small);
  if (ir::checks_data(op, dtype_of<T>))  // integer division: no zero divisors
    for (int64_t i = 0; i < b.type.numel(); ++i)
      if (b.get<T>(i) == T(0)) b.put<T>(i, T(3));
  const Buf want = ref_binary<T>(op, a, b, out_type(op, {&a, &b}));
  for (int threads : {1, 2}) {
    Threads guard(threads);
    const Buf got = run(op, {&a, &b});
    const int64_t at = first_difference(got, want);
    EXPECT_EQ(at, -1) << ir::mnemonic(op) << " " << describe({&a, &b}) << "threads " << threads
                      << ": first difference at element " << at;
  }
}

template <class T>
class BinaryKernel : public ::testing::Test {};
using NumericTypes = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(BinaryKernel, NumericTypes);

TYPED_TEST(BinaryKernel, SmallLayoutsMatchReference) {
  std::mt19937 rng(1);
  auto layouts = flat_layouts({1, 15, 17});
  for (const Layout& l : broadcast_layouts()) layouts.push_back(l);
  for (const Layout& l : layouts)
    for (Op op : binary_rows<TypeParam>()) check_binary<TypeParam>(op, l, rng);
}

TYPED_TEST(BinaryKernel, LargeLayoutsMatchReference) {
  std::mt19937 rng(2);
  for (const Layout& l : large_layouts())
    for (Op op : {Op::Add, Op::Div, Op::Maximum, Op::Lt}) check_binary<TypeParam>(op, l, rng);
}

TEST(BinaryKernel, BoolEqualityMatchesReference) {
  std::mt19937 rng(3);
  auto layouts = flat_layouts({1, 15, 17, 1000003});
  for (const Layout& l : broadcast_layouts()) layouts.push_back(l);
  for (const Layout& l : layouts)
    for (Op op : binary_rows<bool>()) check_binary<bool>(op, l, rng);
}

TEST(BinaryKernel, IntegerDivisionByZeroThrows) {
  for (const Shape& divisor : {Shape{}, Shape{17}}) {
    Buf a(DType::I32, {17}), b(DType::I32, divisor);
    EXPECT_THROW(run(Op::Div, {&a, &b}), Error) << type_str(b.type);
  }
}

// Found by fuzz_ir_compile (UBSan: signed overflow in the i32 add kernel): integer add, sub and
// mul wrap in two's complement.
TEST(BinaryKernel, IntegerArithmeticWraps) {
  const int32_t mx = std::numeric_limits<int32_t>::max(), mn = std::numeric_limits<int32_t>::min();
  Buf a(DType::I32, {3}), b(DType::I32, {3});
  for (int i = 0; i < 3; ++i) {
    a.put<int32_t>(i, i == 1 ? mn : mx);
    b.put<int32_t>(i, i == 1 ? 1 : 4);
  }
  const Buf add = run(Op::Add, {&a, &b}), sub = run(Op::Sub, {&a, &b}),
            mul = run(Op::Mul, {&a, &b});
  EXPECT_EQ(add.get<int32_t>(0), mn + 3);  // max + 4
  EXPECT_EQ(sub.get<int32_t>(1), mx);      // min - 1
  EXPECT_EQ(mul.get<int32_t>(2), -4);      // max * 4 = 2^33 - 4
}

// --- where ------------------------------------------------------------------------------------

struct WhereLayout {
  Shape c, a, b;
};

/// Each of cond, a, b either [n] or a 0-d scalar (all 8 mixes), for each n.
std::vector<WhereLayout> where_flat_layouts(const std::vector<int64_t>& sizes) {
  std::vector<WhereLayout> v;
  for (int64_t n : sizes)
    for (int mix = 0; mix < 8; ++mix) {
      auto pick = [&](int bit) { return (mix >> bit) & 1 ? Shape{n} : Shape{}; };
      v.push_back({pick(2), pick(1), pick(0)});
    }
  return v;
}

std::vector<WhereLayout> where_broadcast_layouts() {
  return {{{7, 15}, {15}, {}},
          {{1, 3, 1, 1}, {2, 3, 4, 5}, {}},
          {{2, 3, 4, 5}, {1, 3, 1, 1}, {2, 1, 4, 5}},
          {{5, 1}, {1, 6}, {5, 6}},
          {{0, 4}, {4}, {}},
          {{1001, 1003}, {1003}, {}},
          {{3, 333337}, {3, 1}, {}}};
}

template <class T>
void check_where(const WhereLayout& l, std::mt19937& rng) {
  Buf c = random_buf<bool>(l.c, rng), a = random_buf<T>(l.a, rng), b = random_buf<T>(l.b, rng);
  const Buf want = ref_where<T>(c, a, b, out_type(Op::Where, {&c, &a, &b}));
  for (int threads : {1, 2}) {
    Threads guard(threads);
    const Buf got = run(Op::Where, {&c, &a, &b});
    const int64_t at = first_difference(got, want);
    EXPECT_EQ(at, -1) << "where " << describe({&c, &a, &b}) << "threads " << threads
                      << ": first difference at element " << at;
  }
}

template <class T>
class WhereKernel : public ::testing::Test {};
using AllTypes = ::testing::Types<float, double, int32_t, int64_t, bool>;
TYPED_TEST_SUITE(WhereKernel, AllTypes);

TYPED_TEST(WhereKernel, MatchesReference) {
  std::mt19937 rng(4);
  for (const WhereLayout& l : where_flat_layouts({1, 15, 17, 1000003}))
    check_where<TypeParam>(l, rng);
  for (const WhereLayout& l : where_broadcast_layouts()) check_where<TypeParam>(l, rng);
}

// --- thread count invariance of the unary kernels ---------------------------------------------

/// The unary rows (the table's, arity 1, but casts).
std::vector<Op> unary_rows() {
  std::vector<Op> v;
  for (Op op : ir::all_ops()) {
    const ir::OpInfo& row = ir::info(op);
    if (row.family == ir::OpFamily::Elementwise && row.arity == 1 &&
        row.result != ir::ResultKind::Attr)
      v.push_back(op);
  }
  return v;
}

// Eigen computes an unaligned head and the tail of each chunk with scalar code whose exp/tanh may
// differ from the packet code in the last bit: chunk boundaries must not depend on the threads.
TEST(UnaryKernel, SameBitsAtOneAndTwoThreads) {
  std::mt19937 rng(5);
  for (int64_t n : {int64_t{17}, int64_t{1000003}}) {
    Buf x = random_buf<float>({n}, rng);
    for (Op op : unary_rows()) {
      if (!ir::takes_floats(ir::info(op).operands)) continue;  // bitwise_not: exact integers
      Buf one = [&] { Threads t(1); return run(op, {&x}); }();
      Buf two = [&] { Threads t(2); return run(op, {&x}); }();
      EXPECT_EQ(first_difference(one, two), -1) << ir::mnemonic(op) << " n=" << n;
    }
  }
}

// --- every unary row against its scalar definition --------------------------------------------

/// Floats: [-20, 20] in steps of 1e-3, the specials of sample() and values where rows change
/// behavior (tiny, huge, past exp's range); integers: [-20000, 20000] and the extremes.
template <class T>
Buf sweep() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {L::min(), L::max(), L::lowest()};
  if constexpr (std::is_floating_point_v<T>) {
    for (T x : {L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), -T(0), L::denorm_min(),
                -L::denorm_min(), T(1e-10), T(-1e-10), T(1e-30), T(50), T(-50), T(88), T(-88),
                T(100), T(-100), T(1e10), T(-1e10)})
      v.push_back(x);
    for (int i = -20000; i <= 20000; ++i) v.push_back(static_cast<T>(i * 1e-3));
  } else {
    for (int i = -20000; i <= 20000; ++i) v.push_back(static_cast<T>(i));
  }
  Buf b(dtype_of<T>, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) b.put<T>(static_cast<int64_t>(i), v[i]);
  return b;
}

/// The kernel's value y against the definition's w at x: equal for integers and bools; for
/// floats NaN with NaN, an inf with the same inf, else within 8 ulps of |w| + |x| + 1 (the
/// vectorized paths approximate transcendentals; gelu loses the rest to cancellation where
/// 1 + tanh is small).
template <class R, class T>
bool close(R y, R w, T x) {
  if constexpr (!std::is_floating_point_v<R>) {
    return y == w;
  } else {
    if (std::isnan(w) || std::isinf(w)) return std::isnan(w) ? std::isnan(y) : y == w;
    const double ax = std::isfinite(double(x)) ? std::fabs(double(x)) : 0;
    const double tol = 8 * std::numeric_limits<R>::epsilon() * (std::fabs(double(w)) + ax + 1);
    return std::fabs(double(y) - double(w)) <= tol;
  }
}

template <ir::ElementwiseOp E, class T>
void check_row_against_scalar() {
  using R = decltype(ir::scalar::Fn<E>::apply(T{}));
  Buf x = sweep<T>();
  const Buf y = run(ir::to_op(E), {&x});
  int bad = 0;
  for (int64_t i = 0; i < x.type.numel() && bad < 5; ++i) {
    const T v = x.get<T>(i);
    const R want = ir::scalar::Fn<E>::apply(v), got = y.get<R>(i);
    if (!close(got, want, v)) {
      ADD_FAILURE() << ir::mnemonic(ir::to_op(E)) << " " << dtype_name(dtype_of<T>) << "(" << v
                    << ") = " << got << ", its definition gives " << want;
      ++bad;
    }
  }
}

// Each unary row's eager kernel (a fast path or the row's ir::scalar struct) on every operand
// type its column takes computes the struct's value: the Eigen paths within a few ulps.
TEST(UnaryKernel, EveryRowMatchesItsScalarDefinition) {
  for (Op op : unary_rows()) {
    ir::visit_row(*ir::as_elementwise(op), [&]<ir::ElementwiseOp E>(ir::Row<E>) {
      constexpr ir::OpInfo row = ir::info(E);
      if constexpr (row.arity == 1 && row.result != ir::ResultKind::Attr) {
        if constexpr (ir::scalar::takes<float>(row.operands)) check_row_against_scalar<E, float>();
        if constexpr (ir::scalar::takes<double>(row.operands))
          check_row_against_scalar<E, double>();
        if constexpr (ir::scalar::takes<int32_t>(row.operands))
          check_row_against_scalar<E, int32_t>();
        if constexpr (ir::scalar::takes<int64_t>(row.operands))
          check_row_against_scalar<E, int64_t>();
      }
    });
  }
}

// --- exact values at the edges of the float range ---------------------------------------------

template <class T>
class SubnormalKernel : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SubnormalKernel, FloatTypes);

/// op over 5000 random values, with the `edge` values planted every `step` elements of the first
/// 2048-element block and at elements 4097 + step % 4 and n - 1 (blocks 1 and 2 have none): the
/// planted elements get libm's value, out of place and in place, and every other element keeps
/// the bits it has in a tensor without them.
template <class T, class Libm>
void check_libm_at_edges(Op op, std::span<const T> edge, int64_t step, Libm libm) {
  std::mt19937 rng(static_cast<unsigned>(step));
  const int64_t n = 5000;
  Buf x = random_buf<T>({n}, rng), plain = x;
  std::vector<int64_t> at;
  for (int64_t i = 0; i < 2048; i += step) at.push_back(i);
  for (int64_t i : {4097 + step % 4, n - 1}) at.push_back(i);
  for (size_t k = 0; k < at.size(); ++k) {
    x.put<T>(at[k], edge[k % edge.size()]);
    plain.put<T>(at[k], T(1));
  }
  const Buf ref = run(op, {&plain});
  for (bool in_place : {false, true}) {
    SCOPED_TRACE(in_place ? "in place" : "out of place");
    Buf y = in_place ? x : run(op, {&x});
    if (in_place) {
      const rt::TensorRef io[] = {y.ref()};
      rt::run_kernel(op, ir::NoAttrs{}, io, io);
    }
    for (int64_t i = 0; i < n; ++i) {
      if (std::find(at.begin(), at.end(), i) != at.end()) {
        const T v = x.get<T>(i);
        EXPECT_EQ(y.get<T>(i), libm(v)) << "x[" << i << "] = " << v;
      } else {
        EXPECT_EQ(std::memcmp(&y.bytes[i * sizeof(T)], &ref.bytes[i * sizeof(T)], sizeof(T)), 0)
            << "element " << i;
      }
    }
  }
}

// log of a positive subnormal is libm's log (the compiled kernels' and fold's), not Eigen's, which
// takes it for the smallest normal number; in place too.
TYPED_TEST(SubnormalKernel, LogIsLibmLog) {
  using T = TypeParam;
  using L = std::numeric_limits<T>;
  const T tiny[] = {L::denorm_min(), L::min() / T(3), L::min() * T(0.999), T(1e-40)};
  check_libm_at_edges<T>(Op::Log, tiny, 97, [](T v) { return std::log(v); });
  Buf x(dtype_of<T>, {1});
  x.put<T>(0, L::denorm_min());
  EXPECT_EQ(run(Op::Log, {&x}).template get<T>(0), std::log(L::denorm_min()));
  EXPECT_LT(std::log(L::denorm_min()), std::log(L::min()));  // what Eigen alone would give
}

// exp below log(smallest normal) is libm's exp (subnormal or 0, as compiled kernels and fold give
// it), not Eigen's, which clamps its argument: its exp(-1000) is 2.9e-39 for f32. In place too.
TYPED_TEST(SubnormalKernel, ExpUnderflowIsLibmExp) {
  using T = TypeParam;
  using L = std::numeric_limits<T>;
  const T log_min = std::log(L::min());
  const T low[] = {log_min - T(0.5), log_min - T(5), T(-1000), -L::infinity(), T(-1e30)};
  check_libm_at_edges<T>(Op::Exp, low, 89, [](T v) { return std::exp(v); });
  Buf x(dtype_of<T>, {2});
  x.put<T>(0, T(-1000));
  x.put<T>(1, log_min - T(0.5));
  const Buf y = run(Op::Exp, {&x});
  EXPECT_EQ(y.template get<T>(0), T(0));
  EXPECT_GT(y.template get<T>(1), T(0));  // a subnormal
  EXPECT_LT(y.template get<T>(1), L::min());
}

// Cast to bool is `x != 0` in the source precision: 1e-310 and the smallest f64 are true.
TEST(CastKernel, F64ToBoolIsNonzero) {
  Buf x(DType::F64, {5});
  const double v[] = {1e-310, -4.9e-324, 0.0, -0.0, std::numeric_limits<double>::quiet_NaN()};
  for (int i = 0; i < 5; ++i) x.put<double>(i, v[i]);
  Buf y(DType::Bool, {5});
  const rt::TensorRef in[] = {x.ref()}, out[] = {y.ref()};
  rt::run_kernel(Op::Cast, ir::CastAttrs{DType::Bool}, in, out);
  EXPECT_EQ(y.get<bool>(0), true);
  EXPECT_EQ(y.get<bool>(1), true);
  EXPECT_EQ(y.get<bool>(2), false);
  EXPECT_EQ(y.get<bool>(3), false);
  EXPECT_EQ(y.get<bool>(4), true);
}

}  // namespace
}  // namespace lt
