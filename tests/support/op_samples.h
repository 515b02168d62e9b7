// Table-driven op samples: for every op in ir/ops/*.def, inputs and attributes that run it through
// lt::apply, chosen away from kinks (relu at 0, ties in max) so gradcheck's central differences
// are meaningful. Shared by the gradcheck, op-table and (later) eager-vs-lazy tests.
#pragma once
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"
#include "lt/lt.h"

namespace lt::testing {

struct OpSample {
  ir::Op op;
  std::string name;            // what the sample exercises: "broadcast [2,3,4] x [3,1]"
  std::vector<Tensor> inputs;  // f64 floats, i64 ids/labels, bool conditions
  ir::Attrs attrs;
  std::vector<bool> differentiable;  // per input: gradcheck perturbs these
  int grad_outputs = 1;              // gradcheck seeds outputs [0, grad_outputs) (norms: output 0)
  double eps = 1e-6;                 // central-difference step
  double atol = 1e-6, rtol = 1e-5;   // gradcheck tolerance
  double f32_atol = 1e-4, f32_rtol = 1e-4;  // f32 result vs f64 result

  /// "matmul[2]: broadcast batch dims", for failure messages.
  std::string label() const;
  bool any_differentiable() const;
};

/// One or more samples for `op` (empty only when the table gained an op nobody sampled yet).
std::vector<OpSample> samples_for(ir::Op op);

/// The sample with every float input cast to `dt` and every f32/f64 dtype attribute (cast target,
/// one_hot/full/iota/rand dtype) set to `dt`. Integer, bool and f16/bf16 ones are kept.
OpSample at_dtype(const OpSample& s, DType dt);
/// Whether at_dtype(s, f32) differs from s (the op takes or makes floats).
bool takes_floats(const OpSample& s);

/// Runs the sample through lt::apply.
std::vector<Tensor> run_sample(const OpSample& s, std::span<const Tensor> inputs);
inline std::vector<Tensor> run_sample(const OpSample& s) { return run_sample(s, s.inputs); }

}  // namespace lt::testing

namespace lt::ir {
/// GoogleTest prints a parameterized test's Op by its mnemonic.
inline void PrintTo(Op op, std::ostream* os) { *os << mnemonic(op); }
}  // namespace lt::ir
