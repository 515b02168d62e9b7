// Gradients of the elementwise family, in lt:: ops. g = d(loss)/d(out), y = out; sum_to undoes
// broadcasting.
#include <cmath>
#include <numbers>

#include "frontend/autograd/grad_node.h"
#include "frontend/dispatch.h"
#include "ir/elementwise_scalar.h"
#include "lt/ops.h"

namespace lt {

using enum ir::ElementwiseOp;

std::vector<Tensor> vjp_elementwise(ir::ElementwiseOp op, const VjpArgs& a) {
  const Tensor& g = a.gout[0];
  const Tensor& y = a.out[0];
  const Tensor& x = a.in[0];
  auto to = [&](const Tensor& t, size_t i) { return sum_to(t, a.in[i].shape()); };
  switch (op) {
    case Neg: return {-g};
    case Abs: return {where(x > 0.0, g, where(x < 0.0, -g, 0.0))};
    case Exp: return {g * y};
    case Expm1: return {g * (y + 1.0)};
    case Log: return {g / x};
    case Log1p: return {g / (x + 1.0)};
    case Sqrt: return {g * 0.5 / y};
    case Rsqrt: return {g * -0.5 * y * y * y};
    case Tanh: return {g * (1.0 - y * y)};
    case Sigmoid: return {g * y * (1.0 - y)};
    case Relu: return {where(x > 0.0, g, 0.0)};
    case Gelu: {
      const double c = ir::scalar::kGeluScale, k = ir::scalar::kGeluCubic;
      Tensor t = tanh(c * (x + k * x * x * x));
      return {g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3 * k * x * x))};
    }
    case Sin: return {g * cos(x)};
    case Cos: return {-g * sin(x)};
    case Reciprocal: return {-g * y * y};
    case Floor: case Ceil: case Round: case Trunc:  // steps: 0 almost everywhere
      return {zeros_like(g)};
    case Erf: return {g * (2 / std::sqrt(std::numbers::pi)) * exp(-(x * x))};
    // Phi(x) + x phi(x), from x alone: the forward keeps nothing else.
    case GeluErf: return {g * apply1(ir::Op::GeluErfGrad, {&x, 1}, ir::NoAttrs{}, Loc::current())};
    case GeluErfGrad:  // d/dx (Phi(x) + x phi(x)) = phi(x) (2 - x^2)
      return {g * (exp(x * x * -0.5) * ir::scalar::kInvSqrt2Pi) * (2.0 - x * x)};
    case Cast:  // float -> int/bool is a step function: zero gradient almost everywhere
      return {is_float(x.dtype()) && is_float(y.dtype()) ? cast(g, x.dtype()) : Tensor()};
    case Add: return {to(g, 0), to(g, 1)};
    case Sub: return {to(g, 0), to(-g, 1)};
    case Mul: return {to(g * a.in[1], 0), to(g * x, 1)};
    case Div: return {to(g / a.in[1], 0), to(-g * y / a.in[1], 1)};
    case Pow: {
      const Tensor& e = a.in[1];
      Tensor gb = where(x > 0.0, g * y * log(x), 0.0);
      return {to(g * e * pow(x, e - 1.0), 0), to(gb, 1)};
    }
    case Maximum:
    case Minimum: {
      // PyTorch's rule: ties split the gradient evenly; the operand that lost gets none (with a
      // NaN operand neither lost, and both get g).
      const Tensor& b = a.in[1];
      const Tensor split = where(eq(x, b), g * 0.5, g);
      const Tensor a_lost = op == Maximum ? lt(x, b) : gt(x, b);
      const Tensor b_lost = op == Maximum ? gt(x, b) : lt(x, b);
      return {to(where(a_lost, 0.0, split), 0), to(where(b_lost, 0.0, split), 1)};
    }
    case Remainder:  // a - floor_divide(a, b) b, the quotient held fixed
      return {to(g, 0), to(-g * floor_divide(x, a.in[1]), 1)};
    case FloorDivide: return {to(zeros_like(g), 0), to(zeros_like(g), 1)};
    case Fmod:  // a - trunc(a / b) b, the quotient held fixed
      return {to(g, 0), to(-g * trunc(x / a.in[1]), 1)};
    case Where: return {Tensor(), to(where(x, g, 0.0), 1), to(where(x, 0.0, g), 2)};
    case IsFinite: case Eq: case Ne: case Lt: case Le: case Gt: case Ge: case BitwiseNot:
    case BitwiseAnd: case BitwiseOr: case BitwiseXor:
      return std::vector<Tensor>(a.in.size());
  }
  LT_UNREACHABLE();
}

}  // namespace lt
