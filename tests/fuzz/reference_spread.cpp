#include "tests/fuzz/reference_spread.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ir/error.h"
#include "runtime/interpreter.h"
#include "tests/fuzz/param_data.h"

namespace lt::fuzz {
namespace {

using ir::Op;

constexpr double kSpreadFactor = 8;  // allowed drift per unit of measured spread
constexpr double kUlps = 64;         // allowed drift of an inexact element, in its own ulps
constexpr double kPerturbUlps = 4;   // size of one perturbation
constexpr int64_t kMaxCombined = int64_t{1} << 14;  // cap on the elements one output combines

// Ops whose compiled form gives the reference's bits on the same inputs. A listed op is a
// promise the comparison checks bit for bit; an op missing here is only compared within bounds.
constexpr Op kExactOps[] = {
    Op::Neg,     Op::Abs,      Op::Relu,      Op::IsFinite,    Op::Cast,       Op::Add,
    Op::Sub,     Op::Mul,      Op::Div,       Op::Reciprocal,  Op::Maximum,    Op::Minimum,
    Op::Eq,      Op::Ne,       Op::Lt,        Op::Le,          Op::Gt,         Op::Ge,
    Op::Where,   Op::Reshape,  Op::Permute,   Op::Expand,      Op::Slice,      Op::Concat,
    Op::Pad,     Op::Full,     Op::Iota,      Op::RandUniform, Op::RandNormal, Op::ReduceMax,
    Op::ReduceMin, Op::ArgMax, Op::MaxPool2d, Op::OneHot,      Op::Embedding};

bool exact_op(const ir::Node& n) {
  if (n.op == Op::Sum) return !is_float(n.types[0].dtype);  // integer sums wrap associatively
  return std::find(std::begin(kExactOps), std::end(kExactOps), n.op) != std::end(kExactOps);
}

double unit_roundoff(DType t) {
  switch (t) {
    case DType::F16: return 0x1p-11;
    case DType::BF16: return 0x1p-8;
    case DType::F32: return 0x1p-24;
    case DType::F64: return 0x1p-53;
    case DType::Bool:
    case DType::I32:
    case DType::I64: return 0;
  }
  return 0;
}

double smallest_normal(DType t) {
  switch (t) {
    case DType::F16: return 0x1p-14;
    case DType::BF16:
    case DType::F32: return 0x1p-126;
    case DType::F64: return 0x1p-1022;
    case DType::Bool:
    case DType::I32:
    case DType::I64: return 0;
  }
  return 0;
}

/// How many input elements one output element of an inexact node combines (at most
/// kMaxCombined): the reduced count of a sum or mean, else (library and nn ops) the largest
/// input, which bounds every reduction they do; 1 for elementwise ops.
int64_t combined(const ir::Graph& g, const ir::Node& n) {
  int64_t in = 1;
  for (ir::Value v : n.inputs) in = std::max(in, g.type(v).numel());
  const int64_t out = std::max<int64_t>(1, n.types[0].numel());
  if (ir::info(n.op).family == ir::OpFamily::Elementwise) return 1;
  if (n.op == Op::Sum || n.op == Op::Mean) return std::clamp<int64_t>(in / out, 1, kMaxCombined);
  return std::min(in, kMaxCombined);
}

/// A float edge the perturbed graph multiplies by 1 +- amplitude (a parameter of its own).
struct Factor {
  TensorType type;
  double amplitude;
};

/// g with a multiplication by a perturbation factor on the float inputs and outputs of every
/// node that is not exactly rounded; the factors are parameters after g's own.
ir::Graph perturbed(const ir::Graph& g, std::vector<Factor>& factors) {
  ir::Graph p(g.name());
  for (const ir::Param& prm : g.params()) p.add_param(prm.type, prm.name);
  auto scale = [&](ir::Value v, double amplitude) {
    const TensorType t = p.type(v);
    if (t.dtype != DType::F32 && t.dtype != DType::F64) return v;
    factors.push_back({t, amplitude * unit_roundoff(t.dtype)});
    const ir::Value f = p.add_param(t, fmt::format("perturb{}", factors.size()));
    return p.add_typed(Op::Mul, {v, f}, ir::NoAttrs{}, {t});
  };
  std::vector<std::vector<ir::Value>> map(g.nodes().size());
  auto mapped = [&](ir::Value v) { return v.is_param() ? v : map[v.def][v.index]; };
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id) {
    const ir::Node& n = g.node(id);
    const bool exact = exact_op(n);
    std::vector<ir::Value> in;
    for (ir::Value v : n.inputs)
      in.push_back(exact ? mapped(v) : scale(mapped(v), kPerturbUlps * combined(g, n)));
    const ir::Value out = p.add_typed(n.op, std::move(in), n.attrs, n.types, n.loc);
    for (int k = 0; k < static_cast<int>(n.types.size()); ++k) {
      const ir::Value v = ir::Value::node(out.def, k);
      map[id].push_back(exact ? v : scale(v, kPerturbUlps));
    }
  }
  std::vector<ir::Value> results;
  for (ir::Value v : g.results()) results.push_back(mapped(v));
  p.set_results(std::move(results));
  return p;
}

/// Per value of g (ir::ValueIndex): computed by exactly rounded ops only.
std::vector<bool> exact_values(const ir::Graph& g) {
  const ir::ValueIndex index(g);
  std::vector<bool> exact(static_cast<size_t>(index.size()), true);
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id) {
    const ir::Node& n = g.node(id);
    bool e = exact_op(n);
    for (ir::Value v : n.inputs) e = e && exact[index(v)];
    for (int k = 0; k < static_cast<int>(n.types.size()); ++k)
      exact[index(ir::Value::node(id, k))] = e;
  }
  return exact;
}

enum class Class { Finite, NaN, PosInf, NegInf };
Class classify(double x) {
  if (std::isnan(x)) return Class::NaN;
  if (std::isinf(x)) return x > 0 ? Class::PosInf : Class::NegInf;
  return Class::Finite;
}

bool same_bytes(const rt::Buffer& a, const rt::Buffer& b, size_t at, size_t width) {
  return std::memcmp(static_cast<const char*>(a.data()) + at,
                     static_cast<const char*>(b.data()) + at, width) == 0;
}

}  // namespace

ReferenceRun run_reference(const ir::Graph& g, std::span<const std::shared_ptr<rt::Buffer>> params,
                           InputRng& rng, int runs) {
  ReferenceRun ref;
  ref.results = rt::InterpretedGraph(g).run(params);
  const std::vector<bool> exact = exact_values(g);
  const ir::ValueIndex index(g);
  for (size_t i = 0; i < g.results().size(); ++i) {
    ref.exact.push_back(exact[index(g.results()[i])]);
    const size_t n = static_cast<size_t>(g.type(g.results()[i]).numel());
    ref.spread.emplace_back(n, 0.0);
    ref.unstable.emplace_back(n, 0);
  }
  std::vector<Factor> factors;
  const rt::InterpretedGraph moved(perturbed(g, factors));
  for (int r = 0; r < runs && !factors.empty(); ++r) {
    std::vector<std::shared_ptr<rt::Buffer>> p(params.begin(), params.end());
    for (const Factor& f : factors) {
      auto b = rt::Buffer::allocate(f.type.bytes());
      for (int64_t k = 0; k < f.type.numel(); ++k) {
        const double x = 1 + (rng.coin(0.5) ? f.amplitude : -f.amplitude);
        if (f.type.dtype == DType::F32) {
          const auto v = static_cast<float>(x);
          std::memcpy(static_cast<char*>(b->data()) + k * 4, &v, 4);
        } else {
          std::memcpy(static_cast<char*>(b->data()) + k * 8, &x, 8);
        }
      }
      p.push_back(std::move(b));
    }
    std::vector<std::shared_ptr<rt::Buffer>> got;
    try {
      got = moved.run(p);
    } catch (const Error&) {  // data-dependent: an id computed from a moved float, say
      for (size_t i = 0; i < ref.results.size(); ++i)
        if (!ref.exact[i]) std::fill(ref.unstable[i].begin(), ref.unstable[i].end(), 1);
      continue;
    }
    for (size_t i = 0; i < ref.results.size(); ++i) {
      const DType dt = g.type(g.results()[i]).dtype;
      const size_t w = dtype_size(dt);
      for (size_t k = 0; k < ref.spread[i].size(); ++k) {
        if (!is_float(dt)) {
          if (!same_bytes(*ref.results[i], *got[i], k * w, w)) ref.unstable[i][k] = 1;
          continue;
        }
        const double a = element(dt, *ref.results[i], static_cast<int64_t>(k));
        const double b = element(dt, *got[i], static_cast<int64_t>(k));
        if (classify(a) != classify(b)) {
          ref.unstable[i][k] = 1;
        } else if (classify(a) == Class::Finite) {
          ref.spread[i][k] = std::max(ref.spread[i][k], std::abs(a - b));
        }
      }
    }
  }
  return ref;
}

std::string compare_result(const ir::Graph& g, const ReferenceRun& ref, size_t i,
                           const rt::Buffer& got) {
  const TensorType& t = g.type(g.results()[i]);
  const rt::Buffer& want = *ref.results[i];
  if (got.bytes() != want.bytes())
    return fmt::format("{} bytes, the reference has {}", got.bytes(), want.bytes());
  const size_t w = dtype_size(t.dtype);
  int64_t bad = 0;
  std::string first;
  for (int64_t k = 0; k < t.numel(); ++k) {
    const size_t ku = static_cast<size_t>(k);
    if (ref.unstable[i][ku]) continue;
    const double a = element(t.dtype, want, k), b = element(t.dtype, got, k);
    bool ok;
    double tol = 0;
    if (!is_float(t.dtype)) {
      ok = same_bytes(want, got, ku * w, w);
    } else if (classify(a) != Class::Finite || classify(b) != Class::Finite) {
      ok = classify(a) == classify(b);
    } else {
      if (!ref.exact[i])
        tol = kSpreadFactor * ref.spread[i][ku] +
              kUlps * unit_roundoff(t.dtype) * std::abs(a) + 4 * smallest_normal(t.dtype);
      ok = std::abs(a - b) <= tol;  // -0 == +0
    }
    if (!ok && bad++ == 0)
      first = fmt::format("element {}: compiled {:.17g}, reference {:.17g} (allowed {:.3g})", k,
                          b, a, tol);
  }
  if (bad == 0) return "";
  return fmt::format("{} ({}, {} of {} elements differ): {}", type_str(t),
                     ref.exact[i] ? "exactly rounded" : "inexact", bad, t.numel(), first);
}

}  // namespace lt::fuzz
