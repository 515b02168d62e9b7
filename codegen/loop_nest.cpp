#include "codegen/loop_nest.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/read_map.h"

namespace lt::codegen {
namespace {

// Elementwise kernels with fewer rows than this get blocks of the innermost dim as rows.
constexpr int64_t kMinElementwiseRows = 16;
constexpr int64_t kElementwiseBlock = 16384;

using ir::LoopRole;
using ir::Value;

class LoopPlanner {
 public:
  LoopPlanner(const ir::Graph& g, const ir::FusionGroup& grp, bool keep_outer_dim)
      : g_(g), grp_(grp), keep_outer_dim_(keep_outer_dim) {}

  LoopNest run();

 private:
  bool outside(Value v) const { return v.is_param() || !p_.role.count(v.def); }
  LoopRole role(Value v) const { return p_.role.at(v.def); }
  Access dense_store(int buffer) const;
  void collect();
  void collapse();
  void order_loops();

  const ir::Graph& g_;
  const ir::FusionGroup& grp_;
  bool keep_outer_dim_;
  LoopNest p_;
  std::vector<Dims*> strides_;  // every access's strides, for collapsing
  std::vector<Dims*> los_, his_;
};

Access LoopPlanner::dense_store(int buffer) const {
  Access a;
  a.buffer = buffer;
  a.stride = contiguous_strides(grp_.shape);
  a.lo.assign(grp_.shape.size(), 0);
  a.hi = grp_.shape;
  return a;
}

// Reads through index maps, stores and reductions, over the uncollapsed iteration shape.
void LoopPlanner::collect() {
  const std::vector<LoopRole> roles = ir::loop_roles(g_, grp_.nodes);
  for (size_t i = 0; i < grp_.nodes.size(); ++i) p_.role[grp_.nodes[i]] = roles[i];
  for (size_t k = 0; k < grp_.inputs.size(); ++k)
    p_.input_buffer[grp_.inputs[k]] = static_cast<int>(k);
  const Shape& iter = grp_.shape;
  auto add_read = [&](Value v) {
    if (p_.reads.count(v) || (!outside(v) && role(v) != LoopRole::FoldedView)) return;
    const auto map = ir::read_map(g_, v, iter, [&](Value x) { return outside(x); });
    LT_CHECK(map.has_value(), "loop kernel reads {} through views that do not fold",
             ir::value_name(g_, v));
    Read r;
    r.dtype = g_.type(v).dtype;
    for (const ir::ReadPiece& p : map->pieces)
      r.pieces.push_back({p.constant ? -1 : p_.input_buffer.at(p.source), p.fill, p.offset,
                          p.stride, p.lo, p.hi});
    p_.reads[v] = std::move(r);
  };
  for (int id : grp_.nodes) {
    const LoopRole r = p_.role.at(id);
    if (r == LoopRole::Compute || r == LoopRole::Reduction)
      for (Value v : g_.node(id).inputs) add_read(v);
  }
  // Outputs: per element, or a reduction (or an alias of one) written once per kept index.
  auto reduction_of = [&](Value v) {
    while (role(v) == LoopRole::Alias) v = g_.node(v.def).inputs[0];
    return role(v) == LoopRole::Reduction ? v.def : -1;
  };
  const size_t nin = grp_.inputs.size();
  for (size_t k = 0; k < grp_.outputs.size(); ++k) {
    const Value v = grp_.outputs[k];
    const int buffer = static_cast<int>(nin + k);
    const int red = reduction_of(v);
    if (red < 0) {
      if (role(v) == LoopRole::FoldedView) add_read(v);
      p_.stores.push_back({v, dense_store(buffer)});
      continue;
    }
    auto it = std::find_if(p_.reductions.begin(), p_.reductions.end(),
                           [&](const Reduction& x) { return x.node == red; });
    if (it == p_.reductions.end()) {
      Reduction x;
      x.node = red;
      x.op = *ir::as_reduce(g_.node(red).op);
      const ir::Ints axes = ir::reduced_axes(g_, red);
      x.out = dense_store(-1);
      int64_t s = 1;
      for (size_t d = iter.size(); d-- > 0;) {
        const bool reduced = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end();
        x.out.stride[d] = reduced ? 0 : s;
        if (!reduced) s *= iter[d];
      }
      p_.reductions.push_back(std::move(x));
      it = p_.reductions.end() - 1;
    }
    it->out_buffers.push_back(buffer);
  }
  for (auto& [v, r] : p_.reads)
    for (Access& a : r.pieces) {
      strides_.push_back(&a.stride);
      los_.push_back(&a.lo);
      his_.push_back(&a.hi);
    }
  for (auto& [v, a] : p_.stores) {
    strides_.push_back(&a.stride);
    los_.push_back(&a.lo);
    his_.push_back(&a.hi);
  }
  for (Reduction& r : p_.reductions) {
    strides_.push_back(&r.out.stride);
    los_.push_back(&r.out.lo);
    his_.push_back(&r.out.hi);
  }
}

// Drops dims of size 1 and merges neighbours that every access walks as one run (same role, no
// bounds, stride[d] = stride[d+1] * dim[d+1]).
void LoopPlanner::collapse() {
  const Shape& iter = grp_.shape;
  std::vector<char> reduced(iter.size(), 0);
  for (int id : grp_.nodes)
    if (p_.role.at(id) == LoopRole::Reduction) {
      for (int64_t d : ir::reduced_axes(g_, id)) reduced[d] = 1;
      break;
    }
  const size_t n = strides_.size();
  std::vector<std::vector<int64_t>> st(n), lo(n), hi(n);
  Nest& ne = p_.nest;
  for (size_t d = 0; d < iter.size(); ++d) {
    if (iter[d] == 1) continue;
    if (keep_outer_dim_ && d == 0) p_.outer_kept = true;
    bool merge = !ne.dims.empty() && ne.reduced.back() == reduced[d] &&
                 !(p_.outer_kept && ne.dims.size() == 1);
    for (size_t k = 0; merge && k < n; ++k) {
      const auto& s = *strides_[k];
      merge = st[k].back() == s[d] * iter[d] && lo[k].back() == 0 &&
              hi[k].back() == ne.dims.back() && (*los_[k])[d] == 0 && (*his_[k])[d] == iter[d];
    }
    if (merge) {
      ne.dims.back() *= iter[d];
      for (size_t k = 0; k < n; ++k) {
        st[k].back() = (*strides_[k])[d];
        hi[k].back() = ne.dims.back();
      }
    } else {
      ne.dims.push_back(iter[d]);
      ne.reduced.push_back(reduced[d]);
      for (size_t k = 0; k < n; ++k) {
        st[k].push_back((*strides_[k])[d]);
        lo[k].push_back((*los_[k])[d]);
        hi[k].push_back((*his_[k])[d]);
      }
    }
  }
  for (size_t k = 0; k < n; ++k) {
    *strides_[k] = std::move(st[k]);
    *los_[k] = std::move(lo[k]);
    *his_[k] = std::move(hi[k]);
  }
}

// Rows for the thread pool and loops inside a row. Without reductions: rows of the innermost
// dim. Innermost dim reduced: one row per kept index, the reduced dims inside (the innermost one
// vectorized through its accumulator). Innermost dim kept: rows are kept indices of the outer
// kept dims times blocks of the innermost dim, and each row runs the reduced dims around a
// vectorized loop over its block, accumulating into the output (a bias gradient: blocks of
// columns, summing down the batch).
void LoopPlanner::order_loops() {
  Nest& ne = p_.nest;
  const int nd = static_cast<int>(ne.dims.size());
  ne.shape = {1, 1};
  if (nd == 0) return;
  const bool reducing = !p_.reductions.empty();
  if (!reducing) {
    int64_t rows = 1;
    for (int d = 0; d + 1 < nd; ++d) {
      ne.par.push_back(d);
      rows *= ne.dims[d];
    }
    ne.seq.push_back(nd - 1);
    // A few long rows (a collapsed 1-D update of a whole weight matrix is one row) would leave
    // the thread pool idle: rows become blocks of kElementwiseBlock elements of the innermost
    // dim instead (a multiple of 16: whole vectors and cache lines).
    if (rows < kMinElementwiseRows && ne.dims[nd - 1] >= 2 * kElementwiseBlock) {
      ne.block_dim = nd - 1;
      ne.block = kElementwiseBlock;
      ne.blocks = (ne.dims[nd - 1] + ne.block - 1) / ne.block;
    }
  } else if (ne.reduced[nd - 1]) {
    for (int d = 0; d < nd; ++d) (ne.reduced[d] ? ne.seq : ne.par).push_back(d);
  } else {
    int64_t reduced_count = 1;
    for (int d = 0; d + 1 < nd; ++d) {
      (ne.reduced[d] ? ne.seq : ne.par).push_back(d);
      if (ne.reduced[d]) reduced_count *= ne.dims[d];
    }
    ne.seq.push_back(nd - 1);
    ne.block_dim = nd - 1;
    // Blocks of about 16k elements of work, a multiple of 16 columns, and at least 1024 columns:
    // each row of a block is then a run of 4 KB or more that the prefetcher follows. Shorter runs
    // cost bandwidth: every run is a new stream for the prefetcher to find, and narrower blocks
    // lose even where they let more threads share the work.
    const int64_t want = (16384 / std::max<int64_t>(1, reduced_count) + 15) / 16 * 16;
    ne.block = std::clamp<int64_t>(std::max<int64_t>(want, 1024), 16, ne.dims[nd - 1]);
    ne.blocks = (ne.dims[nd - 1] + ne.block - 1) / ne.block;
  }
  for (int d : ne.par) ne.shape.rows *= ne.dims[d];
  ne.shape.rows *= ne.blocks;
  for (int d : ne.seq) ne.shape.inner *= d == ne.block_dim ? ne.block : ne.dims[d];
}

LoopNest LoopPlanner::run() {
  collect();
  collapse();
  order_loops();
  LoopShape& s = p_.nest.shape;
  if (numel(grp_.shape) == 0) s.rows = 0;
  if (keep_outer_dim_ && numel(grp_.shape) > 0) {
    if (grp_.shape.empty() || grp_.shape[0] == 1) s.rows_per_outer = s.rows;
    else if (p_.outer_kept && !p_.nest.par.empty() && p_.nest.par[0] == 0)
      s.rows_per_outer = s.rows / grp_.shape[0];
  }
  return std::move(p_);
}

}  // namespace

LoopNest plan_loop_nest(const ir::Graph& g, const ir::FusionGroup& grp, bool keep_outer_dim) {
  return LoopPlanner(g, grp, keep_outer_dim).run();
}

}  // namespace lt::codegen
