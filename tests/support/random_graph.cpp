// The random DAG generator. Every drawn value carries facts the comparison relies on:
//  * bound: |finite element| <= bound (the generator clamps with maximum/minimum past a limit);
//  * err: |compiled - reference| <= err on finite elements, by first-order error propagation.
//    Exactly rounded ops (+ - * /, max, min, neg, abs, relu, where, casts, views, full) on exact
//    inputs stay exact (err 0); transcendentals, sqrt (Eigen's is approximate) and reductions of
//    more than two elements (any summation order is allowed) are not;
//  * special: may hold NaN or +-inf, at the same positions in both runs.
// Discontinuous ops (comparisons, float->int/bool casts) and sign-sensitive raw domain ops only
// take exact operands, so a last-bit difference can never flip them; a product or pow with a
// possibly infinite operand takes an exact other operand (inf * 0 must not become inf * 1e-30).
// Domain-restricted ops get guards (log(|x| + c), x / (|x| + c)), except in "special" DAGs, whose
// parameters hold NaN, +-inf, +-0, tiny and huge values and which also apply raw domain ops to
// exact values, clamping what may overflow.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/elementwise_scalar.h"
#include "ir/error.h"
#include "tests/support/random_graph_gen.h"

namespace lt::testing {
namespace {

template <class T>
void store(const std::shared_ptr<rt::Buffer>& b, int64_t i, T v) {
  std::memcpy(static_cast<char*>(b->data()) + static_cast<size_t>(i) * sizeof(T), &v, sizeof(T));
}

}  // namespace

size_t Rng::weighted(std::span<const double> w) {
  double total = 0;
  for (double x : w) total += x;
  double u = uniform(0, total);
  for (size_t i = 0; i < w.size(); ++i) {
    if (u < w[i]) return i;
    u -= w[i];
  }
  return w.size() - 1;
}

double unit(DType t) { return t == DType::F32 ? 0x1p-24 : 0x1p-53; }
double float_limit(DType t) { return t == DType::F32 ? 1e5 : 1e8; }
double int_limit(DType t) { return t == DType::I32 ? 0x1p30 : 0x1p52; }

DagGen::DagGen(ir::Graph& g, std::vector<std::shared_ptr<rt::Buffer>>& data, uint64_t seed,
               const RandomDagOptions& o)
    : g_(g), data_(data), r_(seed), seed_(seed), o_(o) {
  specials_ = r_.coin(0.25);
  fdt_ = r_.coin(0.5) ? DType::F32 : DType::F64;
  base_ = rand_shape();
}

// --- building blocks --------------------------------------------------------------------------

Val DagGen::emit(ir::Op op, const std::vector<Val>& in, ir::Attrs attrs, Facts f) {
  std::vector<ir::Value> vs;
  for (const Val& x : in) vs.push_back(x.v);
  const ir::Value v = g_.add(op, std::move(vs), std::move(attrs));  // TypeError: draw again
  ++added_;
  for (const Val& x : in) ++uses_[x.v];
  Val out{v, g_.type(v), f.bound, f.err, f.special, false, f.splat};
  const Shape& s = out.t.shape;
  if (s.size() > 4 || out.t.numel() > 4096 ||
      std::any_of(s.begin(), s.end(), [](int64_t d) { return d > 16; }))
    throw Reject{};  // the node stays behind, dead: dce drops it from the compiled graph
  if (!out.flt()) {
    LT_CHECK(f.err == 0, "random graph: {} result drawn with error {}", ir::mnemonic(op), f.err);
    out.special = false;
    if (out.dt() == DType::Bool) out.bound = 1;
  }
  if (!std::isfinite(out.bound) || !std::isfinite(out.err)) return out;  // the caller clamps it
  if (out.flt() && out.bound > float_limit(out.dt())) return clamp(out, float_limit(out.dt()));
  pool_.push_back(out);
  return out;
}

Val DagGen::param(DType dt, const Shape& s, bool allow_special) {
  const TensorType t{dt, s};
  const ir::Value v = g_.add_param(t, fmt::format("s{}_{}", seed_, params_++));
  auto buf = rt::Buffer::allocate(t.bytes());
  const int64_t n = t.numel();
  double bound = 0;
  bool special = false;
  if (is_float(dt)) {
    const int style = static_cast<int>(r_.range(0, 3));
    const double scale = std::array{0.5, 1.0, 2.0, 4.0}[r_.range(0, 3)];
    const bool sprinkle = specials_ && allow_special && r_.coin(0.6);
    // Subnormal in either dtype (log, casts to bool and fold have each got those wrong).
    const double tiny = dt == DType::F32 ? 1e-40 : 1e-310;
    const std::array<double, 8> odd{kNaN, kInf, -kInf, 0.0, -0.0, tiny, -tiny, 1e30};
    for (int64_t i = 0; i < n; ++i) {
      double x = style == 0   ? r_.uniform(-scale, scale)
                 : style == 1 ? 0.25 * static_cast<double>(r_.range(-8, 8))  // ties, exact zeros
                 : style == 2 ? r_.uniform(0.1, 3.0)
                              : static_cast<double>(r_.range(-3, 3));
      if (sprinkle && r_.coin(0.2)) x = odd[r_.range(0, 7)];
      if (dt == DType::F32) x = static_cast<float>(x);
      if (std::isfinite(x))
        bound = std::max(bound, std::abs(x));
      else
        special = true;
      if (dt == DType::F32)
        store(buf, i, static_cast<float>(x));
      else
        store(buf, i, x);
    }
  } else if (dt == DType::Bool) {
    for (int64_t i = 0; i < n; ++i) store<uint8_t>(buf, i, r_.coin(0.5) ? 1 : 0);
    bound = 1;
  } else {
    const int64_t w = r_.coin(0.7) ? 8 : 100;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t x = r_.range(-w, w);
      bound = std::max(bound, static_cast<double>(std::abs(x)));
      if (dt == DType::I32)
        store(buf, i, static_cast<int32_t>(x));
      else
        store(buf, i, x);
    }
  }
  data_.push_back(std::move(buf));
  Val out{v, t, bound, 0, special, true};
  pool_.push_back(out);
  return out;
}

Val DagGen::index_param(const Shape& s, int64_t size) {
  const TensorType t{DType::I64, s};
  const ir::Value v = g_.add_param(t, fmt::format("s{}_{}", seed_, params_++));
  auto buf = rt::Buffer::allocate(t.bytes());
  for (int64_t i = 0; i < t.numel(); ++i) store<int64_t>(buf, i, r_.range(0, size - 1));
  data_.push_back(std::move(buf));
  return Val{v, t, static_cast<double>(size - 1), 0, false, true};
}

Val DagGen::full(DType dt, const Shape& s, double v) {
  if (dt == DType::F32) v = static_cast<float>(v);
  if (!is_float(dt)) v = dt == DType::Bool ? (v != 0) : std::trunc(v);
  const bool finite = std::isfinite(v);
  Val out =
      emit(ir::Op::Full, {}, ir::FullAttrs{s, dt, v}, {finite ? std::abs(v) : 0, 0, !finite, v});
  pool_.back().leaf = out.leaf = true;
  return out;
}

Val DagGen::leaf(DType dt, const Shape& s, bool allow_special) {
  if (r_.coin(0.75)) return param(dt, s, allow_special);
  double v = 0;
  if (is_float(dt)) {
    constexpr std::array kNice{0.0, 1.0, -1.0, 0.5, 2.0, 0.1, 0.3, -0.75};
    v = r_.coin(0.6) ? kNice[r_.range(0, 7)] : r_.uniform(-2, 2);
    if (specials_ && allow_special && r_.coin(0.25))
      v = std::array{-0.0, kInf, -kInf, kNaN}[r_.range(0, 3)];
  } else if (dt == DType::Bool) {
    v = r_.coin(0.5);
  } else {
    v = static_cast<double>(r_.range(-4, 4));
  }
  return full(dt, s, v);
}

Val DagGen::clamp(const Val& x, double c, double err) {
  if (err < 0) err = x.err;
  const DType dt = x.dt();
  if (!x.flt()) c = std::floor(c);
  const Val lo = full(dt, {}, -c), hi = full(dt, {}, c);
  // Either operand order: maximum/minimum propagate a NaN from either side.
  auto two = [&](ir::ElementwiseOp op, const Val& a, const Val& b, Facts f) {
    const ir::Op o = op == ir::ElementwiseOp::Maximum ? ir::Op::Maximum : ir::Op::Minimum;
    return r_.coin(0.5) ? emit(o, {a, b}, ir::NoAttrs{}, f) : emit(o, {b, a}, ir::NoAttrs{}, f);
  };
  // The half-clamped value is not offered to later steps (an unbounded bound keeps it out).
  const Val m = two(ir::ElementwiseOp::Maximum, x, lo, {kInf, err, x.special});
  return two(ir::ElementwiseOp::Minimum, m, hi, {std::min(x.bound, c), err, x.special});
}

Val DagGen::positive(const Val& x, double c) {
  const Val a = emit(ir::Op::Abs, {x}, ir::NoAttrs{}, {x.bound, x.err, x.special});
  const double b = x.bound + c;
  return emit(ir::Op::Add, {a, full(x.dt(), {}, c)}, ir::NoAttrs{},
              {b, x.err + rounding(x.dt(), b, x.exact()), x.special});
}

Val DagGen::convert(const Val& x, DType to) {
  if (x.dt() == to) return x;
  ir::CastAttrs a{to};
  if (is_float(to)) {
    if (!x.flt()) return emit(ir::Op::Cast, {x}, a, {x.bound, 0, false});
    const double b = x.bound * (1 + unit(to));
    return emit(ir::Op::Cast, {x}, a, {b, x.err + rounding(to, b, x.exact()), x.special});
  }
  if (to == DType::Bool) {  // x != 0: a last-bit difference near 0 would flip it
    if (x.flt() && !x.exact()) throw Reject{};
    return emit(ir::Op::Cast, {x}, a, {1, 0, false});
  }
  // To an integer: in range (clamped) and, from a float, exact and finite.
  if (x.flt() && (!x.exact() || x.special)) throw Reject{};
  const double lim = std::min(int_limit(to), x.flt() ? 0x1p30 : int_limit(to));
  const Val y = fit(x, lim);
  return emit(ir::Op::Cast, {y}, a, {std::floor(y.bound), 0, false});
}

Val DagGen::to_float(const Val& x) { return x.flt() ? x : convert(x, fdt_); }

// --- picking ----------------------------------------------------------------------------------

int DagGen::pick_index(const std::function<bool(const Val&)>& ok) {
  std::vector<int> c, ops;
  for (int i = 0; i < static_cast<int>(pool_.size()); ++i)
    if (ok(pool_[i])) {
      c.push_back(i);
      if (!pool_[i].leaf) ops.push_back(i);
    }
  if (c.empty()) return -1;
  // The newest op result makes chains (long fused kernels), an older one joins and fan-out.
  const double u = r_.uniform(0, 1);
  if (!ops.empty() && u < 0.55) return ops.back();
  if (!ops.empty() && u < 0.85) return ops[r_.range(0, static_cast<int64_t>(ops.size()) - 1)];
  return c[r_.range(0, static_cast<int64_t>(c.size()) - 1)];
}

Val DagGen::pick_any() {
  const int i = pick_index([](const Val&) { return true; });
  return i >= 0 ? pool_[i] : leaf(fdt_, rand_shape());
}

Val DagGen::partner(const Val& x, DType dt, bool need_exact, bool allow_special) {
  auto fits = [&](const Val& v) {
    Shape s;
    return v.dt() == dt && (!need_exact || v.exact()) && (allow_special || !v.special) &&
           broadcast_shapes(v.t.shape, x.t.shape, &s) && s.size() <= 4;
  };
  if (x.dt() == dt && r_.coin(0.05) && fits(x)) return x;  // x op x
  if (r_.coin(0.45)) {
    const int i = pick_index(fits);
    if (i >= 0) return pool_[i];
  }
  return leaf(dt, compatible(x.t.shape), allow_special);
}

Shape DagGen::rand_shape() {
  // Mostly the DAG's base shape or a broadcastable part of it: values then meet in one
  // iteration space and fuse into long loop kernels with many broadcast inputs, as in real steps.
  if (!base_.empty() && r_.coin(0.7)) return r_.coin(0.3) ? base_ : compatible(base_, false);
  const int rank = static_cast<int>(r_.weighted(std::array{1.0, 2.0, 3.0, 3.0, 2.0}));
  Shape s;
  for (int i = 0; i < rank; ++i) s.push_back(rand_dim());
  return s;
}

int64_t DagGen::rand_dim() { return r_.coin(0.3) ? 1 : r_.range(2, 7); }

Shape DagGen::compatible(const Shape& s, bool grow) {
  // A suffix of s with some dims set to 1; under s whole, maybe new leading dims.
  const int64_t rank = static_cast<int64_t>(s.size());
  const int64_t keep = r_.coin(0.6) ? rank : r_.range(0, rank);
  Shape t(s.end() - keep, s.end());
  for (int64_t& d : t)
    if (r_.coin(0.25)) d = 1;
  if (keep == rank && grow)
    while (t.size() < 4 && r_.coin(0.1)) t.insert(t.begin(), rand_dim());
  return t;
}

DType DagGen::rand_dtype() {
  const size_t i = r_.weighted(std::array{6.0, 2.0, 1.5, 1.5, 1.0});
  return std::array{fdt_, fdt_ == DType::F32 ? DType::F64 : DType::F32, DType::I32, DType::I64,
                    DType::Bool}[i];
}

double DagGen::rounding(DType dt, double bound, bool inputs_exact) const {
  return inputs_exact ? 0 : 2 * unit(dt) * bound;
}

double DagGen::transcendental(DType dt, double bound) const { return 8 * unit(dt) * (bound + 1); }

// --- driver -----------------------------------------------------------------------------------

std::vector<RandomResult> DagGen::generate() {
  // Sizes lean small (mean 19 nodes; 44% of the DAGs past 15, 15% past 40): each loop kernel
  // costs 13-16 ms of LLVM time at O3, and most bugs show in a few nodes.
  const double u = r_.uniform(0, 1);
  const int target = o_.min_ops + static_cast<int>(u * u * u * (o_.max_ops - o_.min_ops + 1));
  for (int i = r_.range(1, 2); i > 0; --i) param(r_.coin(0.8) ? fdt_ : rand_dtype(), rand_shape());
  using Step = void (DagGen::*)();
  constexpr std::array<Step, 15> kSteps{
      &DagGen::unary,     &DagGen::binary,     &DagGen::compare,     &DagGen::cast,
      &DagGen::view,      &DagGen::reduce,     &DagGen::matmul,      &DagGen::conv,
      &DagGen::softmax,   &DagGen::new_leaf,   &DagGen::fused_chain, &DagGen::autocast_gemm,
      &DagGen::max_pool,  &DagGen::all_reduce, &DagGen::index_move};
  constexpr std::array kWeights{18.0, 22.0, 12.0, 7.0, 10.0, 6.0, 3.0, 2.0, 2.0, 3.0, 4.0, 2.0,
                                1.5, 1.5, 2.0};
  for (int attempts = 0; added_ < target && attempts < 40 * target; ++attempts) {
    try {
      (this->*kSteps[r_.weighted(kWeights)])();
    } catch (const TypeError&) {
    } catch (const Reject&) {
    }
  }
  return pick_results();
}

std::vector<RandomResult> DagGen::pick_results() {
  std::vector<Val> out, used;
  for (const Val& v : pool_) {
    if (v.leaf) continue;
    (uses_[v.v] ? used : out).push_back(v);
  }
  while (out.size() > 8) out.erase(out.begin() + r_.range(0, static_cast<int64_t>(out.size()) - 1));
  if (!used.empty() && (out.empty() || r_.coin(0.3)))
    out.push_back(used[r_.range(0, static_cast<int64_t>(used.size()) - 1)]);
  if (r_.coin(0.05) && !pool_.empty()) out.push_back(pool_.front());  // a parameter (or full)
  if (!out.empty() && r_.coin(0.05)) out.push_back(out.front());      // the same value twice
  if (out.empty()) out.push_back(pool_.back());
  std::vector<RandomResult> r;
  for (const Val& v : out)
    r.push_back({v.v, seed_, static_cast<int>(r.size()), v.flt() ? v.err : 0.0, -1});
  // Donations (an in-place update: the result may take over a parameter's buffer): a parameter
  // of the same type, or of the same size in bytes only.
  std::vector<Val> params;
  for (const Val& v : pool_)
    if (v.v.is_param()) params.push_back(v);
  for (RandomResult& res : r) {
    if (res.value.is_param() || !r_.coin(0.3)) continue;
    const TensorType& t = g_.type(res.value);
    const bool same_type = r_.coin(0.7);
    // A parameter of the result's type may be written in place, element by element.
    auto fits = [&](const TensorType& p) {
      return same_type ? p == t : p.bytes() == t.bytes();
    };
    for (size_t i = 0; i < params.size(); ++i)
      if (fits(params[i].t)) {
        res.donor = params[i].v.param_index();
        params.erase(params.begin() + static_cast<std::ptrdiff_t>(i));  // donated once
        break;
      }
  }
  return r;
}

void RandomGraph::add_dag(uint64_t seed, const RandomDagOptions& options) {
  DagGen gen(graph_, params_, seed, options);
  for (RandomResult& r : gen.generate()) {
    if (r.donor >= 0) graph_.add_donation({r.donor, static_cast<int>(results_.size())});
    results_.push_back(r);
  }
  param_seeds_.resize(params_.size(), seed);
  std::vector<ir::Value> rs;
  for (const RandomResult& r : results_) rs.push_back(r.value);
  graph_.set_results(std::move(rs));
}

std::string buffer_str(const TensorType& t, const rt::Buffer& b, int64_t limit) {
  std::vector<std::string> v;
  const char* d = static_cast<const char*>(b.data());
  for (int64_t i = 0; i < std::min(t.numel(), limit); ++i) {
    switch (t.dtype) {
      case DType::F32: v.push_back(fmt::format("{}", reinterpret_cast<const float*>(d)[i])); break;
      case DType::F64: v.push_back(fmt::format("{}", reinterpret_cast<const double*>(d)[i])); break;
      case DType::I32:
        v.push_back(fmt::format("{}", reinterpret_cast<const int32_t*>(d)[i]));
        break;
      case DType::I64:
        v.push_back(fmt::format("{}", reinterpret_cast<const int64_t*>(d)[i]));
        break;
      default: v.push_back(fmt::format("{}", static_cast<int>(d[i]))); break;
    }
  }
  return fmt::format("[{}{}]", fmt::join(v, ", "), t.numel() > limit ? ", ..." : "");
}

std::vector<double> param_values(std::string_view text, std::string_view name) {
  std::vector<double> v;
  const std::string key = fmt::format("// %{} = [", name);
  const size_t at = text.find(key);
  if (at == std::string_view::npos) return v;
  const size_t from = at + key.size();
  const std::string list(text.substr(from, text.find(']', from) - from));
  for (const char* p = list.c_str(); *p;) {
    char* end = nullptr;
    const double x = std::strtod(p, &end);
    if (end == p) break;
    v.push_back(x);
    for (p = end; *p == ',' || *p == ' ';) ++p;
  }
  return v;
}

std::shared_ptr<rt::Buffer> buffer_from(const TensorType& t, std::span<const double> values) {
  static constexpr double kPattern[] = {0.5, -1.25, 2, 0, -0.75, 1.5, -2, 0.25};
  if (values.empty()) values = kPattern;
  auto b = rt::Buffer::allocate(t.bytes());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double x = values[static_cast<size_t>(i) % values.size()];
    switch (t.dtype) {
      case DType::F32: store(b, i, static_cast<float>(x)); break;
      case DType::F64: store(b, i, x); break;
      // As a cast computes it: defined for any value (saturating, NaN to 0).
      case DType::I32: store(b, i, ir::scalar::cast<int32_t>(x)); break;
      case DType::I64: store(b, i, ir::scalar::cast<int64_t>(x)); break;
      default: store<uint8_t>(b, i, x != 0); break;
    }
  }
  return b;
}

}  // namespace lt::testing
