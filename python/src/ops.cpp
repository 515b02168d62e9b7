// The op functions of lt/ops.h under their C++ names, tensors only (lazytrain/_ops.py turns
// Python numbers into tensors and takes PyTorch's argument spellings).
#include <vector>

#include "python/src/bind.h"

namespace lt::py {
namespace {

using T = Tensor;
using Ints = std::vector<int64_t>;

pb::tuple pair(const ValuesIndices& r) { return pb::make_tuple(r.values, r.indices); }


void bind_elementwise(pb::module_& m, const Loc& at) {
#define LT_UNARY(name) m.def(#name, [at](const T& x) { return name(x, at); })
  LT_UNARY(neg); LT_UNARY(abs); LT_UNARY(exp); LT_UNARY(expm1); LT_UNARY(log); LT_UNARY(log1p);
  LT_UNARY(sqrt); LT_UNARY(rsqrt); LT_UNARY(tanh); LT_UNARY(sigmoid); LT_UNARY(relu);
  LT_UNARY(silu); LT_UNARY(hardswish); LT_UNARY(hardsigmoid); LT_UNARY(mish); LT_UNARY(sin);
  LT_UNARY(cos); LT_UNARY(reciprocal); LT_UNARY(erf); LT_UNARY(isfinite); LT_UNARY(contiguous);
  LT_UNARY(clone); LT_UNARY(relu6); LT_UNARY(bitwise_not);
#undef LT_UNARY
#define LT_BINARY(name) m.def(#name, [at](const T& a, const T& b) { return name(a, b, at); })
  LT_BINARY(add); LT_BINARY(sub); LT_BINARY(mul); LT_BINARY(div); LT_BINARY(maximum);
  LT_BINARY(minimum); LT_BINARY(eq); LT_BINARY(ne); LT_BINARY(lt); LT_BINARY(le); LT_BINARY(gt);
  LT_BINARY(ge); LT_BINARY(logaddexp); LT_BINARY(outer); LT_BINARY(remainder);
  LT_BINARY(floor_divide); LT_BINARY(fmod); LT_BINARY(bitwise_and); LT_BINARY(bitwise_or);
  LT_BINARY(bitwise_xor);
#undef LT_BINARY
  m.def("floor", [at](const T& x) { return floor(x, at); });
  m.def("ceil", [at](const T& x) { return ceil(x, at); });
  m.def("trunc", [at](const T& x) { return trunc(x, at); });
  m.def("round", [at](const T& x, int64_t decimals) { return round(x, decimals, at); });
  m.def("pow", [at](const T& a, const T& b) { return pow(a, b, at); });
  m.def("pow_scalar", [at](const T& a, double b) { return pow(a, b, at); });
  m.def("pow_int", [at](const T& a, int64_t b) { return pow(a, b, at); });
  m.def("gelu", [at](const T& x, const std::string& approx) { return gelu(x, approx, at); });
  m.def("leaky_relu", [at](const T& x, double s) { return leaky_relu(x, s, at); });
  m.def("elu", [at](const T& x, double a) { return elu(x, a, at); });
  m.def("hardtanh", [at](const T& x, double lo, double hi) { return hardtanh(x, lo, hi, at); });
  m.def("softplus", [at](const T& x, double b, double th) { return softplus(x, b, th, at); });
  m.def("cast", [at](const T& x, int code) { return cast(x, dtype_of(code), at); });
  m.def("where", [at](const T& c, const T& a, const T& b) { return where(c, a, b, at); });
  // A Python int binds as an integer, a float as a float: the bounds promote by category.
  m.def("clamp", [at](const T& x, std::optional<Number> lo, std::optional<Number> hi) {
    return clamp(x, scalar_of(lo), scalar_of(hi), at);
  });
  m.def("masked_fill", [at](const T& x, const T& mask, double v) {
    return masked_fill(x, mask, v, at);
  });
  m.def("result_type", [](const T& a, const T& b) { return static_cast<int>(result_type(a, b)); });
}

void bind_reductions(pb::module_& m, const Loc& at) {
#define LT_REDUCE(name) \
  m.def(#name, [at](const T& x, const Ints& dims, bool keep) { return name(x, dims, keep, at); })
  LT_REDUCE(sum); LT_REDUCE(mean); LT_REDUCE(max); LT_REDUCE(min); LT_REDUCE(logsumexp);
  LT_REDUCE(prod);
#undef LT_REDUCE
  m.def("max_along", [at](const T& x, int64_t d, bool k) { return pair(max(x, d, k, at)); });
  m.def("min_along", [at](const T& x, int64_t d, bool k) { return pair(min(x, d, k, at)); });
  m.def("argmax", [at](const T& x, int64_t d, bool k) { return argmax(x, d, k, at); });
  m.def("argmin", [at](const T& x, int64_t d, bool k) { return argmin(x, d, k, at); });
  m.def("var", [at](const T& x, const Ints& d, bool unbiased, bool k) {
    return var(x, d, unbiased, k, at);
  });
  m.def("std", [at](const T& x, const Ints& d, bool unbiased, bool k) {
    return lt::std(x, d, unbiased, k, at);
  });
  m.def("cumsum", [at](const T& x, int64_t d) { return cumsum(x, d, at); });
  m.def("topk", [at](const T& x, int64_t k, int64_t d, bool largest, bool sorted) {
    return pair(topk(x, k, d, largest, sorted, at));
  });
  m.def("sort", [at](const T& x, int64_t d, bool desc) { return pair(sort(x, d, desc, at)); });
  m.def("argsort", [at](const T& x, int64_t d, bool desc) { return argsort(x, d, desc, at); });
}

void bind_views(pb::module_& m, const Loc& at) {
  m.def("reshape", [at](const T& x, const Ints& s) { return reshape(x, s, at); });
  m.def("view", [at](const T& x, const Ints& s) { return view(x, s, at); });
  m.def("permute", [at](const T& x, const Ints& p) { return permute(x, p, at); });
  m.def("transpose", [at](const T& x, int64_t a, int64_t b) { return transpose(x, a, b, at); });
  m.def("expand", [at](const T& x, const Ints& s) { return expand(x, s, at); });
  m.def("slice", [at](const T& x, int64_t axis, int64_t start, int64_t stop, int64_t step) {
    return slice(x, axis, start, stop, step, at);
  });
  m.def("squeeze", [at](const T& x, int64_t d) { return squeeze(x, d, at); });
  m.def("unsqueeze", [at](const T& x, int64_t d) { return unsqueeze(x, d, at); });
  m.def("flatten", [at](const T& x, int64_t a, int64_t b) { return flatten(x, a, b, at); });
  m.def("select", [at](const T& x, int64_t d, int64_t i) { return select(x, d, i, at); });
  m.def("narrow", [at](const T& x, int64_t d, int64_t s, int64_t n) {
    return narrow(x, d, s, n, at);
  });
  m.def("concat", [at](const std::vector<T>& xs, int64_t d) {
    return concat(std::span<const T>(xs), d, at);
  });
  m.def("stack", [at](const std::vector<T>& xs, int64_t d) {
    return stack(std::span<const T>(xs), d, at);
  });
  m.def("split", [at](const T& x, int64_t size, int64_t d) { return split(x, size, d, at); });
  m.def("split_with_sizes", [at](const T& x, const Ints& sizes, int64_t d) {
    return split_with_sizes(x, sizes, d, at);
  });
  m.def("chunk", [at](const T& x, int64_t n, int64_t d) { return chunk(x, n, d, at); });
  m.def("unbind", [at](const T& x, int64_t d) { return unbind(x, d, at); });
  m.def("pad", [at](const T& x, const std::vector<std::pair<int64_t, int64_t>>& p, double v) {
    return pad(x, p, v, at);
  });
}

void bind_indexing(pb::module_& m, const Loc& at) {
  m.def("gather", [at](const T& x, int64_t d, const T& i) { return gather(x, d, i, at); });
  m.def("scatter", [at](const T& x, int64_t d, const T& i, const T& s) {
    return scatter(x, d, i, s, at);
  });
  m.def("scatter_add", [at](const T& x, int64_t d, const T& i, const T& s) {
    return scatter_add(x, d, i, s, at);
  });
  m.def("index_select", [at](const T& x, int64_t d, const T& i) {
    return index_select(x, d, i, at);
  });
  m.def("index_add", [at](const T& x, int64_t d, const T& i, const T& s, double alpha) {
    return index_add(x, d, i, s, alpha, at);
  });
  m.def("flip", [at](const T& x, const Ints& d) { return flip(x, d, at); });
  m.def("roll", [at](const T& x, const Ints& s, const Ints& d) { return roll(x, s, d, at); });
  m.def("tril", [at](const T& x, int64_t d) { return tril(x, d, at); });
  m.def("triu", [at](const T& x, int64_t d) { return triu(x, d, at); });
  m.def("einsum", [at](const std::string& eq, const std::vector<T>& ops) {
    return einsum(eq, ops, at);
  });
  m.def("diagonal", [at](const T& x, int64_t o, int64_t d1, int64_t d2) {
    return diagonal(x, o, d1, d2, at);
  });
  m.def("diag", [at](const T& x, int64_t o) { return diag(x, o, at); });
  m.def("trace", [at](const T& x) { return trace(x, at); });
  m.def("nonzero", [at](const T& x) { return nonzero(x, at); });
  m.def("masked_select", [at](const T& x, const T& m) { return masked_select(x, m, at); });
  m.def("index", [at](const T& x, const T& i) { return index(x, i, at); });
  m.def("index_put", [at](const T& x, const T& i, const T& v, bool acc) {
    return index_put(x, i, v, acc, at);
  });
  m.def("unique", [at](const T& x, bool sorted, bool inverse, bool counts) {
    const Unique u = unique(x, sorted, inverse, counts, at);
    return pb::make_tuple(u.values, u.inverse, u.counts);
  });
  m.def("matmul", [at](const T& a, const T& b) { return matmul(a, b, at); });
  m.def("baddbmm", [at](const T& i, const T& a, const T& b, double beta, double alpha) {
    return baddbmm(i, a, b, beta, alpha, at);
  });
}

}  // namespace

void bind_ops(pb::module_& m) {
  const Loc& at = call_site();
  bind_elementwise(m, at);
  bind_reductions(m, at);
  bind_views(m, at);
  bind_indexing(m, at);
}

}  // namespace lt::py
