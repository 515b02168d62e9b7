// torch.einsum as a composition: each operand's repeated subscripts become diagonals and its
// subscripts seen nowhere else are summed; then the operands contract left to right, a pair
// with subscripts to sum as one batched matmul and a pair without as a broadcast product.
// Equations, broadcasting and errors are PyTorch's.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

#include "frontend/dispatch.h"
#include "frontend/wrap_dim.h"
#include "lt/ops.h"

namespace lt {

namespace {

// Subscripts as numbers: 'A'-'Z' are 0-25 and 'a'-'z' 26-51 (ASCII order, the order of an
// implicit output); the dims under "..." are 52 + their position among the ellipsis dims.
constexpr int kLetters = 52;

int letter_label(char c) { return c >= 'a' ? 26 + (c - 'a') : c - 'A'; }
char label_char(int l) { return static_cast<char>(l < 26 ? 'A' + l : 'a' + (l - 26)); }

/// One side of "->" parsed: each term's subscripts, and where its "..." is (-1: none).
struct Term {
  std::vector<int> letters;
  int ellipsis_at = -1;  // index into letters before which "..." stands
};

struct Equation {
  std::vector<Term> inputs;
  std::optional<Term> output;
};

[[noreturn]] void fail(std::string_view reason, std::span<const Tensor> ops, const Loc& loc) {
  fail_op("einsum", reason, ops, loc);
}

Equation parse(std::string_view eq, std::span<const Tensor> ops, const Loc& loc) {
  Equation out;
  Term cur;
  bool in_output = false;
  int dots = 0;
  const auto finish = [&] {
    if (dots != 0)
      fail(fmt::format("found '.' for {} that is not part of any ellipsis",
                       in_output ? std::string("output") : fmt::format("operand {}",
                                                                        out.inputs.size())),
           ops, loc);
    if (in_output) out.output = cur;
    else out.inputs.push_back(cur);
    cur = Term{};
  };
  for (size_t i = 0; i < eq.size(); ++i) {
    const char c = eq[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (cur.ellipsis_at >= 0)
        fail(fmt::format("found '.' for {} that is not part of any ellipsis",
                         in_output ? std::string("output")
                                   : fmt::format("operand {}", out.inputs.size())),
             ops, loc);
      if (++dots == 3) {
        cur.ellipsis_at = static_cast<int>(cur.letters.size());
        dots = 0;
      }
      continue;
    }
    if (dots != 0) finish();
    if (c == ',' && !in_output) {
      finish();
    } else if (c == '-' && !in_output && i + 1 < eq.size() && eq[i + 1] == '>') {
      finish();
      in_output = true;
      ++i;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      cur.letters.push_back(letter_label(c));
    } else {
      fail(fmt::format("invalid subscript given at index {} in the equation string, subscripts "
                       "must be in [a-zA-Z]",
                       i),
           ops, loc);
    }
  }
  finish();
  return out;
}

/// A tensor with one subscript per dim.
struct Labeled {
  Tensor t;
  std::vector<int> labels;
};

int64_t dim_of(const Labeled& x, int label) {
  auto it = std::find(x.labels.begin(), x.labels.end(), label);
  return it == x.labels.end() ? -1 : it - x.labels.begin();
}

/// x with the dims of `drop` summed out.
Labeled sum_out(Labeled x, const std::vector<int>& drop, const Loc& loc) {
  Axes axes;
  std::vector<int> kept;
  for (size_t i = 0; i < x.labels.size(); ++i) {
    if (std::find(drop.begin(), drop.end(), x.labels[i]) != drop.end())
      axes.push_back(static_cast<int64_t>(i));
    else
      kept.push_back(x.labels[i]);
  }
  if (axes.empty()) return x;
  return {sum(x.t, axes, false, loc), kept};
}

/// x's dims in the order of `order` (every label of x), and those of `order` x lacks as size 1.
Tensor arrange(const Labeled& x, const std::vector<int>& order, const Loc& loc) {
  Axes perm;
  for (int l : order)
    if (int64_t d = dim_of(x, l); d >= 0) perm.push_back(d);
  Tensor t = x.t;
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (!identity) t = permute(t, perm, loc);
  Shape s;
  for (int l : order) {
    const int64_t d = dim_of(x, l);
    s.push_back(d >= 0 ? x.t.shape()[d] : 1);
  }
  return s == t.shape() ? t : reshape(t, s, loc);
}

int64_t product(const Shape& s, size_t from, size_t to) {
  return std::accumulate(s.begin() + static_cast<int64_t>(from),
                         s.begin() + static_cast<int64_t>(to), int64_t{1},
                         std::multiplies<int64_t>());
}

/// The contraction of a and b over their shared labels not in `keep`.
Labeled contract(const Labeled& a, const Labeled& b, const std::vector<int>& keep,
                 const std::map<int, int64_t>& size, const Loc& loc) {
  const auto kept = [&](int l) { return std::find(keep.begin(), keep.end(), l) != keep.end(); };
  std::vector<int> batch, a_only, b_only, summed;
  for (int l : a.labels) {
    if (dim_of(b, l) < 0) a_only.push_back(l);
    else if (kept(l)) batch.push_back(l);
    else summed.push_back(l);
  }
  for (int l : b.labels)
    if (dim_of(a, l) < 0) b_only.push_back(l);
  // Shared dims of size 1 on one side take the other's size.
  const auto full = [&](const Labeled& x, const std::vector<int>& order) {
    Tensor t = arrange(x, order, loc);
    Shape s = t.shape();
    for (size_t i = 0; i < order.size(); ++i)
      if (dim_of(x, order[i]) >= 0) s[i] = size.at(order[i]);
    return s == t.shape() ? t : expand(t, s, loc);
  };
  std::vector<int> out_labels = batch;
  out_labels.insert(out_labels.end(), a_only.begin(), a_only.end());
  out_labels.insert(out_labels.end(), b_only.begin(), b_only.end());
  if (summed.empty()) {
    std::vector<int> a_order = batch, b_order = batch;
    a_order.insert(a_order.end(), a_only.begin(), a_only.end());
    b_order.insert(b_order.end(), a_only.begin(), a_only.end());
    b_order.insert(b_order.end(), b_only.begin(), b_only.end());
    Tensor ta = arrange(a, a_order, loc);
    Shape sa = ta.shape();
    sa.insert(sa.end(), b_only.size(), 1);
    return {mul(sa == ta.shape() ? ta : reshape(ta, sa, loc), arrange(b, b_order, loc), loc),
            out_labels};
  }
  std::vector<int> a_order = batch, b_order = batch;
  a_order.insert(a_order.end(), a_only.begin(), a_only.end());
  a_order.insert(a_order.end(), summed.begin(), summed.end());
  b_order.insert(b_order.end(), summed.begin(), summed.end());
  b_order.insert(b_order.end(), b_only.begin(), b_only.end());
  Tensor ta = full(a, a_order), tb = full(b, b_order);
  const size_t nb = batch.size(), na = a_only.size(), nk = summed.size();
  const int64_t bt = product(ta.shape(), 0, nb), m = product(ta.shape(), nb, nb + na),
                k = product(ta.shape(), nb + na, nb + na + nk),
                n = product(tb.shape(), nb + nk, tb.shape().size());
  Tensor c = matmul(reshape(ta, {bt, m, k}, loc), reshape(tb, {bt, k, n}, loc), loc);
  Shape s(ta.shape().begin(), ta.shape().begin() + static_cast<int64_t>(nb + na));
  s.insert(s.end(), tb.shape().begin() + static_cast<int64_t>(nb + nk), tb.shape().end());
  return {reshape(c, s, loc), out_labels};
}

}  // namespace

Tensor einsum(std::string_view equation, std::span<const Tensor> ops, Loc loc) {
  if (ops.empty()) fail("must provide at least one operand", ops, loc);
  need_defined(ops, "einsum", loc);
  Equation eq = parse(equation, ops, loc);
  if (eq.inputs.size() > ops.size())
    fail("fewer operands were provided than specified in the equation", ops, loc);
  if (eq.inputs.size() < ops.size())
    fail("more operands were provided than specified in the equation", ops, loc);

  // Each operand's labels, "..." as the ellipsis labels right-aligned to the longest.
  int64_t ellipsis_dims = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Term& t = eq.inputs[i];
    const int64_t n = static_cast<int64_t>(t.letters.size());
    if (t.ellipsis_at < 0 && n != ops[i].rank())
      fail(fmt::format("the number of subscripts in the equation ({}) does not match the number "
                       "of dimensions ({}) for operand {} and no ellipsis was given",
                       n, ops[i].rank(), i),
           ops, loc);
    if (t.ellipsis_at >= 0 && n > ops[i].rank())
      fail(fmt::format("the number of subscripts in the equation ({}) is more than the number "
                       "of dimensions ({}) for operand {}",
                       n, ops[i].rank(), i),
           ops, loc);
    if (t.ellipsis_at >= 0) ellipsis_dims = std::max(ellipsis_dims, ops[i].rank() - n);
  }
  std::vector<Labeled> xs;
  std::map<int, int64_t> size;
  std::map<int, int> count;  // how often each letter is written on the left
  for (const Term& t : eq.inputs)
    for (int l : t.letters) ++count[l];
  for (size_t i = 0; i < ops.size(); ++i) {
    const Term& t = eq.inputs[i];
    Labeled x{ops[i], {}};
    const int64_t covered = ops[i].rank() - static_cast<int64_t>(t.letters.size());
    for (size_t j = 0; j <= t.letters.size(); ++j) {
      if (static_cast<int>(j) == t.ellipsis_at)
        for (int64_t e = 0; e < covered; ++e)
          x.labels.push_back(kLetters + static_cast<int>(ellipsis_dims - covered + e));
      if (j < t.letters.size()) x.labels.push_back(t.letters[j]);
    }
    // A repeated subscript: the diagonal of its dims.
    for (bool again = true; again;) {
      again = false;
      for (size_t p = 0; p < x.labels.size() && !again; ++p)
        for (size_t q = p + 1; q < x.labels.size() && !again; ++q) {
          if (x.labels[p] != x.labels[q]) continue;
          const int64_t sp = x.t.shape()[p], sq = x.t.shape()[q];
          if (sp != sq)
            fail(fmt::format("subscript {} is repeated for operand {} but the sizes don't "
                             "match, {} != {}",
                             label_char(x.labels[p]), i, sq, sp),
                 ops, loc);
          x.t = diagonal(x.t, 0, static_cast<int64_t>(p), static_cast<int64_t>(q), loc);
          const int l = x.labels[p];
          x.labels.erase(x.labels.begin() + static_cast<int64_t>(q));
          x.labels.erase(x.labels.begin() + static_cast<int64_t>(p));
          x.labels.push_back(l);
          again = true;
        }
    }
    for (size_t d = 0; d < x.labels.size(); ++d) {
      const int l = x.labels[d];
      const int64_t s = x.t.shape()[d];
      auto [it, fresh] = size.emplace(l, s);
      if (fresh || it->second == s || s == 1) continue;
      if (it->second != 1) {
        if (l >= kLetters)
          fail(fmt::format("dimension {} covered by ellipsis in operand {} has size {} which "
                           "does not broadcast with previously seen ellipsis with size {} for "
                           "the respective dimension",
                           l - kLetters, i, s, it->second),
               ops, loc);
        fail(fmt::format("subscript {} has size {} for operand {} which does not broadcast "
                         "with previously seen size {}",
                         label_char(l), s, i, it->second),
             ops, loc);
      }
      it->second = s;
    }
    xs.push_back(std::move(x));
  }

  std::vector<int> output;
  if (eq.output) {
    const Term& t = *eq.output;
    for (size_t j = 0; j <= t.letters.size(); ++j) {
      if (static_cast<int>(j) == t.ellipsis_at)
        for (int64_t e = 0; e < ellipsis_dims; ++e)
          output.push_back(kLetters + static_cast<int>(e));
      if (j == t.letters.size()) break;
      const int l = t.letters[j];
      if (!count.contains(l))
        fail(fmt::format("output subscript {} does not appear in the equation for any input "
                         "operand",
                         label_char(l)),
             ops, loc);
      if (std::find(output.begin(), output.end(), l) != output.end())
        fail(fmt::format("output subscript {} appears more than once in the output",
                         label_char(l)),
             ops, loc);
      output.push_back(l);
    }
  } else {
    for (int64_t e = 0; e < ellipsis_dims; ++e) output.push_back(kLetters + static_cast<int>(e));
    for (const auto& [l, c] : count)
      if (l < kLetters && c == 1) output.push_back(l);
  }

  // The labels each step must keep: the output's and those of the operands still to come.
  const auto needed_after = [&](size_t i) {
    std::vector<int> keep = output;
    for (size_t j = i + 1; j < xs.size(); ++j)
      keep.insert(keep.end(), xs[j].labels.begin(), xs[j].labels.end());
    return keep;
  };
  const auto only_here = [&](const Labeled& x, size_t i) {
    std::vector<int> keep = needed_after(i);
    for (size_t j = 0; j < xs.size(); ++j)
      if (j != i) keep.insert(keep.end(), xs[j].labels.begin(), xs[j].labels.end());
    std::vector<int> drop;
    for (int l : x.labels)
      if (std::find(keep.begin(), keep.end(), l) == keep.end()) drop.push_back(l);
    return drop;
  };
  Labeled acc = sum_out(xs[0], only_here(xs[0], 0), loc);
  for (size_t i = 1; i < xs.size(); ++i) {
    Labeled b = sum_out(xs[i], only_here(xs[i], i), loc);
    acc = contract(acc, b, needed_after(i), size, loc);
  }
  std::vector<int> drop;
  for (int l : acc.labels)
    if (std::find(output.begin(), output.end(), l) == output.end()) drop.push_back(l);
  acc = sum_out(acc, drop, loc);
  Tensor out = arrange(acc, output, loc);
  // A dim of size 1 on every operand that holds it, and broadcast where none had it larger.
  Shape s;
  for (int l : output) s.push_back(size.at(l));
  return out.shape() == s ? out : expand(out, s, loc);
}

Tensor einsum(std::string_view equation, std::initializer_list<Tensor> operands, Loc loc) {
  return einsum(equation, std::span<const Tensor>(operands.begin(), operands.size()), loc);
}

}  // namespace lt
