#include "passes/channels_last.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>
#include <vector>

namespace lt::passes {
namespace {

// NHWC = permute(NCHW, kToLast); NCHW = permute(NHWC, kToFirst). kToLast[i] is the NCHW axis at
// NHWC position i, so NCHW axis a sits at NHWC position kToFirst[a].
constexpr std::array<int64_t, 4> kToLast{0, 2, 3, 1};
constexpr std::array<int64_t, 4> kToFirst{0, 3, 1, 2};

// Input channels per group from which a convolution goes channels-last. Fewer run on NCHW with
// im2col (runtime/kernels/conv.cpp), which would only permute a channels-last one back.
constexpr int64_t kMinChannelsPerGroup = 16;

bool is_conv(ir::Op op) {
  return op == ir::Op::Conv2d || op == ir::Op::Conv2dInputGrad || op == ir::Op::Conv2dWeightGrad;
}

/// Whether n is a convolution of one input channel (groups 1): its input's NCHW and channels-last
/// forms are the same bytes, so only its output's layout is to choose.
bool one_channel(const ir::Graph& g, const ir::Node& n) {
  const auto& a = std::get<ir::ConvAttrs>(n.attrs);
  const Shape& x = n.op == ir::Op::Conv2dInputGrad ? a.grad_shape : g.type(n.inputs[0]).shape;
  return a.groups == 1 && x[1] == 1;
}

// Output channels of a multiple of which a one-channel forward goes channels-last: the runtime's
// direct kernel for it (runtime/kernels/conv_one_channel.cpp) works in vectors of 16 channels.
constexpr int64_t kOneChannelOutputMultiple = 16;

/// Whether x is a depthwise convolution's output (groups > 1, too few channels per group to go
/// channels-last), itself or through elementwise ops and batch norms, which keep its layout.
bool from_nchw_grouped_conv(const ir::Graph& g, ir::Value x) {
  while (!x.is_param()) {
    const ir::Node& d = g.node(x.def);
    if (d.op == ir::Op::Conv2d) {
      const auto& a = std::get<ir::ConvAttrs>(d.attrs);
      return a.groups > 1 && g.type(d.inputs[0]).shape[1] / a.groups < kMinChannelsPerGroup;
    }
    if (d.op == ir::Op::BatchNorm && x.index == 0) {
      x = d.inputs[0];
      continue;
    }
    if (!ir::as_elementwise(d.op)) return false;
    const auto rank4 = std::find_if(d.inputs.begin(), d.inputs.end(), [&](ir::Value v) {
      return g.type(v).rank() == 4 && g.type(v).dtype != DType::Bool;
    });
    if (rank4 == d.inputs.end()) return false;
    x = *rank4;
  }
  return false;
}

// Output pixels from which an NCHW pointwise convolution is a GEMM per image as fast as on
// channels-last activations (the CPU runtime's rule: runtime/kernels/conv.cpp); on smaller maps
// its NCHW kernel reorders, and channels-last with the permutes is faster.
constexpr int64_t kNchwPointwisePixels = 28 * 28;

/// Whether n (a convolution pass) is of a 1x1 kernel, groups 1, stride 1, no padding, on a map
/// of kNchwPointwisePixels or more.
bool is_pointwise(const ir::Graph& g, const ir::Node& n) {
  const auto& a = std::get<ir::ConvAttrs>(n.attrs);
  const Shape& w = n.op == ir::Op::Conv2dWeightGrad ? a.grad_shape : g.type(n.inputs[1]).shape;
  const Shape& x = n.op == ir::Op::Conv2dInputGrad ? a.grad_shape : g.type(n.inputs[0]).shape;
  const bool unit = a.stride == ir::Ints{1, 1} && a.padding == ir::Ints{0, 0};
  return a.groups == 1 && w[2] == 1 && w[3] == 1 && unit &&
         x[2] * x[3] >= kNchwPointwisePixels;
}

/// Per node: whether it is a pass of a pointwise convolution whose input comes from an NCHW
/// depthwise one, as in separable blocks. Channels-last, it would cost a permute of that input
/// (and of its gradient back) for a GEMM that runs on NCHW as well; so it stays NCHW. Its input
/// gradient is known by its weight, which the forward reads too.
std::vector<char> pointwise_after_depthwise(const ir::Graph& g) {
  std::vector<char> out(g.nodes().size(), 0);
  std::vector<ir::Value> weights;
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id) {
    const ir::Node& n = g.node(id);
    if (n.op != ir::Op::Conv2d && n.op != ir::Op::Conv2dWeightGrad) continue;
    out[id] = is_pointwise(g, n) && from_nchw_grouped_conv(g, n.inputs[0]);
    if (out[id] && n.op == ir::Op::Conv2d) weights.push_back(n.inputs[1]);
  }
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id) {
    const ir::Node& n = g.node(id);
    if (n.op == ir::Op::Conv2dInputGrad && is_pointwise(g, n))
      out[id] = std::find(weights.begin(), weights.end(), n.inputs[1]) != weights.end();
  }
  return out;
}

/// Whether n is a convolution pass (forward or gradient) to run channels-last: from 16 input
/// channels per group (unless `pointwise_nchw`: pointwise_after_depthwise); or of one input
/// channel, where its output goes channels-last anyway: a forward into a multiple of 16 channels
/// (the runtime's direct kernel, faster than im2col on the trainers' stems), a bf16 one read by a
/// batch norm (`bn_reads`: whether one reads its output; oneDNN's bf16 kernels take it as it is), a
/// gradient whose output gradient `gy` has a channels-last form already (`gy_nhwc`).
bool to_channels_last(const ir::Graph& g, const ir::Node& n, bool bn_reads, bool gy_nhwc,
                      bool pointwise_nchw) {
  if (!is_conv(n.op)) return false;
  const auto& a = std::get<ir::ConvAttrs>(n.attrs);
  if (a.channels_last || pointwise_nchw || n.types[0].dtype == DType::F64) return false;
  const Shape& x = n.op == ir::Op::Conv2dInputGrad ? a.grad_shape : g.type(n.inputs[0]).shape;
  if (x[1] / a.groups >= kMinChannelsPerGroup) return true;
  if (!one_channel(g, n)) return false;
  if (n.op != ir::Op::Conv2d) return gy_nhwc;
  const int64_t out_channels = g.type(n.inputs[1]).shape[0];
  return out_channels % kOneChannelOutputMultiple == 0 ||
         (bn_reads && n.types[0].dtype == DType::BF16);
}

/// Per node: whether a rank-4 batch norm over axis 1 reads its output 0, itself or through a
/// cast (autocast's widening of a bf16 convolution).
std::vector<char> read_by_batch_norm(const ir::Graph& g) {
  std::vector<char> out(g.nodes().size(), 0);
  for (const ir::Node& n : g.nodes()) {
    if (n.op != ir::Op::BatchNorm || n.types[0].rank() != 4 ||
        std::get<ir::BatchNormAttrs>(n.attrs).axis != 1)
      continue;
    ir::Value x = n.inputs[0];
    if (!x.is_param() && g.node(x.def).op == ir::Op::Cast) x = g.node(x.def).inputs[0];
    if (!x.is_param() && x.index == 0) out[x.def] = 1;
  }
  return out;
}

/// The new graph, with each old value in either layout, made on first use.
class LayoutBuilder {
 public:
  explicit LayoutBuilder(const ir::Graph& g) : g_(g), index_(g), nchw_(index_.size()),
                                               nhwc_(index_.size()) {
    for (const ir::Param& p : g.params()) out_.add_param(p.type, p.name);
    for (int i = 0; i < static_cast<int>(g.params().size()); ++i)
      nchw_[i] = ir::Value::param(i);
  }

  bool has_nhwc(ir::Value v) const { return nhwc_[index_(v)].has_value(); }

  ir::Value nchw(ir::Value v, const std::string& loc) {
    std::optional<ir::Value>& slot = nchw_[index_(v)];
    if (!slot) slot = permute(*nhwc_[index_(v)], kToFirst, loc);
    return *slot;
  }
  ir::Value nhwc(ir::Value v, const std::string& loc) {
    std::optional<ir::Value>& slot = nhwc_[index_(v)];
    if (!slot) slot = permute(nchw(v, loc), kToLast, loc);
    return *slot;
  }
  /// Operand v in channels-last form when it is rank 4, as it is otherwise (scalars).
  ir::Value nhwc_if_4d(ir::Value v, const std::string& loc) {
    return g_.type(v).rank() == 4 ? nhwc(v, loc) : nchw(v, loc);
  }

  /// Adds the node; output i of old node `id` is then layout[i] (true: channels-last).
  void add(int id, ir::Op op, std::vector<ir::Value> ins, ir::Attrs attrs,
           std::initializer_list<bool> layout) {
    add(id, op, std::move(ins), std::move(attrs), std::vector<bool>(layout));
  }
  void add(int id, ir::Op op, std::vector<ir::Value> ins, ir::Attrs attrs,
           const std::vector<bool>& layout) {
    const ir::Node& old = g_.node(id);
    const ir::Value first = out_.add(op, std::move(ins), std::move(attrs), old.loc);
    int i = 0;
    for (bool last : layout) {
      const ir::Value v = ir::Value::node(first.def, i);
      (last ? nhwc_ : nchw_)[index_(ir::Value::node(id, i))] = v;
      ++i;
    }
  }
  /// Copies old node `id` with its operands in NCHW form.
  void copy(int id) {
    const ir::Node& n = g_.node(id);
    std::vector<ir::Value> ins;
    for (ir::Value v : n.inputs) ins.push_back(nchw(v, n.loc));
    const ir::Value first = out_.add_typed(n.op, std::move(ins), n.attrs, n.types, n.loc);
    for (int i = 0; i < g_.num_outputs(id); ++i)
      nchw_[index_(ir::Value::node(id, i))] = ir::Value::node(first.def, i);
  }

  ir::Graph finish() {
    std::vector<ir::Value> results;
    for (ir::Value v : g_.results()) results.push_back(nchw(v, ""));
    out_.set_results(std::move(results));
    for (const ir::Donation& d : g_.donations()) out_.add_donation(d);
    return std::move(out_);
  }

 private:
  /// A permute, or a reshape where it keeps the order of the axes longer than 1 (one channel:
  /// the same bytes in either layout), which costs no copy.
  ir::Value permute(ir::Value v, const std::array<int64_t, 4>& perm, const std::string& loc) {
    const Shape& s = out_.type(v).shape;
    Shape to(4);
    int64_t last = -1;
    bool same_bytes = true;
    for (int i = 0; i < 4; ++i) {
      to[i] = s[perm[i]];
      if (s[perm[i]] == 1) continue;
      same_bytes &= perm[i] > last;
      last = perm[i];
    }
    if (same_bytes) return out_.add(ir::Op::Reshape, {v}, ir::ReshapeAttrs{to}, loc);
    return out_.add(ir::Op::Permute, {v}, ir::PermuteAttrs{ir::Ints(perm.begin(), perm.end())},
                    loc);
  }

  const ir::Graph& g_;
  ir::ValueIndex index_;
  ir::Graph out_{g_.name()};
  std::vector<std::optional<ir::Value>> nchw_, nhwc_;  // by old value
};

bool is_loop_reduce(ir::Op op) {
  return op == ir::Op::Sum || op == ir::Op::Mean || op == ir::Op::ReduceMax ||
         op == ir::Op::ReduceMin || op == ir::Op::Prod;
}

/// A reduce of x's NCHW axes as one of its channels-last form: the axes moved, and whether the
/// result is channels-last too (rank 4, keepdim) or in the order the NCHW reduce gives (the kept
/// axes in the same order either way). Nullopt when the kept axes would come out reordered.
std::optional<std::pair<ir::ReduceAttrs, bool>> reduce_on_nhwc(const ir::ReduceAttrs& a) {
  ir::ReduceAttrs moved = a;
  for (int64_t& ax : moved.axes) ax = kToFirst[ax];
  std::sort(moved.axes.begin(), moved.axes.end());
  if (a.keepdim || a.axes.empty()) return std::pair{moved, a.keepdim};
  int64_t last = -1;
  for (int64_t pos = 0; pos < 4; ++pos) {  // the NHWC axes kept, in NHWC order
    if (std::binary_search(moved.axes.begin(), moved.axes.end(), pos)) continue;
    const int64_t nchw_axis = kToLast[pos];
    if (nchw_axis < last) return std::nullopt;
    last = nchw_axis;
  }
  return std::pair{moved, false};
}

}  // namespace

bool channels_last(ir::Graph& g) {
  const std::vector<char> bn_reads = read_by_batch_norm(g);
  const std::vector<char> pointwise_nchw = pointwise_after_depthwise(g);
  // A gradient goes channels-last only after some forward did: the first ones decide.
  bool any = false;
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id)
    any |= to_channels_last(g, g.node(id), bn_reads[id], false, pointwise_nchw[id]);
  if (!any) return false;
  LayoutBuilder b(g);
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id) {
    const ir::Node& n = g.node(id);
    const std::string& loc = n.loc;
    const bool gy_nhwc =
        is_conv(n.op) && n.op != ir::Op::Conv2d &&
        b.has_nhwc(n.inputs[n.op == ir::Op::Conv2dInputGrad ? 0 : 1]);
    if (to_channels_last(g, n, bn_reads[id], gy_nhwc, pointwise_nchw[id])) {
      auto a = std::get<ir::ConvAttrs>(n.attrs);
      a.channels_last = true;
      const ir::Value in0 = b.nhwc(n.inputs[0], loc);
      if (n.op == ir::Op::Conv2dWeightGrad) {  // (x, gy) -> gw
        b.add(id, n.op, {in0, b.nhwc(n.inputs[1], loc)}, a, {false});
      } else {  // (x, w) -> y, (gy, w) -> gx
        if (n.op == ir::Op::Conv2dInputGrad)
          a.grad_shape = {a.grad_shape[0], a.grad_shape[2], a.grad_shape[3], a.grad_shape[1]};
        b.add(id, n.op, {in0, b.nchw(n.inputs[1], loc)}, a, {true});
      }
      continue;
    }
    const bool rank4 = n.types[0].rank() == 4;
    if ((n.op == ir::Op::BatchNorm || n.op == ir::Op::BatchNormGrad) && rank4) {
      // On a convolution's channels-last output (or gradient): channel axis 3. The per-channel
      // operands and results are [C] in either layout.
      const bool forward = n.op == ir::Op::BatchNorm;
      const bool on_nhwc = b.has_nhwc(n.inputs[0]) || (!forward && b.has_nhwc(n.inputs[4]));
      const int64_t axis = forward ? std::get<ir::BatchNormAttrs>(n.attrs).axis
                                   : std::get<ir::BatchNormGradAttrs>(n.attrs).axis;
      if (on_nhwc && axis == 1) {
        std::vector<ir::Value> ins;
        for (size_t i = 0; i < n.inputs.size(); ++i)
          ins.push_back(i == 0 || (i == 4 && !forward) ? b.nhwc(n.inputs[i], loc)
                                                     : b.nchw(n.inputs[i], loc));
        if (forward) {
          auto a = std::get<ir::BatchNormAttrs>(n.attrs);
          a.axis = 3;
          b.add(id, n.op, std::move(ins), a, {true, false, false, false, false});
        } else {
          auto a = std::get<ir::BatchNormGradAttrs>(n.attrs);
          a.axis = 3;
          b.add(id, n.op, std::move(ins), a, {true, false, false});
        }
        continue;
      }
    }
    // Max pooling on a channels-last value stays channels-last (its gradient too, where the
    // forward's input has that form), instead of a permute of the whole activation each way:
    // the pool's output is a quarter of its input.
    if ((n.op == ir::Op::MaxPool2d || n.op == ir::Op::MaxPool2dGrad) &&
        !std::get<ir::PoolAttrs>(n.attrs).channels_last && b.has_nhwc(n.inputs[0])) {
      auto a = std::get<ir::PoolAttrs>(n.attrs);
      a.channels_last = true;
      std::vector<ir::Value> ins;
      for (ir::Value v : n.inputs) ins.push_back(b.nhwc(v, loc));
      b.add(id, n.op, std::move(ins), a, {true});
      continue;
    }
    // An optimization barrier passes each operand through in the form it has (a checkpointed
    // block's input stays channels-last into its recomputation).
    if (n.op == ir::Op::OptBarrier) {
      std::vector<ir::Value> ins;
      std::vector<bool> layout;
      for (ir::Value v : n.inputs) {
        layout.push_back(g.type(v).rank() == 4 && b.has_nhwc(v));
        ins.push_back(layout.back() ? b.nhwc(v, loc) : b.nchw(v, loc));
      }
      b.add(id, n.op, std::move(ins), n.attrs, layout);
      continue;
    }
    if (ir::as_elementwise(n.op) && rank4) {
      bool any_nhwc = false, shapes_ok = true;
      for (ir::Value v : n.inputs) {
        const int64_t r = g.type(v).rank();
        shapes_ok &= r == 4 || r == 0;
        any_nhwc |= r == 4 && b.has_nhwc(v);
      }
      if (any_nhwc && shapes_ok) {
        std::vector<ir::Value> ins;
        for (ir::Value v : n.inputs) ins.push_back(b.nhwc_if_4d(v, loc));
        b.add(id, n.op, std::move(ins), n.attrs, {true});
        continue;
      }
    }
    if (is_loop_reduce(n.op) && g.type(n.inputs[0]).rank() == 4 && b.has_nhwc(n.inputs[0])) {
      if (auto r = reduce_on_nhwc(std::get<ir::ReduceAttrs>(n.attrs))) {
        b.add(id, n.op, {b.nhwc(n.inputs[0], loc)}, r->first, {r->second});
        continue;
      }
    }
    b.copy(id);
  }
  g = b.finish();
  return true;
}

}  // namespace lt::passes
