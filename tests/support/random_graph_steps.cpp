// The random DAG generator's steps: each draws one op with its operands, plus the guards, casts
// and clamps that keep values in the op's domain, and works out the result's facts (bound, error
// bound, specials; see random_graph.cpp).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <vector>

#include "ir/elementwise_scalar.h"
#include "tests/support/random_graph_gen.h"

namespace lt::testing {
namespace {

using ir::Op;
const ir::NoAttrs kNone;

template <class T, size_t N>
T draw(Rng& r, const std::array<T, N>& a) {
  return a[static_cast<size_t>(r.range(0, static_cast<int64_t>(N) - 1))];
}

}  // namespace

Val DagGen::raw_clamped(Op op, const std::vector<Val>& in, bool exact_op, double c) {
  const DType dt = in[0].dt();
  bool special = false;
  for (const Val& x : in) special |= x.special;
  const Val y = emit(op, in, kNone, {kInf, kInf, true});  // unbounded: not pooled
  // Finite results differ by a few ulps of themselves at most (an exactly rounded op on exact
  // operands: not at all), so by 8u(c + 1) at most once clamped to c.
  return clamp(y, c, exact_op ? 0 : transcendental(dt, c));
}

Val DagGen::reshape_to(const Val& x, Shape s) {
  return emit(Op::Reshape, {x}, ir::ReshapeAttrs{std::move(s)},
              {x.bound, x.err, x.special, x.splat});
}

// --- elementwise rows, drawn from the table -------------------------------------------------

namespace {

/// The elementwise rows of the given arity whose result column is `result` (casts, result Attr,
/// are cast()'s), in table order.
std::vector<Op> rows(int arity, ir::ResultKind result) {
  std::vector<Op> v;
  for (Op op : ir::all_ops()) {
    const ir::OpInfo& i = ir::info(op);
    if (i.family == ir::OpFamily::Elementwise && i.arity == arity && i.result == result)
      v.push_back(op);
  }
  return v;
}

template <class T>
T draw(Rng& r, const std::vector<T>& v) {
  return v[static_cast<size_t>(r.range(0, static_cast<int64_t>(v.size()) - 1))];
}

bool takes_integers(Op op) { return ir::takes_integers(ir::info(op).operands); }
bool takes_floats(Op op) { return ir::takes_floats(ir::info(op).operands); }

// What the generator knows of a row beyond its columns and its scalar definition, keyed by op:
// - exactly rounded rows keep an exact value exact (the rest add a few ulps);
// - sin and cos take |x| <= 50: past it libm and Eigen reduce the argument differently.
bool exactly_rounded(Op op) {
  return op == Op::Neg || op == Op::Abs || op == Op::Relu || op == Op::Reciprocal;
}
double widest_operand(Op op) { return op == Op::Sin || op == Op::Cos ? 50 : kInf; }
// - floor, ceil, round and trunc jump: like the other discontinuous ops they take exact
//   operands only (a last-bit difference at a jump moves the result by 1, past any slope bound).
bool jumps(Op op) {
  return op == Op::Floor || op == Op::Ceil || op == Op::Round || op == Op::Trunc;
}

/// The row's scalar definition (in double) over [lo, hi]: the largest |f| and slope |f'|, from
/// differences between points spaced evenly near 0 and geometrically past 64 (and derivatives at
/// the ends, where a convex or concave f is steepest), with a margin for what lies between
/// points. finite is false where f is not finite somewhere there.
struct Scan {
  double bound = 0, slope = 0;
  bool finite = true;
};

std::vector<double> scan_points(double lo, double hi) {
  constexpr int kEven = 2048, kGeometric = 512;
  constexpr double kNear = 64;
  std::vector<double> v;
  auto geometric = [&](double a, double b, double sign) {  // 0 < a < b, from sign a to sign b
    for (int i = 0; i <= kGeometric; ++i)
      v.push_back(sign * a * std::pow(b / a, static_cast<double>(i) / kGeometric));
  };
  if (lo > 0) {
    geometric(lo, hi, 1);
    return v;
  }
  const double a = std::max(lo, -kNear), b = std::min(hi, kNear);
  if (lo < a) {
    geometric(-a, -lo, -1);
    std::reverse(v.begin(), v.end());
  }
  for (int i = 0; i <= kEven; ++i) v.push_back(a + (b - a) * i / kEven);
  if (b < hi) geometric(b, hi, 1);
  return v;
}

Scan scan(Op op, double lo, double hi) {
  const ir::ElementwiseOp e = *ir::as_elementwise(op);
  auto f = [&](double x) { return *ir::scalar::evaluate<double>(e, std::span(&x, 1)); };
  Scan s;
  const std::vector<double> x = scan_points(lo, hi);
  double widest = 0, last = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double y = f(x[i]);
    if (!std::isfinite(y)) return {0, 0, false};
    s.bound = std::max(s.bound, std::abs(y));
    if (i > 0 && x[i] > x[i - 1]) {
      s.slope = std::max(s.slope, std::abs(y - last) / (x[i] - x[i - 1]));
      widest = std::max(widest, x[i] - x[i - 1]);
    }
    last = y;
  }
  for (double end : {lo, hi}) {
    const double d = 1e-7 * (1 + std::abs(end));
    const double slope = std::abs(f(end + d) - f(end - d)) / (2 * d);
    if (std::isfinite(slope)) s.slope = std::max(s.slope, slope);
  }
  s.slope *= 1.1;
  s.bound += s.slope * widest / 2;
  return s;
}

}  // namespace

void DagGen::unary() {
  static const std::vector<Op> kRows = [] {
    std::vector<Op> v = rows(1, ir::ResultKind::Same);
    for (Op op : rows(1, ir::ResultKind::Bool)) v.push_back(op);
    return v;
  }();
  const Op op = draw(r_, kRows);
  Val x = pick_any();
  if (!takes_floats(op)) {  // bitwise_not, of integers: exact, |~x| = |x + 1|
    if (x.flt()) x = convert(x, r_.coin(0.5) ? DType::I32 : DType::I64);
    emit(op, {x}, kNone, {x.bound + 1, 0, false});
    return;
  }
  if (!x.flt() && (!takes_integers(op) || r_.coin(0.6))) x = to_float(x);
  if (ir::info(op).result == ir::ResultKind::Bool) {
    // isfinite: exact, whatever x's error (values are finite in both runs or in neither)
    emit(op, {x}, kNone, {1, 0, false});
    return;
  }
  if (!x.flt()) {  // integers: exact; a result past int_limit is not drawn
    const Scan s = scan(op, -x.bound, x.bound);
    if (!s.finite || s.bound > int_limit(x.dt())) throw Reject{};
    emit(op, {x}, kNone, {std::floor(s.bound), 0, false});
    return;
  }
  unary_float(op, x);
}

// A unary row on floats, from its scalar definition: on x itself where the row is finite over
// x's range (clamped to the widest range whose results stay below 16 float_limit), else on
// |x| + c (log, sqrt, rsqrt, reciprocal: the row is defined for positive values), or (special
// DAGs, exact x) on x unguarded, clamped afterwards.
void DagGen::unary_float(Op op, Val x) {
  if (jumps(op) && !x.exact()) throw Reject{};
  const DType dt = x.dt();
  const double most = 16 * float_limit(dt);
  auto fits = [&](const Scan& s) { return s.finite && s.bound <= most; };
  auto facts = [&](const Val& v, const Scan& s) {
    const double own =
        exactly_rounded(op) ? rounding(dt, s.bound, v.exact()) : transcendental(dt, s.bound);
    return Facts{s.bound, s.slope * v.err + own, v.special};
  };
  const double widest = std::min(x.bound, widest_operand(op));
  for (double c : {widest, 50.0, 12.0, 4.0, 1.0}) {
    if (c > widest) continue;
    const double b = std::min(x.bound, c);
    const Scan s = scan(op, -(b + x.err), b + x.err);
    if (!fits(s)) continue;
    const Val v = fit(x, b);
    emit(op, {v}, kNone, facts(v, s));
    return;
  }
  if (specials_ && x.exact() && r_.coin(0.4)) {  // log(0) = -inf, log(x < 0) = NaN, 1/0 = inf
    raw_clamped(op, {x}, exactly_rounded(op), 1e3);
    return;
  }
  const double c = draw(r_, std::array{0.1, 0.5, 1.0});
  for (double w : {widest, 50.0, 12.0, 4.0, 1.0}) {
    if (w > widest) continue;
    const Val p = positive(fit(x, w), c);
    const Scan s = scan(op, c, p.bound + p.err);
    if (!fits(s)) continue;
    emit(op, {p}, kNone, facts(p, s));
    return;
  }
  throw Reject{};
}

void DagGen::binary() {
  static const std::vector<Op> kRows = rows(2, ir::ResultKind::Same);
  Val x = pick_any();
  const bool ints = r_.coin(0.25);
  const DType dt = ints ? (is_integer(x.dt()) ? x.dt()
                           : r_.coin(0.5)     ? DType::I32
                                              : DType::I64)
                        : (x.flt() ? x.dt() : fdt_);
  std::vector<Op> ops = kRows;
  std::erase_if(ops, [&](Op op) { return ints ? !takes_integers(op) : !takes_floats(op); });
  const Op op = draw(r_, ops);
  x = convert(x, dt);
  // inf * 0 is NaN, inf * 1e-30 is inf: next to a possible inf, the other factor must be exact.
  const bool product = op == Op::Mul || op == Op::Pow;
  Val y = product ? partner(x, dt, x.special, x.exact()) : partner(x, dt);
  const double lim = ints ? int_limit(dt) : float_limit(dt);
  const bool both_exact = x.exact() && y.exact();
  switch (op) {
    case Op::Add:
    case Op::Sub: {
      // Probe signed zeros: x +- a zero of either sign, then 1/that (the sign of a zero shows
      // only there; canonicalize may drop only the additive and subtractive identities).
      const bool probe = specials_ && !ints && r_.coin(0.15);
      if (probe) y = full(dt, {}, r_.coin(0.5) ? 0.0 : -0.0);
      x = fit(x, lim / 2);
      y = fit(y, lim / 2);
      const double b = x.bound + y.bound;
      const Val z = emit(
          op, {x, y}, kNone,
          {b, x.err + y.err + rounding(dt, b, x.exact() && y.exact()), x.special || y.special});
      if (probe && z.exact()) raw_clamped(Op::Reciprocal, {z}, true, 1e3);
      return;
    }
    case Op::Mul: {
      x = fit(x, std::sqrt(lim));
      y = fit(y, std::sqrt(lim));
      const double b = x.bound * y.bound;
      const double e =
          x.err * y.bound + y.err * x.bound + x.err * y.err + rounding(dt, b, both_exact);
      emit(op, {x, y}, kNone, {b, e, x.special || y.special});
      return;
    }
    case Op::Div: return divide(x, y);
    case Op::Pow: return power(x, y);
    case Op::BitwiseAnd:
    case Op::BitwiseOr:
    case Op::BitwiseXor: {  // of values in [-2^k, 2^k): in that range too, exact
      const double b = std::exp2(std::ceil(std::log2(std::max(x.bound, y.bound) + 1)));
      emit(op, {x, y}, kNone, {b, 0, false});
      return;
    }
    case Op::Maximum:
    case Op::Minimum:
      emit(op, {x, y}, kNone,
           {std::max(x.bound, y.bound), std::max(x.err, y.err), x.special || y.special});
      return;
    default: return binary_generic(op, x, y);
  }
}

// A binary row with no rule of its own above, from its scalar definition: both operands clamped
// to the widest of |v| <= 50, 12, 4, 1 on which it is finite and below 16 float_limit, its
// bound and its slopes along either operand from a grid; no NaN or inf operands.
void DagGen::binary_generic(Op op, Val x, Val y) {
  if (x.special || y.special) throw Reject{};
  const DType dt = x.dt();
  const ir::ElementwiseOp e = *ir::as_elementwise(op);
  const double most = x.flt() ? 16 * float_limit(dt) : int_limit(dt);
  for (double c : {50.0, 12.0, 4.0, 1.0}) {
    const Val a = fit(x, c), b = fit(y, c);
    const double ra = a.bound + a.err, rb = b.bound + b.err;
    constexpr int kCells = 64;
    double bound = 0, sa = 0, sb = 0;
    bool ok = true;
    auto f = [&](int i, int j) {
      const double v[] = {-ra + 2 * ra * i / kCells, -rb + 2 * rb * j / kCells};
      return *ir::scalar::evaluate<double>(e, std::span<const double>(v));
    };
    for (int i = 0; i <= kCells && ok; ++i)
      for (int j = 0; j <= kCells && ok; ++j) {
        const double z = f(i, j);
        ok = std::isfinite(z);
        bound = std::max(bound, std::abs(z));
        if (i > 0 && ra > 0) sa = std::max(sa, std::abs(z - f(i - 1, j)) * kCells / (2 * ra));
        if (j > 0 && rb > 0) sb = std::max(sb, std::abs(z - f(i, j - 1)) * kCells / (2 * rb));
      }
    if (!ok || bound > most) continue;
    sa *= 1.1;
    sb *= 1.1;
    bound += sa * ra / kCells + sb * rb / kCells;
    const double err = x.flt() ? sa * a.err + sb * b.err + transcendental(dt, bound) : 0;
    emit(op, {a, b}, kNone, {x.flt() ? bound : std::floor(bound), err, false});
    return;
  }
  throw Reject{};
}

// x / (|y| + c), or (special DAGs, both exact) x / y clamped; integers: x / (|y| + 1).
void DagGen::divide(const Val& x, const Val& y) {
  const DType dt = x.dt();
  if (!x.flt()) {  // a nonzero divisor; truncation toward zero is exact
    const Val d = positive(fit(y, int_limit(dt) / 2), 1);
    emit(Op::Div, {x, d}, kNone, {x.bound, 0, false});
    return;
  }
  if (specials_ && x.exact() && y.exact() && r_.coin(0.4)) {  // x / +-0 = +-inf or NaN
    raw_clamped(Op::Div, {x, y}, true, 1e4);
    return;
  }
  const double c = draw(r_, std::array{0.25, 0.5, 1.0, 2.0});
  const Val d = positive(y, c);
  const double b = x.bound / c;
  const double e = x.err / c + x.bound * d.err / (c * c) + rounding(dt, b, x.exact() && d.exact());
  emit(Op::Div, {x, d}, kNone, {b, e, x.special || d.special});
}

// (|x| + c)^y with |x| <= 8 and |y| <= 3; integers: x^y exactly, with |x| <= 8 and y <= 3
// (a negative exponent gives 0, 1 or -1).
void DagGen::power(const Val& x, const Val& y) {
  if (!x.flt()) {
    emit(Op::Pow, {fit(x, 8), fit(y, 3)}, kNone, {512, 0, false});
    return;
  }
  const double c = draw(r_, std::array{0.25, 0.5, 1.0});
  const Val base = positive(fit(x, 8), c);
  const Val ex = fit(y, 3);
  if ((base.special && !ex.exact()) || (ex.special && !base.exact())) throw Reject{};
  const double hi = base.bound, k = ex.bound;
  const double b = std::max({std::pow(hi, k), std::pow(c, -k), 1.0});
  const double d_base = k * std::max({std::pow(hi, k - 1), std::pow(c, k - 1), std::pow(hi, -k - 1),
                                      std::pow(c, -k - 1)});
  const double d_exp = std::max(std::abs(std::log(c)), std::abs(std::log(hi))) * b;
  emit(Op::Pow, {base, ex}, kNone,
       {b, base.err * d_base + ex.err * d_exp + transcendental(x.dt(), b),
        base.special || ex.special});
}

void DagGen::compare() {
  Val c;
  const int have =
      r_.coin(0.25) ? pick_index([](const Val& v) { return v.dt() == DType::Bool; }) : -1;
  if (have >= 0) {
    c = pool_[have];
  } else {
    // Only exact operands: a last-bit difference must not flip the outcome.
    const size_t kind = r_.weighted(std::array{6.0, 3.0, 1.0});  // float, integer, bool
    auto ok = [&](const Val& v) {
      return v.exact() && (kind == 0   ? v.flt()
                           : kind == 1 ? is_integer(v.dt())
                                       : v.dt() == DType::Bool);
    };
    const int i = pick_index(ok);
    const Val a =
        i >= 0 ? pool_[i] : leaf(std::array{fdt_, DType::I32, DType::Bool}[kind], rand_shape());
    double t = kind == 0 ? draw(r_, std::array{0.0, 0.5, -0.5, 1.0})
                         : static_cast<double>(r_.range(-3, 3));
    if (kind == 2) t = r_.coin(0.5);
    const Val b = r_.coin(0.25) ? full(a.dt(), {}, t) : partner(a, a.dt(), /*need_exact=*/true);
    static const std::vector<Op> kTests = rows(2, ir::ResultKind::Bool);
    std::vector<Op> ops = kTests;
    if (kind == 2) std::erase_if(ops, [](Op op) { return !ir::takes_bool(ir::info(op).operands); });
    const Op op = draw(r_, ops);
    c = emit(op, {a, b}, kNone, {1, 0, false});
  }
  if (r_.coin(0.25)) return;
  const Val t = pick_any();
  Shape s;
  if (!broadcast_shapes(c.t.shape, t.t.shape, &s) || s.size() > 4) throw Reject{};
  Val proxy = t;  // partner() draws against the broadcast shape of cond and t
  proxy.t.shape = s;
  const Val f = partner(proxy, t.dt());
  const Facts facts{std::max(t.bound, f.bound), std::max(t.err, f.err), t.special || f.special};
  if (r_.coin(0.5))
    emit(Op::Where, {c, t, f}, kNone, facts);
  else
    emit(Op::Where, {c, f, t}, kNone, facts);
}

void DagGen::cast() {
  const Val x = pick_any();
  DType to = rand_dtype();
  while (to == x.dt()) to = rand_dtype();
  convert(x, to);
}

void DagGen::view() {
  const Val x = pick_any();
  switch (r_.weighted(std::array{3.0, 2.0, 2.0, 3.0, 2.0, 2.0})) {
    case 0: return reshape(x);
    case 1: return permute(x);
    case 2: return expand(x);
    case 3: return slice(x);
    case 4: return pad(x);
    default: return concat(x);
  }
}

void DagGen::reshape(const Val& x) {  // the element count split over 0-4 dims
  const int64_t n = x.t.numel();
  Shape s(static_cast<size_t>(r_.range(n == 1 ? 0 : 1, 4)), 1);
  auto any_dim = [&] { return r_.range(0, static_cast<int64_t>(s.size()) - 1); };
  if (n == 0) s[any_dim()] = 0;
  int64_t m = n;
  for (int64_t p = 2; m > 1; ++p)
    for (; m % p == 0; m /= p) s[any_dim()] *= p;
  reshape_to(x, std::move(s));
}

void DagGen::permute(const Val& x) {
  const int64_t rank = x.rank();
  if (rank < 2) throw Reject{};
  ir::Ints perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  for (int64_t i = rank - 1; i > 0; --i) std::swap(perm[i], perm[r_.range(0, i)]);
  emit(Op::Permute, {x}, ir::PermuteAttrs{perm}, {x.bound, x.err, x.special, x.splat});
}

void DagGen::expand(const Val& x) {
  Shape s = x.t.shape;
  for (int64_t& d : s)
    if (d == 1 && r_.coin(0.6)) d = r_.range(2, 5);
  if (s.size() < 4 && r_.coin(0.35)) s.insert(s.begin(), r_.range(1, 4));
  emit(Op::Expand, {x}, ir::ExpandAttrs{s}, {x.bound, x.err, x.special, x.splat});
}

void DagGen::slice(const Val& x) {
  ir::SliceAttrs a;
  for (int64_t d : x.t.shape) {
    int64_t start = 0, stop = d, step = 1;
    if (d > 0 && r_.coin(0.7)) {
      start = r_.range(0, d - 1);
      stop = r_.range(start + 1, d);
      step = draw(r_, std::array<int64_t, 4>{1, 1, 2, 3});
      if (r_.coin(0.02)) stop = start;  // an empty slice
    }
    a.start.push_back(start);
    a.stop.push_back(stop);
    a.step.push_back(step);
  }
  emit(Op::Slice, {x}, a, {x.bound, x.err, x.special, x.splat});
}

void DagGen::pad(const Val& x) {
  ir::PadAttrs a;
  for (int64_t i = 0; i < x.rank(); ++i) {
    a.lo.push_back(r_.coin(0.5) ? 0 : r_.range(1, 2));
    a.hi.push_back(r_.coin(0.5) ? 0 : r_.range(1, 2));
  }
  a.value = x.flt()                 ? draw(r_, std::array{0.0, 1.0, -1.0, r_.uniform(-2, 2)})
            : x.dt() == DType::Bool ? static_cast<double>(r_.coin(0.5))
                                    : static_cast<double>(r_.range(-3, 3));
  if (x.dt() == DType::F32) a.value = static_cast<float>(a.value);
  emit(Op::Pad, {x}, a, {std::max(x.bound, std::abs(a.value)), x.err, x.special});
}

void DagGen::concat(const Val& x) {  // with 1-2 others of the same shape but along the axis
  const int64_t rank = x.rank();
  if (rank == 0) throw Reject{};
  const int64_t axis = r_.range(0, rank - 1);
  auto ok = [&](const Val& v) {
    if (v.dt() != x.dt() || v.rank() != rank) return false;
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && v.t.shape[d] != x.t.shape[d]) return false;
    return true;
  };
  std::vector<Val> in{x};
  for (int64_t k = r_.range(1, 2); k > 0; --k) {
    const int i = r_.coin(0.3) ? -2 : r_.coin(0.5) ? pick_index(ok) : -1;
    Shape s = x.t.shape;
    s[axis] = r_.range(1, 4);
    in.push_back(i == -2 ? x : i >= 0 ? pool_[i] : leaf(x.dt(), s));
  }
  for (size_t i = in.size() - 1; i > 0; --i)
    std::swap(in[i], in[r_.range(0, static_cast<int64_t>(i))]);
  Facts f;
  for (const Val& v : in) {
    f.bound = std::max(f.bound, v.bound);
    f.err = std::max(f.err, v.err);
    f.special |= v.special;
  }
  emit(Op::Concat, in, ir::ConcatAttrs{axis}, f);
}

void DagGen::reduce() {
  Val x = pick_any();
  if (x.dt() == DType::Bool) x = convert(x, r_.coin(0.5) ? fdt_ : DType::I64);
  const Op op = x.flt() ? draw(r_, std::array{Op::Sum, Op::Mean, Op::ReduceMax, Op::ReduceMin,
                                              Op::Sum, Op::ReduceMax, Op::LogSumExp, Op::ArgMax,
                                              Op::Prod})
                        : draw(r_, std::array{Op::Sum, Op::ReduceMax, Op::ReduceMin, Op::ArgMax});
  ir::ReduceAttrs a;
  a.keepdim = r_.coin(0.4);
  if (op == Op::ArgMax) {  // one axis; the first maximum wins, so ties need exact operands
    if (x.rank() == 0 || !x.exact()) throw Reject{};
    a.axes.push_back(r_.range(0, x.rank() - 1));
  } else if (x.rank() > 0 && !r_.coin(0.15)) {  // else every axis
    for (int64_t d = 0; d < x.rank(); ++d)
      if (r_.coin(0.5)) a.axes.push_back(d);
    if (a.axes.empty()) a.axes.push_back(r_.range(0, x.rank() - 1));
  }
  double n = 1;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (a.axes.empty() || std::find(a.axes.begin(), a.axes.end(), d) != a.axes.end())
      n *= static_cast<double>(x.t.shape[d]);
  const DType dt = x.dt();
  const double u = x.flt() ? unit(dt) : 0;
  switch (op) {
    case Op::Sum: {
      // Any summation order is fine, so only a sum of at most two elements is exact.
      x = fit(x, (x.flt() ? float_limit(dt) : int_limit(dt)) / std::max(n, 1.0));
      const bool exact = !x.flt() || (x.exact() && n <= 2);
      const double e = exact ? 0 : n * x.err + 2 * u * n * n * x.bound;
      emit(op, {x}, a, {n * x.bound, e, x.special});
      return;
    }
    case Op::Mean: {
      const bool exact = x.exact() && n == 1;
      emit(op, {x}, a, {x.bound, exact ? 0 : x.err + 2 * u * (n + 1) * x.bound, x.special});
      return;
    }
    case Op::LogSumExp: {  // max <= logsumexp <= max + log(n), 1-Lipschitz in the inputs
      const double b = x.bound + std::log(std::max(n, 1.0));
      emit(op, {x}, a, {b, x.err + 4 * u * (n + 8) * (b + 1), x.special});
      return;
    }
    case Op::ArgMax: emit(op, {x}, a, {n, 0, false}); return;
    case Op::Prod: {
      // Factors within [-1, 1]: the product stays there, each factor's error adds at most
      // (1 + err)^n - 1, each of the n products rounds once (any order).
      if (x.special) throw Reject{};
      x = fit(x, 1);
      const double e = n * x.err * std::exp(n * x.err) + 2 * u * n;
      emit(op, {x}, a, {1, n <= 1 ? x.err : e, false});
      return;
    }
    default: emit(op, {x}, a, {x.bound, x.err, x.special}); return;
  }
}

// The shapes loop kernels fuse: a view (folded into the index map of the kernel that reads it),
// elementwise ops on it, and a reduction ending the kernel. Each step picks the newest value
// more often than not, so the three usually chain; a step that does not fit is skipped.
void DagGen::fused_chain() {
  using Draw = void (DagGen::*)();
  const Draw elementwise = r_.coin(0.5) ? &DagGen::binary : &DagGen::unary;
  for (Draw step : {&DagGen::view, elementwise, &DagGen::binary, &DagGen::reduce}) {
    try {
      (this->*step)();
    } catch (const TypeError&) {
    } catch (const Reject&) {
    }
  }
}

void DagGen::matmul() {
  Val a = to_float(pick_any());
  if (a.rank() == 0) a = reshape_to(a, {1, 1});
  if (a.rank() == 1)
    a = reshape_to(a, r_.coin(0.5) ? Shape{1, a.t.shape[0]} : Shape{a.t.shape[0], 1});
  const bool ta = r_.coin(0.25), tb = r_.coin(0.25);
  const Shape& sa = a.t.shape;
  const size_t r = sa.size();
  const int64_t k = ta ? sa[r - 2] : sa[r - 1];
  const Shape batch(sa.begin(), sa.end() - 2);
  // Next to a possible inf, the other operand must be exact (inf * 0 vs inf * 1e-30).
  auto ok = [&](const Val& v) {
    if (v.dt() != a.dt() || v.rank() < 2) return false;
    const Shape& s = v.t.shape;
    Shape bb;
    return (tb ? s.end()[-1] : s.end()[-2]) == k &&
           broadcast_shapes(Shape(s.begin(), s.end() - 2), batch, &bb) &&
           (!a.special || v.exact()) && (!v.special || a.exact());
  };
  const int i = r_.coin(0.3) ? pick_index(ok) : -1;
  Val b;
  if (i >= 0) {
    b = pool_[i];
  } else {
    Shape s = compatible(batch);
    while (s.size() > 2) s.erase(s.begin());
    const int64_t n = rand_dim();
    s.push_back(tb ? n : k);
    s.push_back(tb ? k : n);
    b = leaf(a.dt(), s, a.exact());
  }
  if (a.special && !b.exact()) throw Reject{};
  const double kk = static_cast<double>(k);
  const double lim = std::sqrt(float_limit(a.dt()) / std::max(kk, 1.0));
  a = fit(a, lim);
  b = fit(b, lim);
  const bool exact = a.exact() && b.exact() && k <= 1;  // one product per element
  const double e = exact ? 0
                         : kk * (a.err * b.bound + b.err * a.bound + a.err * b.err) +
                               2 * unit(a.dt()) * kk * kk * a.bound * b.bound;
  emit(Op::MatMul, {a, b}, ir::MatMulAttrs{ta, tb},
       {kk * a.bound * b.bound, e, a.special || b.special});
}

void DagGen::conv() {
  // x: a rank-4 float value of the pool, or a new [N, C, H, W] leaf with C 16 (channels-last in
  // the lowering, whose permutes and moved axes the ops drawn after it then meet) or a few.
  auto ok = [&](const Val& v) { return v.dt() == fdt_ && v.rank() == 4; };
  const int i = r_.coin(0.4) ? pick_index(ok) : -1;
  Val x = i >= 0 ? pool_[i]
                 : leaf(fdt_, {r_.range(1, 3), r_.coin(0.7) ? 16 : r_.range(1, 4), r_.range(3, 7),
                               r_.range(3, 7)},
                        false);
  conv_of(x, r_.coin(0.6) ? 16 : r_.range(1, 5));
}

Val DagGen::conv_of(Val x, int64_t o) {
  const Shape& s = x.t.shape;
  const int64_t k = r_.range(1, 3), stride = r_.range(1, 2), pad = r_.range(0, (k - 1) / 2 + 1);
  if (s[2] + 2 * pad < k || s[3] + 2 * pad < k) throw Reject{};
  Val w = leaf(fdt_, {o, s[1], k, k}, false);
  if (x.special) throw Reject{};  // padding's zeros times inf
  // As matmul's, over the c * k * k products of an output element (padding adds exact zeros).
  const double kk = static_cast<double>(s[1] * k * k);
  const double lim = std::sqrt(float_limit(fdt_) / std::max(kk, 1.0));
  x = fit(x, lim);
  w = fit(w, lim);
  const double e = kk * (x.err * w.bound + w.err * x.bound + x.err * w.err) +
                   2 * unit(fdt_) * kk * kk * x.bound * w.bound;
  return emit(Op::Conv2d, {x, w}, ir::ConvAttrs{{stride, stride}, {pad, pad}, {1, 1}, 1, {}},
              {kk * x.bound * w.bound, e, false});
}

void DagGen::max_pool() {
  // x: mostly a new convolution of 16 channels, whose output the lowering keeps channels-last,
  // and the pool and its gradient with it; else a rank-4 float value of the pool.
  auto ok = [&](const Val& v) { return v.flt() && v.rank() == 4 && !v.special; };
  const int i = r_.coin(0.4) ? pick_index(ok) : -1;
  const Val x =
      i >= 0 ? pool_[i]
             : conv_of(leaf(fdt_, {r_.range(1, 3), 16, r_.range(3, 7), r_.range(3, 7)}, false),
                       16);
  if (x.special) throw Reject{};
  const int64_t k = r_.range(1, 3), stride = r_.range(1, 3), pad = r_.range(0, k / 2);
  const ir::PoolAttrs a{{k, k}, {stride, stride}, {pad, pad}, {}, r_.coin(0.3), true};
  // A CNN's pool of relu(x), sometimes: its gradient's ReLU mask then follows below.
  const Val px = r_.coin(0.5) ? emit(Op::Relu, {x}, kNone, {x.bound, x.err, false}) : x;
  // The max of values each within err of the reference is within err of the reference's max.
  const Val y = emit(Op::MaxPool2d, {px}, a, {px.bound, px.err, false});
  // The gradient routes by the window's argmax: only exact values pick the reference's taps.
  // A pixel sums the gradients of at most ceil(k / stride)^2 windows, in one order either side.
  if (!px.exact() || !r_.coin(0.5)) return;
  const Val gy = leaf(x.dt(), y.t.shape, false);
  const double m = std::pow(static_cast<double>((k + stride - 1) / stride), 2);
  const Facts facts{m * gy.bound, m * gy.err + 2 * unit(x.dt()) * m * m * gy.bound, false};
  const Val gx = emit(Op::MaxPool2dGrad, {px, gy}, a, facts);
  // The ReLU's gradient after the pool's, where(x > 0, gx, 0): the lowering folds it into the
  // pool's gradient (through_relu), which the reference does not.
  if (r_.coin(0.3)) return;
  const Val zero = full(x.dt(), {}, 0.0);
  const Val positive = emit(Op::Gt, {x, zero}, kNone, {1, 0, false});
  emit(Op::Where, {positive, gx, zero}, kNone, facts);
}

void DagGen::autocast_gemm() {
  constexpr double kBf16Unit = 0x1p-8;  // bf16's relative rounding error (8 significant bits)
  // Below 2^-126 bf16's values are subnormals 2^-133 apart (f32's exponents, 7 stored bits): a
  // rounding there is off by up to half of that, however small the value.
  constexpr double kBf16Spacing = 0x1p-133;
  // However the step ends (a Reject, a TypeError), no bf16 value stays in the pool: the other
  // steps' error facts are for f32 and f64.
  struct DropBf16 {
    std::vector<Val>& pool;
    ~DropBf16() {
      std::erase_if(pool, [](const Val& v) { return v.dt() == DType::BF16; });
    }
  } drop{pool_};
  const bool conv = r_.coin(0.4);
  Val a, b;
  int64_t terms = 0;  // products summed per output element
  ir::Attrs attrs;
  ir::Op op = ir::Op::MatMul;
  if (conv) {
    op = ir::Op::Conv2d;
    a = leaf(fdt_, {r_.range(1, 3), r_.coin(0.6) ? 16 : r_.range(1, 4), r_.range(3, 7),
                    r_.range(3, 7)},
             false);
    const Shape& s = a.t.shape;
    const int64_t k = r_.range(1, 3), pad = r_.range(0, (k - 1) / 2 + 1);
    if (s[2] + 2 * pad < k || s[3] + 2 * pad < k) throw Reject{};
    b = leaf(fdt_, {r_.coin(0.6) ? 16 : r_.range(1, 5), s[1], k, k}, false);
    terms = s[1] * k * k;
    attrs = ir::ConvAttrs{{1, 1}, {pad, pad}, {1, 1}, 1, {}};
  } else {
    a = to_float(pick_any());
    if (a.special) throw Reject{};
    if (a.rank() < 2) a = reshape_to(a, {1, a.t.numel()});
    const bool tb = r_.coin(0.3);
    terms = a.t.shape.back();
    const int64_t n = rand_dim();
    Shape s = a.t.rank() > 2 && r_.coin(0.5) ? Shape(a.t.shape.begin(), a.t.shape.end() - 2)
                                             : Shape{};
    s.push_back(tb ? n : terms);
    s.push_back(tb ? terms : n);
    b = leaf(fdt_, s, false);
    attrs = ir::MatMulAttrs{false, tb};
  }
  const double lim = std::sqrt(float_limit(DType::F32) / (1.1 * std::max<double>(terms, 1)));
  a = fit(a, lim);
  b = fit(b, lim);
  // Operands that already differ may round to different bf16 neighbours.
  auto narrow = [&](const Val& x) {
    return emit(ir::Op::Cast, {x}, ir::CastAttrs{DType::BF16},
                {x.bound * (1 + kBf16Unit),
                 x.exact() ? 0 : x.err + 2 * kBf16Unit * x.bound + kBf16Spacing});
  };
  const Val a16 = narrow(a), b16 = narrow(b);
  const double kk = static_cast<double>(terms), most = kk * a16.bound * b16.bound;
  // The reference rounds the f32 sum to bf16; the compiled step may keep the sum (or round a sum
  // of another order to the other neighbour).
  const double e = kk * (a16.err * b16.bound + b16.err * a16.bound + a16.err * b16.err) +
                   2 * unit(DType::F32) * kk * most + 2 * kBf16Unit * most + kBf16Spacing;
  const Val y16 = emit(op, {a16, b16}, std::move(attrs), {most * (1 + kBf16Unit), e, false});
  emit(ir::Op::Cast, {y16}, ir::CastAttrs{DType::F32}, {y16.bound, y16.err, false});
}

void DagGen::softmax() {
  Val x = to_float(pick_any());
  if (x.rank() == 0) x = reshape_to(x, {1});
  const int64_t axis = r_.range(0, x.rank() - 1);
  const double n = static_cast<double>(x.t.shape[axis]);
  const double u = unit(x.dt());
  if (r_.coin(0.5)) {  // each output moves by at most half the largest input change
    emit(Op::Softmax, {x}, ir::AxisAttrs{axis}, {1, 2 * x.err + 4 * u * (n + 8), x.special});
  } else {
    const double b = 2 * x.bound + std::log(std::max(n, 1.0)) + 1;
    emit(Op::LogSoftmax, {x}, ir::AxisAttrs{axis},
         {b, 2 * x.err + 4 * u * (n + 8) * (b + 1), x.special});
  }
}

void DagGen::all_reduce() {
  const Val x = pick_any();
  constexpr std::array kKinds{ir::ReduceKind::Sum, ir::ReduceKind::Mean, ir::ReduceKind::Max,
                              ir::ReduceKind::Min};
  const ir::ReduceKind kind = kKinds[r_.range(0, 3)];
  emit(Op::AllReduce, {x}, ir::AllReduceAttrs{kind}, {x.bound, x.err, x.special, x.splat});
}

void DagGen::index_move() {
  const Val x = pick_any();
  const int64_t rank = x.rank();
  if (rank == 0 || x.t.numel() == 0) throw Reject{};
  const int64_t axis = r_.range(0, rank - 1);
  // The index: no larger than x outside the axis, 1-4 positions along it (repeats likely).
  Shape is = x.t.shape;
  for (int64_t k = 0; k < rank; ++k)
    if (k != axis && r_.coin(0.3)) is[k] = r_.range(1, is[k]);
  is[axis] = r_.range(1, 4);
  const Val index = index_param(is, x.t.shape[axis]);
  const int kind = static_cast<int>(r_.range(0, 2));
  if (kind == 0) {
    emit(Op::Gather, {x, index}, ir::AxisAttrs{axis}, {x.bound, x.err, x.special, x.splat});
    return;
  }
  const Val src = leaf(x.dt(), is);
  Facts f{std::max(x.bound, src.bound), std::max(x.err, src.err), x.special || src.special};
  if (kind == 2) {  // every position gets up to is[axis] additions, in index order
    const double m = static_cast<double>(is[axis]);
    f.bound = x.bound + m * src.bound;
    f.err = x.err + m * src.err + m * rounding(x.dt(), f.bound, x.exact() && src.exact());
  }
  emit(kind == 1 ? Op::Scatter : Op::ScatterAdd, {x, index, src}, ir::AxisAttrs{axis}, f);
}

void DagGen::new_leaf() { leaf(rand_dtype(), rand_shape()); }

}  // namespace lt::testing
