// ZeRO's sharded optimizer state: each parameter's flattened elements cut into world-size
// chunks, the state of this rank's chunk kept, the update run on chunks and the parameters
// all-gathered. Chunked per parameter, as FSDP's per-parameter sharding, so that every
// optimizer's per-parameter rules (a parameter without a gradient left alone, its own step
// count) hold unchanged: update() runs on the chunks as if they were the parameters. Stage 2's
// reduce-scatter takes a whole group at once; the all-gather goes by parameter, whose gathered
// chunks are then its elements in order (no unpacking of a group's rows).
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "frontend/lazy/tracer.h"
#include "frontend/tensor_impl.h"
#include "ir/error.h"
#include "lt/autograd.h"
#include "lt/dist.h"
#include "lt/lazy.h"
#include "lt/ops.h"
#include "lt/optim.h"

namespace lt::optim {
namespace {

constexpr const char* kStepSlot = "step";

struct Chunking {
  int64_t world = 1;
  /// [world, 1] bool, true in this rank's row: device data, so that picking the rank's chunk is
  /// the same graph on every rank, as a step graph must be (only the data differs), and a
  /// select-and-sum the loop kernels fuse.
  Tensor mine;
  /// Elements of each chunk of an n-element tensor: the last is padded up to it.
  int64_t length(int64_t n) const { return (n + world - 1) / world; }
};

Chunking chunking() {
  ModeGuard eager(Mode::Eager);
  const int64_t world = dist::world_size();
  const Tensor ranks = arange(0, static_cast<double>(world), 1);
  return {world, reshape(eq(ranks, full({}, dist::rank(), DType::I64)), {world, 1})};
}

/// Row rank() of a [world, n] tensor, as [n]: the other rows' values never enter it (an inf
/// or NaN there included), so it is that row exactly.
Tensor own_row(const Tensor& rows, const Chunking& c) {
  return sum(where(c.mine, rows, 0.0), {0});
}

/// x's flattened elements padded with zeros to world * length.
Tensor padded_flat(const Tensor& x, const Chunking& c) {
  const int64_t n = x.numel(), len = c.length(n);
  Tensor flat = reshape(x, {n});
  if (len * c.world != n) flat = concat({flat, zeros({len * c.world - n}, x.dtype())}, 0);
  return flat;
}

/// This rank's chunk of x's flattened elements, a tensor of its own (never a view of x).
Tensor own_chunk(const Tensor& x, const Chunking& c) {
  return own_row(reshape(padded_flat(x, c), {c.world, c.length(x.numel())}), c);
}

/// The full tensor of `like`'s shape whose chunks are every rank's `chunk`.
Tensor gathered(const Tensor& chunk, const Tensor& like) {
  const Tensor all = dist::all_gather_tensor(chunk);
  return reshape(slice(all, 0, 0, like.numel()), like.shape());
}

}  // namespace

void Optimizer::shard_state(int stage, Loc loc) {
  if (stage != 1 && stage != 2)
    throw Error(fmt::format("{}.shard_state: stage must be 1 or 2, got {} at {}", type_, stage,
                            location_str(loc)));
  if (zero_stage_ != 0)
    throw Error(fmt::format("{}.shard_state: the state is sharded already (stage {}) at {}",
                            type_, zero_stage_, location_str(loc)));
  zero_stage_ = stage;
  keep_own_chunks();
}

void Optimizer::keep_own_chunks() {
  const Chunking c = chunking();
  ModeGuard eager(Mode::Eager);  // device data, as the state at construction
  NoGradGuard no_grad;
  for (size_t g = 0; g < params_.size(); ++g)
    for (size_t i = 0; i < params_[g].size(); ++i)
      for (size_t s = 0; s < slot_names_[g].size(); ++s)
        if (slot_names_[g][s] != kStepSlot) state_[g][i][s] = own_chunk(state_[g][i][s], c);
}

int64_t Optimizer::state_bytes() const {
  std::set<const TensorImpl*> seen;
  int64_t bytes = 0;
  for (const auto& group : state_)
    for (const auto& slots : group)
      for (const Tensor& t : slots)
        if (t.defined() && seen.insert(t.impl()).second)
          bytes += static_cast<int64_t>(t.type().bytes());
  return bytes;
}

void Optimizer::sharded_update(size_t group, const Tensor& skip) {
  const Chunking c = chunking();
  std::vector<Tensor>& params = params_[group];
  if (params.empty()) return;
  std::vector<int64_t> lens, offsets;
  int64_t width = 0;
  for (const Tensor& p : params) {
    offsets.push_back(width);
    lens.push_back(c.length(p.numel()));
    width += lens.back();
  }
  const auto rows = [&](const std::vector<Tensor>& ts) {
    std::vector<Tensor> blocks;
    for (size_t i = 0; i < ts.size(); ++i)
      blocks.push_back(reshape(padded_flat(ts[i], c), {c.world, lens[i]}));
    return concat(blocks, 1);
  };
  const bool any_grad =
      std::any_of(params.begin(), params.end(), [](const Tensor& p) { return p.grad().defined(); });
  if (!any_grad) return;  // nothing to update, on any rank
  // Stage 2's one reduce-scatter for the whole group: its gradients side by side as
  // [world, S] (each padded and cut into its world chunks), row r rank r's chunks of them all.
  // Stage 1's gradients and the parameters take each tensor's own row, a fused select-and-sum
  // per tensor with no copy of the group.
  Tensor reduced;
  if (zero_stage_ == 2) {
    std::vector<Tensor> grads;  // a parameter without one sends zeros
    for (const Tensor& p : params)
      grads.push_back(p.grad().defined() ? p.grad() : zeros(p.shape(), p.dtype()));
    reduced = dist::reduce_scatter_tensor(reshape(rows(grads), {c.world * width}),
                                          dist::ReduceOp::Mean);
  }
  std::vector<Tensor> chunks;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor chunk = own_chunk(params[i], c);
    if (params[i].grad().defined())
      chunk.set_grad(reduced.defined() ? slice(reduced, 0, offsets[i], offsets[i] + lens[i])
                                       : own_chunk(params[i].grad(), c));
    chunks.push_back(std::move(chunk));
  }
  // update() sees the chunks as the group's parameters: same state slots, same rules.
  std::vector<Tensor> full = std::exchange(params, chunks);
  try {
    refresh_slots(group);
    update(group, skip);
  } catch (...) {
    params = std::move(full);
    throw;
  }
  params = std::move(full);
  for (size_t i = 0; i < params.size(); ++i) {
    if (!chunks[i].grad().defined()) continue;  // not updated, on any rank
    params[i].copy_(gathered(chunks[i], params[i]));
    if (zero_stage_ == 2) params[i].zero_grad();
  }
}

Checkpoint Optimizer::state_dict(const std::string& prefix) const {
  Checkpoint out = local_state_dict(prefix);
  if (zero_stage_ == 0) return out;
  NoGradGuard no_grad;
  std::vector<Tensor> made;
  for (size_t g = 0; g < params_.size(); ++g) {
    const std::vector<std::string>& names = slot_names_[g];
    for (size_t i = 0; i < params_[g].size(); ++i)
      for (size_t s = 0; s < names.size(); ++s) {
        if (names[s] == kStepSlot) continue;
        Tensor& t = out.tensors.at(fmt::format("{}.{}.{}.{}", prefix, g, i, names[s]));
        t = gathered(t, params_[g][i]);
        made.push_back(t);
      }
  }
  // Run the gathers now, on every rank: a rank that only returns the state (not the one that
  // writes it) would otherwise leave them pending, and the others waiting in them.
  lazy::sync(made, "state_dict of a sharded optimizer", Loc::current());
  return out;
}

}  // namespace lt::optim
