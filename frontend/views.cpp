#include "frontend/views.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "frontend/autograd/grad_node.h"
#include "frontend/dispatch.h"
#include "frontend/lazy/tracer.h"
#include "ir/recycling_allocator.h"
#include "lt/autograd.h"
#include "lt/lazy.h"
#include "lt/ops.h"

namespace lt {
namespace {

Shape contiguous_strides(const Shape& sizes) {
  Shape s(sizes.size());
  int64_t n = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    s[i] = n;
    n *= std::max<int64_t>(sizes[i], 1);
  }
  return s;
}

/// The layout the view op gives, from its operand's (sizes, strides, offset).
void step_layout(ir::Op op, const ir::Attrs& attrs, const Shape& in_sizes, const Shape& out_sizes,
                 Shape& strides, int64_t& offset) {
  switch (*ir::as_view(op)) {
    case ir::ViewOp::Reshape: {
      std::optional<Shape> s = reshaped_strides(in_sizes, strides, out_sizes);
      LT_CHECK(s, "reshape of {} to {} linked as a view", shape_str(in_sizes),
               shape_str(out_sizes));
      strides = std::move(*s);
      return;
    }
    case ir::ViewOp::Permute: {
      const auto& perm = std::get<ir::PermuteAttrs>(attrs).perm;
      Shape s(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) s[i] = strides[perm[i]];
      strides = std::move(s);
      return;
    }
    case ir::ViewOp::Expand: {
      const size_t lead = out_sizes.size() - in_sizes.size();
      Shape s(out_sizes.size(), 0);
      for (size_t i = 0; i < in_sizes.size(); ++i)
        s[lead + i] = in_sizes[i] == out_sizes[lead + i] ? strides[i] : 0;
      strides = std::move(s);
      return;
    }
    case ir::ViewOp::Slice: {
      const auto& a = std::get<ir::SliceAttrs>(attrs);
      for (size_t i = 0; i < strides.size(); ++i) {
        offset += a.start[i] * strides[i];
        strides[i] *= a.step[i];
      }
      return;
    }
    case ir::ViewOp::Concat:
    case ir::ViewOp::Pad: break;  // not views
  }
  LT_UNREACHABLE();
}

Tensor apply_step(const ViewStep& s, const Tensor& x) {
  return apply1(s.op, {&x, 1}, s.attrs, Loc::current());
}

/// Puts w (the shape of slice(parent)) where that slice is in parent's shape, and fills the
/// rest with `fill`: the slice's adjoint as an index map (pads, and for a step the interleaving
/// of a reshape).
Tensor embed_slice(const Tensor& w, const ir::SliceAttrs& a, const Shape& parent) {
  Tensor e = w;
  for (size_t ax = 0; ax < parent.size(); ++ax) {
    const int64_t start = a.start[ax], step = a.step[ax], dim = parent[ax];
    if (start == 0 && a.stop[ax] == dim && step == 1) continue;
    std::vector<std::pair<int64_t, int64_t>> pads(ax + 1, {0, 0});
    if (step > 1) {
      const int64_t m = e.shape()[ax];
      Shape spread = e.shape();
      spread.insert(spread.begin() + static_cast<int64_t>(ax) + 1, 1);
      std::vector<std::pair<int64_t, int64_t>> gaps(ax + 2, {0, 0});
      gaps[ax + 1] = {0, step - 1};
      Shape flat = e.shape();
      flat[ax] = m * step;
      e = reshape(pad(reshape(e, spread), gaps), flat);
      const int64_t keep = std::min(m * step, dim - start);
      if (keep < m * step) e = slice(e, static_cast<int64_t>(ax), 0, keep);
      pads[ax] = {start, dim - start - keep};
    } else {
      pads[ax] = {start, dim - a.stop[ax]};
    }
    e = pad(e, pads);
  }
  return e;
}

/// Parent with the result of step s on it replaced by w.
Tensor unapply_step(const ViewStep& s, const Tensor& parent, const Tensor& w) {
  switch (*ir::as_view(s.op)) {
    case ir::ViewOp::Reshape:
      return apply1(ir::Op::Reshape, {&w, 1}, ir::ReshapeAttrs{parent.shape()}, Loc::current());
    case ir::ViewOp::Permute: {
      const auto& perm = std::get<ir::PermuteAttrs>(s.attrs).perm;
      ir::Ints inverse(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
      return apply1(ir::Op::Permute, {&w, 1}, ir::PermuteAttrs{inverse}, Loc::current());
    }
    case ir::ViewOp::Slice: {
      const auto& a = std::get<ir::SliceAttrs>(s.attrs);
      if (w.numel() == 0) return parent;
      const Tensor mask = embed_slice(full(w.shape(), 1, DType::Bool), a, parent.shape());
      return where(mask, embed_slice(w, a, parent.shape()), parent);
    }
    case ir::ViewOp::Expand:  // one that repeats no element (others are refused before)
      return apply1(ir::Op::Reshape, {&w, 1}, ir::ReshapeAttrs{parent.shape()}, Loc::current());
    case ir::ViewOp::Concat:
    case ir::ViewOp::Pad: break;
  }
  LT_UNREACHABLE();
}

/// Takes value's data, and its autograd history as `history` says, into t.
void take(const std::shared_ptr<TensorImpl>& tp, const TensorImpl& v, History history) {
  TensorImpl& t = *tp;
  std::shared_ptr<rt::Buffer> buffer = v.buffer;  // v may be t itself (x.copy_(x))
  std::shared_ptr<LazyNode> lazy = v.lazy;
  const int lazy_index = v.lazy_index;
  std::shared_ptr<GradNode> grad_fn = history == History::Take ? v.grad_fn : nullptr;
  const int output_nr = history == History::Take ? v.output_nr : 0;
  const bool requires_grad = history == History::Take && v.requires_grad;
  std::shared_ptr<rt::Buffer> old = std::exchange(t.buffer, std::move(buffer));
  t.lazy = std::move(lazy);
  t.lazy_index = lazy_index;
  if (t.external) {
    // The value goes into the external memory: now, or when its graph has run (become_device_data).
    if (!t.pending()) {
      if (t.buffer != t.external)
        std::memcpy(t.external->data(), t.buffer->data(), t.external->bytes());
      t.buffer = t.external;
      t.lazy.reset();
    }
  } else if (t.pending() && old && t.donor.expired()) {
    // The old data is dead once the step runs: the graph may write the new value over it.
    t.donor = old;
  }
  if (t.pending()) lazy::track(tp);
  if (history == History::Keep) return;
  if (!t.grad_fn && !grad_fn) return;  // leaves stay leaves
  t.grad_fn = std::move(grad_fn);
  t.output_nr = output_nr;
  t.requires_grad = requires_grad;
}

/// After t took the result of an op as its new value (version bumped from `before`): the op's
/// saved output is t at its new version, and the operand the op replaced is kept as it was
/// (PyTorch saves an in-place op's original self).
void adopt_saved(TensorImpl& t, const GradNode* node, int output_nr, uint64_t before) {
  if (!node || !t.version) return;
  auto* n = const_cast<GradNode*>(node);
  if (output_nr < static_cast<int>(n->output_versions.size()))
    n->output_versions[output_nr] = {t.version, t.version->value};
  for (SavedVersion& s : n->input_versions)
    if (s.counter == t.version && s.value == before) s.counter.reset();
}

/// After a write to the base counted by c: the views it made stale let go of their old values
/// (they recompute them from the base when read), so that nothing holds the base's old buffer
/// and a lazy step can write the new value over it.
void drop_stale_views(VersionCounter& c) {
  size_t live = 0;
  for (size_t i = 0; i < c.views.size(); ++i) {
    std::shared_ptr<TensorImpl> v = c.views[i].lock();
    if (!v) continue;
    if (v->view->synced != c.value) {
      v->buffer.reset();
      v->lazy.reset();
      v->lazy_index = 0;
    }
    c.views[live++] = std::move(c.views[i]);
  }
  c.views.resize(live);
}

/// root (contiguous) with the elements a view of w's shape names over its storage (strides,
/// offset) replaced by w's.
Tensor scatter_into_storage(const Tensor& root, const Tensor& w, const Shape& strides,
                            int64_t offset) {
  const int64_t rank = w.rank();
  Tensor positions = full({}, static_cast<double>(offset), DType::I64);
  for (int64_t d = 0; d < rank; ++d) {
    Shape along(rank, 1);
    along[d] = w.shape()[d];
    const Tensor steps = arange(0, static_cast<double>(w.shape()[d]), 1, DType::I64);
    positions = add(positions, apply1(ir::Op::Reshape, {&steps, 1}, ir::ReshapeAttrs{along},
                                      Loc::current()) *
                                   strides[d]);
  }
  const Shape flat{root.numel()}, flat_w{w.numel()};
  positions = expand(positions, w.shape());
  const Tensor flat_positions =
      apply1(ir::Op::Reshape, {&positions, 1}, ir::ReshapeAttrs{flat_w}, Loc::current());
  const Tensor flat_root =
      apply1(ir::Op::Reshape, {&root, 1}, ir::ReshapeAttrs{flat}, Loc::current());
  const Tensor values = apply1(ir::Op::Reshape, {&w, 1}, ir::ReshapeAttrs{flat_w}, Loc::current());
  const Tensor written = scatter(flat_root, 0, flat_positions, values);
  return apply1(ir::Op::Reshape, {&written, 1}, ir::ReshapeAttrs{root.shape()}, Loc::current());
}

[[noreturn]] void refuse_overlap(const char* op, const Loc& loc) {
  throw Error(fmt::format("{}: unsupported operation: more than one element of the written-to "
                          "tensor refers to a single memory location. Please clone() the tensor "
                          "before performing the operation. at {}",
                          op, location_str(loc)));
}

}  // namespace

const std::shared_ptr<VersionCounter>& version_counter(TensorImpl& t) {
  if (!t.version) t.version = make_recycled<VersionCounter>();
  return t.version;
}

Shape strides_of(const TensorImpl& t) {
  return t.view ? t.view->strides : contiguous_strides(t.type.shape);
}

bool is_contiguous(const Shape& sizes, const Shape& strides) {
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return true;
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

std::optional<Shape> reshaped_strides(const Shape& sizes, const Shape& strides,
                                      const Shape& new_sizes) {
  if (sizes.empty()) return Shape(new_sizes.size(), 1);
  const int64_t n = numel(sizes);
  if (n == 0 && sizes == new_sizes) return strides;
  Shape out(new_sizes.size());
  if (n == 0) return contiguous_strides(new_sizes);
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    // The end of a chunk of dims that are contiguous with each other.
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

namespace {

/// A link for a new view of x: x's own, or one to x as the root.
std::shared_ptr<ViewLink> link_from(const Tensor& x) {
  TensorImpl& xi = *x.impl();
  auto link = make_recycled<ViewLink>();
  if (xi.view) {
    *link = *xi.view;
  } else {
    link->root = x.impl_ptr();
    link->strides = contiguous_strides(xi.type.shape);
    link->track_grad = grad_enabled();
  }
  return link;
}

/// Makes out a view by link, synced with its root now.
void attach(Tensor& out, std::shared_ptr<ViewLink> link) {
  TensorImpl& oi = *out.impl();
  oi.version = version_counter(*link->root);
  link->synced = oi.version->value;
  oi.view = std::move(link);
  oi.version->views.push_back(out.impl_ptr());
}

}  // namespace

void link_view(const Tensor& x, Tensor& out, ir::Op op, ir::Attrs attrs) {
  std::shared_ptr<ViewLink> link = link_from(x);
  step_layout(op, attrs, x.shape(), out.shape(), link->strides, link->offset);
  if (op != ir::Op::Reshape && op != ir::Op::Permute) link->covers_root = false;
  link->steps.push_back({op, std::move(attrs)});
  attach(out, std::move(link));
}

void link_view_steps(const Tensor& x, Tensor& out, std::vector<ViewStep> steps, Shape strides,
                     int64_t offset) {
  std::shared_ptr<ViewLink> link = link_from(x);
  link->strides = std::move(strides);
  link->offset += offset;
  link->covers_root = false;
  for (ViewStep& s : steps) link->steps.push_back(std::move(s));
  attach(out, std::move(link));
}

Tensor alias_view(const Tensor& x) {
  Tensor out = snapshot(x);
  std::shared_ptr<ViewLink> link = link_from(x);
  link->differentiable = false;
  link->track_grad = false;
  attach(out, std::move(link));
  return out;
}

void refresh_view(const std::shared_ptr<TensorImpl>& tp) {
  TensorImpl& t = *tp;
  ViewLink& v = *t.view;
  // A root with pending lazy work is read by tracing, whatever the mode.
  std::optional<ModeGuard> lazy_mode;
  if (v.root->pending()) lazy_mode.emplace(Mode::Lazy);
  std::optional<NoGradGuard> no_grad;
  if (!v.track_grad || !v.differentiable) no_grad.emplace();
  std::optional<EnableGradGuard> with_grad;
  if (v.track_grad && v.differentiable && !grad_enabled()) with_grad.emplace();
  Tensor value(v.root);
  for (const ViewStep& s : v.steps) value = apply_step(s, value);
  if (value.impl() == v.root.get()) value = snapshot(value);  // detach(): the root's value
  // A detached view keeps its own history: none, or that of a leaf made from it.
  take(tp, *value.impl(), v.differentiable ? History::Take : History::Keep);
  v.synced = v.root->version->value;
}

void assign_value(const std::shared_ptr<TensorImpl>& tp, const Tensor& value, History history) {
  TensorImpl& t = *tp;
  const TensorImpl& v = *value.impl();
  const GradNode* node = history == History::Take ? v.grad_fn.get() : nullptr;
  const int output_nr = v.output_nr;
  const uint64_t before = t.version ? t.version->value : 0;
  if (t.version) ++t.version->value;
  take(tp, v, history);
  if (t.version) drop_stale_views(*t.version);
  adopt_saved(t, node, output_nr, before);
}

void write_through(const std::shared_ptr<TensorImpl>& tp, const Tensor& value, History history,
                   const char* op, const Loc& loc) {
  TensorImpl& t = *tp;
  ViewLink& v = *t.view;
  for (size_t i = 0; i < v.strides.size(); ++i)
    if (v.strides[i] == 0 && t.type.shape[i] > 1) refuse_overlap(op, loc);
  const TensorImpl& root = *v.root;
  const bool recorded = v.differentiable && grad_enabled();
  if (recorded && root.requires_grad && !root.grad_fn)
    throw Error(fmt::format("{}: a view of a leaf Variable that requires grad is being used in "
                            "an in-place operation. at {}",
                            op, location_str(loc)));
  std::optional<NoGradGuard> no_grad;
  if (!v.differentiable) no_grad.emplace();
  const bool carried = history == History::Take && recorded;
  Tensor w = carried ? value : snapshot(value);
  std::vector<Tensor> chain{Tensor(v.root)};
  for (size_t k = 0; k + 1 < v.steps.size(); ++k) chain.push_back(apply_step(v.steps[k], chain[k]));
  // An expand that only adds or keeps dims of size 1 is a reshape; one that repeats elements
  // cannot run backwards, but the view (which repeats none, checked above) names one element of
  // the root for each of its own: the write scatters into the root by those positions.
  bool repeats = false;
  for (size_t k = 0; k < v.steps.size(); ++k) {
    const int64_t out = k + 1 < chain.size() ? chain[k + 1].numel() : t.type.numel();
    repeats |= v.steps[k].op == ir::Op::Expand && out != chain[k].numel();
  }
  if (repeats)
    w = scatter_into_storage(chain[0], w, v.strides, v.offset);
  else
    for (size_t k = v.steps.size(); k-- > 0;) w = unapply_step(v.steps[k], chain[k], w);
  if (w.impl() == v.root.get()) return;  // an empty slice: nothing written
  assign_value(v.root, w, recorded ? History::Take : History::Keep);
  if (carried) {
    const uint64_t before = t.version->value - 1;
    take(tp, *value.impl(), History::Take);
    adopt_saved(t, value.impl()->grad_fn.get(), value.impl()->output_nr, before);
    v.synced = t.version->value;
  } else {
    take(tp, *value.impl(), history == History::Keep ? History::Keep : History::Drop);
    // Its value is known; through a differentiable view its history is the root's new one,
    // recomputed on the next read.
    v.synced = t.version->value - (v.differentiable ? 1 : 0);
  }
}

Tensor snapshot(const Tensor& x) {
  refresh(x);
  TensorImpl& xi = *x.impl();
  auto d = make_recycled<TensorImpl>();
  d->type = xi.type;
  d->buffer = xi.buffer;
  d->lazy = xi.lazy;
  d->lazy_index = xi.lazy_index;
  if (d->pending()) lazy::track(d);
  return Tensor(std::move(d));
}

}  // namespace lt
