// Index maps: each view's transform of its operand's map (permute and slice move strides and
// offsets, expand zeroes strides, pad and concat add bounded pieces, reshape regroups dims where
// the layout allows), composed down a chain of views to values from outside the kernel.
#include "ir/read_map.h"

#include <algorithm>

#include "ir/error.h"

namespace lt::ir {

namespace {

// ---- Index maps. Each transform takes the operand's map and gives the view's. ----

bool covers_all(const ReadPiece& p, const Shape& s) {
  for (size_t d = 0; d < s.size(); ++d)
    if (p.lo[d] > 0 || p.hi[d] < s[d]) return false;
  return true;
}

/// Drops pieces that hold nowhere and pieces after one that holds everywhere.
ReadMap tidy(ReadMap m) {
  std::vector<ReadPiece> kept;
  for (ReadPiece& p : m.pieces) {
    bool empty = false;
    for (size_t d = 0; d < m.shape.size(); ++d) empty = empty || p.lo[d] >= p.hi[d];
    if (empty) continue;
    const bool all = covers_all(p, m.shape);
    kept.push_back(std::move(p));
    if (all) break;
  }
  m.pieces = std::move(kept);
  return m;
}

ReadMap identity_map(Value v, const Shape& s) {
  ReadPiece p;
  p.source = v;
  p.stride = contiguous_strides(s);
  p.lo.assign(s.size(), 0);
  p.hi = s;
  return tidy({s, {p}});
}

ReadMap permute_map(ReadMap m, const Ints& perm) {
  auto by_perm = [&](const Dims& xs) {
    Dims out(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) out[i] = xs[perm[i]];
    return out;
  };
  m.shape = by_perm(m.shape);
  for (ReadPiece& p : m.pieces) {
    p.stride = by_perm(p.stride);
    p.lo = by_perm(p.lo);
    p.hi = by_perm(p.hi);
  }
  return m;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

ReadMap slice_map(ReadMap m, const SliceAttrs& a, const Shape& out) {
  for (ReadPiece& p : m.pieces) {
    for (size_t d = 0; d < out.size(); ++d) {
      // out index i reads in index start + step * i, which must lie in [lo, hi).
      const int64_t start = a.start[d], step = a.step[d];
      p.offset += start * p.stride[d];
      p.stride[d] *= step;
      p.lo[d] = std::min(out[d], ceil_div(std::max<int64_t>(p.lo[d] - start, 0), step));
      p.hi[d] = std::min(out[d], ceil_div(std::max<int64_t>(p.hi[d] - start, 0), step));
    }
  }
  m.shape = out;
  return tidy(std::move(m));
}

/// Broadcast (right-aligned) to `to`; nullopt when the shapes do not broadcast.
std::optional<ReadMap> expand_map(ReadMap m, const Shape& to) {
  if (m.shape.size() > to.size()) return std::nullopt;
  const size_t lead = to.size() - m.shape.size();
  for (size_t d = 0; d < m.shape.size(); ++d)
    if (m.shape[d] != to[lead + d] && m.shape[d] != 1) return std::nullopt;
  for (ReadPiece& p : m.pieces) {
    ReadPiece q = p;
    q.stride.assign(to.size(), 0);
    q.lo.assign(to.size(), 0);
    q.hi = to;
    for (size_t d = 0; d < m.shape.size(); ++d) {
      if (m.shape[d] == to[lead + d]) {
        q.stride[lead + d] = p.stride[d];
        q.lo[lead + d] = p.lo[d];
        q.hi[lead + d] = p.hi[d];
      } else if (p.lo[d] >= p.hi[d]) {
        q.hi[lead + d] = 0;  // a repeated dim the piece does not cover
      }
    }
    p = std::move(q);
  }
  m.shape = to;
  return tidy(std::move(m));
}

ReadMap pad_map(ReadMap m, const PadAttrs& a, const Shape& out) {
  for (ReadPiece& p : m.pieces) {
    for (size_t d = 0; d < out.size(); ++d) {
      p.offset -= a.lo[d] * p.stride[d];
      p.lo[d] += a.lo[d];
      p.hi[d] += a.lo[d];
    }
  }
  ReadPiece fill;
  fill.constant = true;
  fill.fill = a.value;
  fill.stride.assign(out.size(), 0);
  fill.lo.assign(out.size(), 0);
  fill.hi = out;
  m.pieces.push_back(std::move(fill));
  m.shape = out;
  return tidy(std::move(m));
}

ReadMap concat_map(std::vector<ReadMap> parts, int64_t axis, const Shape& out) {
  ReadMap m{out, {}};
  int64_t at = 0;
  for (ReadMap& part : parts) {
    for (ReadPiece& p : part.pieces) {
      p.offset -= at * p.stride[axis];
      p.lo[axis] += at;
      p.hi[axis] += at;
      m.pieces.push_back(std::move(p));
    }
    at += part.shape[axis];
  }
  return tidy(std::move(m));
}

/// Reshape: dims of size 1 go (a piece that does not cover index 0 there holds nowhere) and
/// come (stride 0); runs of dims with equal products map onto each other, which needs every piece
/// unbounded on a run that changes and contiguous across it (stride[i] = stride[i+1] * dim[i+1]).
std::optional<ReadMap> reshape_map(const ReadMap& m, const Shape& out) {
  if (numel(out) == 0) {  // nothing is ever read
    ReadPiece p;
    p.constant = true;
    p.stride.assign(out.size(), 0);
    p.lo.assign(out.size(), 0);
    p.hi = out;
    return ReadMap{out, {p}};
  }
  std::vector<size_t> in_dims, out_dims;  // dims of size > 1
  for (size_t d = 0; d < m.shape.size(); ++d)
    if (m.shape[d] != 1) in_dims.push_back(d);
  for (size_t d = 0; d < out.size(); ++d)
    if (out[d] != 1) out_dims.push_back(d);
  ReadMap r{out, {}};
  for (const ReadPiece& p : m.pieces) {
    ReadPiece q = p;
    q.stride.assign(out.size(), 0);
    q.lo.assign(out.size(), 0);
    q.hi = out;
    bool holds = true;
    for (size_t d = 0; d < m.shape.size(); ++d)
      if (m.shape[d] == 1 && p.lo[d] >= p.hi[d]) holds = false;
    if (!holds) continue;
    size_t i = 0, o = 0;
    while (i < in_dims.size()) {
      // The run in_dims[i, i2) <-> out_dims[o, o2) with equal products.
      size_t i2 = i + 1, o2 = o + 1;
      int64_t pi = m.shape[in_dims[i]], po = out[out_dims[o]];
      while (pi != po) {
        if (pi < po)
          pi *= m.shape[in_dims[i2++]];
        else
          po *= out[out_dims[o2++]];
      }
      if (i2 == i + 1 && o2 == o + 1) {
        q.stride[out_dims[o]] = p.stride[in_dims[i]];
        q.lo[out_dims[o]] = p.lo[in_dims[i]];
        q.hi[out_dims[o]] = p.hi[in_dims[i]];
      } else {
        for (size_t k = i; k < i2; ++k) {
          const size_t d = in_dims[k];
          if (p.lo[d] > 0 || p.hi[d] < m.shape[d]) return std::nullopt;
          if (k + 1 < i2 && p.stride[d] != p.stride[in_dims[k + 1]] * m.shape[in_dims[k + 1]])
            return std::nullopt;
        }
        int64_t s = p.stride[in_dims[i2 - 1]];
        for (size_t k = o2; k-- > o;) {
          q.stride[out_dims[k]] = s;
          s *= out[out_dims[k]];
        }
      }
      i = i2;
      o = o2;
    }
    r.pieces.push_back(std::move(q));
  }
  return tidy(std::move(r));
}

std::optional<ReadMap> map_of(const Graph& g, Value v, const std::function<bool(Value)>& outside,
                              int depth) {
  if (outside(v)) return identity_map(v, g.type(v).shape);
  const Node& n = g.node(v.def);
  if (info(n.op).loop != LoopForm::IndexMap || depth > 256) return std::nullopt;
  std::vector<ReadMap> in;
  for (Value x : n.inputs) {
    auto m = map_of(g, x, outside, depth + 1);
    if (!m) return std::nullopt;
    in.push_back(std::move(*m));
  }
  const Shape& out = n.types[0].shape;
  switch (*as_view(n.op)) {
    case ViewOp::Reshape: return reshape_map(in[0], out);
    case ViewOp::Permute:
      return permute_map(std::move(in[0]), std::get<PermuteAttrs>(n.attrs).perm);
    case ViewOp::Expand: return expand_map(std::move(in[0]), out);
    case ViewOp::Slice: return slice_map(std::move(in[0]), std::get<SliceAttrs>(n.attrs), out);
    case ViewOp::Concat: return concat_map(std::move(in), std::get<ConcatAttrs>(n.attrs).axis, out);
    case ViewOp::Pad: return pad_map(std::move(in[0]), std::get<PadAttrs>(n.attrs), out);
  }
  LT_UNREACHABLE();
}

}  // namespace

std::optional<ReadMap> read_map(const Graph& g, Value v, const Shape& iter,
                                const std::function<bool(Value)>& outside) {
  auto m = map_of(g, v, outside, 0);
  if (!m) return std::nullopt;
  return expand_map(std::move(*m), iter);
}

}  // namespace lt::ir
