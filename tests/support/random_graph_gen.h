// Internals of the random DAG generator (random_graph.cpp: building blocks and driver;
// random_graph_steps.cpp: one function per kind of op drawn). Not for use outside those files.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <vector>

#include "ir/error.h"
#include "tests/support/random_graph.h"

namespace lt::testing {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Unit roundoff of a float dtype.
double unit(DType t);
/// Largest finite magnitude a float value may reach; past it the generator clamps.
double float_limit(DType t);
/// Largest magnitude of an integer value (products and sums stay clear of overflow).
double int_limit(DType t);

/// Portable draws from a 64-bit Mersenne Twister (std distributions differ between libraries).
class Rng {
 public:
  explicit Rng(uint64_t seed) : e_(seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL) {}
  /// Uniform in [lo, hi].
  int64_t range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(e_() % static_cast<uint64_t>(hi - lo + 1));
  }
  double uniform(double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(e_() >> 11) * 0x1p-53;
  }
  bool coin(double p) { return uniform(0, 1) < p; }
  /// An index drawn with the given weights.
  size_t weighted(std::span<const double> w);

 private:
  std::mt19937_64 e_;
};

/// A drawn value and what is known about it (see random_graph.cpp).
struct Val {
  ir::Value v;
  TensorType t;
  double bound = 0;      // |finite element| <= bound
  double err = 0;        // |compiled - reference| <= err on finite elements; 0: exact
  bool special = false;  // may hold NaN or +-inf (float only)
  bool leaf = false;     // a parameter or a full
  double splat = kNaN;   // every element holds this (a full, or a view of one); NaN: unknown
  bool exact() const { return err == 0; }
  DType dt() const { return t.dtype; }
  bool flt() const { return is_float(t.dtype); }
  int64_t rank() const { return t.rank(); }
};

struct Facts {
  double bound = 0, err = 0;
  bool special = false;
  double splat = kNaN;  // every element holds this (a full, or a view of one); NaN: unknown
};

/// A draw that does not work here; the step is drawn again.
struct Reject {};

class DagGen {
 public:
  DagGen(ir::Graph& g, std::vector<std::shared_ptr<rt::Buffer>>& data, uint64_t seed,
         const RandomDagOptions& o);
  std::vector<RandomResult> generate();

 private:
  // Building blocks. emit adds a node (lt::TypeError when the draw is invalid) and pools it.
  Val emit(ir::Op op, const std::vector<Val>& in, ir::Attrs attrs, Facts f);
  Val param(DType dt, const Shape& s, bool allow_special = true);
  Val full(DType dt, const Shape& s, double v);
  Val leaf(DType dt, const Shape& s, bool allow_special = true);
  /// An int64 parameter of positions in [0, size), kept out of the pool.
  Val index_param(const Shape& s, int64_t size);
  /// min(max(x, -c), c); err < 0 keeps x's error bound.
  Val clamp(const Val& x, double c, double err = -1);
  Val fit(const Val& x, double c) { return x.bound > c ? clamp(x, c) : x; }
  /// |x| + c, c > 0.
  Val positive(const Val& x, double c);
  /// A cast to `to` where that keeps the facts honest; Reject where it cannot.
  Val convert(const Val& x, DType to);
  Val to_float(const Val& x);
  /// op on exact operands, unguarded (NaN, inf, huge values), then clamped to c.
  Val raw_clamped(ir::Op op, const std::vector<Val>& in, bool exact_op, double c);

  // Picking operands.
  int pick_index(const std::function<bool(const Val&)>& ok);
  Val pick_any();
  /// A second operand for x: dtype dt, shape broadcastable with x's; exact when need_exact,
  /// free of NaN/inf unless allow_special.
  Val partner(const Val& x, DType dt, bool need_exact = false, bool allow_special = true);
  Shape rand_shape();
  int64_t rand_dim();
  /// A shape that broadcasts with s (grow: maybe with new leading dims).
  Shape compatible(const Shape& s, bool grow = true);
  DType rand_dtype();
  /// Error an exactly rounded op adds when its inputs already differ (none when they do not).
  double rounding(DType dt, double bound, bool inputs_exact) const;
  /// Error a libm/Eigen function adds (a few ulps, absolute near zero).
  double transcendental(DType dt, double bound) const;

  // Steps: each draws one op (plus the guards, casts and clamps it needs).
  // Elementwise rows, drawn from the table (arity, operand column) and their facts derived from
  // their ir::scalar definitions.
  void unary();
  void unary_float(ir::Op op, Val x);
  void binary();
  void binary_generic(ir::Op op, Val x, Val y);
  void divide(const Val& x, const Val& y);
  void power(const Val& x, const Val& y);
  void compare();
  void cast();
  void view();  // one of:
  void reshape(const Val& x);
  void permute(const Val& x);
  void expand(const Val& x);
  void slice(const Val& x);
  void pad(const Val& x);
  void concat(const Val& x);
  void reduce();
  void fused_chain();  // view, elementwise, reduction in a row (one loop kernel, usually)
  void matmul();
  void conv();  // conv2d, often of 16 channels: the lowering then runs it channels-last
  Val conv_of(Val x, int64_t out_channels);  // a conv2d of x, of random geometry
  void max_pool();  // max_pool2d, and its gradient where the input is exact
  /// Autocast's pattern: a matmul or conv2d of float operands cast to bf16, its result cast
  /// back to f32 (which the lowering may make the GEMM's unrounded f32 result). The bf16 values
  /// stay out of the pool.
  void autocast_gemm();
  void softmax();
  /// all_reduce, the identity in the test's job of one rank: its buffer may take its operand's
  /// bytes (the buffer plan's collective alias) or a copy of them, and both must stay right.
  void all_reduce();
  /// gather, scatter or scatter_add along a random axis, with an index parameter of valid
  /// positions (repeats included: scatter's last write and scatter_add's order are defined).
  void index_move();
  void new_leaf();
  Val reshape_to(const Val& x, Shape s);

  std::vector<RandomResult> pick_results();

  ir::Graph& g_;
  std::vector<std::shared_ptr<rt::Buffer>>& data_;
  Rng r_;
  uint64_t seed_;
  RandomDagOptions o_;
  bool specials_ = false;   // NaN/inf/-0/tiny/huge data and raw domain ops
  DType fdt_ = DType::F32;  // the DAG's main float dtype
  Shape base_;              // the DAG's main shape
  std::vector<Val> pool_;   // values later steps may use
  std::map<ir::Value, int> uses_;
  int added_ = 0;  // nodes added
  int params_ = 0;
};

}  // namespace lt::testing
