#include "passes/registry.h"

#include "ir/error.h"
#include "passes/absorb_widening_casts.h"
#include "passes/bucket_all_reduce.h"
#include "passes/canonicalize.h"
#include "passes/channels_last.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/fold.h"
#include "passes/fold_relu_into_pool_grad.h"
#include "passes/narrow_norm_gradients.h"
#include "passes/sink_reshapes.h"
#include "passes/wide_gemm_results.h"

namespace lt::passes {
namespace {

bool verify_pass(ir::Graph& g) {
  ir::verify(g);
  return false;
}

template <PassFn F>
bool rewrite_stage(LoweredGraph& l, const LowerOptions&) {
  if (!F(l.graph)) return false;
  l.fusion.reset();  // plans describe the graph they were made for
  l.buffers.reset();
  return true;
}

bool bucket_stage(LoweredGraph& l, const LowerOptions& o) {
  if (!bucket_all_reduce(l.graph, o.buckets)) return false;
  l.fusion.reset();
  l.buffers.reset();
  return true;
}

bool fuse_stage(LoweredGraph& l, const LowerOptions& o) {
  l.fusion = fuse(l.graph, o.fusion);
  l.buffers.reset();
  return true;
}

bool buffer_plan_stage(LoweredGraph& l, const LowerOptions& o) {
  if (!l.fusion) throw Error("pass 'buffer_plan' needs a fusion plan: run 'fuse' before it");
  l.buffers = plan_buffers(l.graph, *l.fusion, o.buffers);
  return true;
}

const PassEntry kPasses[] = {
    {"verify", StageKind::Graph, rewrite_stage<verify_pass>, verify_pass,
     "check operand counts, dtypes and shapes against each op's rule"},
    {"canonicalize", StageKind::Graph, rewrite_stage<canonicalize>, canonicalize,
     "local algebraic identities (x*1, reshape of reshape, ...)"},
    {"fold", StageKind::Graph, rewrite_stage<fold>, fold,
     "compute elementwise ops and views of full constants"},
    {"cse", StageKind::Graph, rewrite_stage<cse>, cse,
     "merge nodes with equal op, attributes and inputs"},
    {"channels_last", StageKind::Graph, rewrite_stage<channels_last>, channels_last,
     "convolutions and the batch norms and elementwise ops between them on [N,H,W,C] values"},
    {"absorb_widening_casts", StageKind::Graph, rewrite_stage<absorb_widening_casts>,
     absorb_widening_casts,
     "batch norms read a bf16 or f16 operand themselves instead of its cast to f32"},
    {"narrow_norm_gradients", StageKind::Graph, rewrite_stage<narrow_norm_gradients>,
     narrow_norm_gradients,
     "batch norm gradients only ever cast to bf16 write bf16 themselves"},
    {"wide_gemm_results", StageKind::Graph, rewrite_stage<wide_gemm_results>, wide_gemm_results,
     "bf16 matmuls and convolutions only ever widened again write their f32 accumulator"},
    {"sink_reshapes", StageKind::Graph, rewrite_stage<sink_reshapes>, sink_reshapes,
     "elementwise ops run on the values reshapes read, the reshape moved after them"},
    {"fold_relu_into_pool_grad", StageKind::Graph, rewrite_stage<fold_relu_into_pool_grad>,
     fold_relu_into_pool_grad,
     "the ReLU gradient after a max pool's gradient done by the pool's gradient (through_relu)"},
    {"dce", StageKind::Graph, rewrite_stage<dce>, dce, "drop nodes no result depends on"},
    {"bucket_all_reduce", StageKind::Graph, bucket_stage, nullptr,
     "pack gradient all_reduces into buckets, each right after its last operand"},
    {"fuse", StageKind::Fusion, fuse_stage, nullptr,
     "partition the nodes into loop kernels, epilogues and library calls"},
    {"buffer_plan", StageKind::Buffers, buffer_plan_stage, nullptr,
     "place every value a launch writes: arena offsets, result buffers, donations"},
    {"pipeline", StageKind::Pipeline, nullptr, nullptr,
     "the whole lowering, in order, as a compiled step runs it"},
};

}  // namespace

std::span<const PassEntry> all_passes() { return kPasses; }

const PassEntry* find_pass(std::string_view name) {
  for (const PassEntry& p : kPasses)
    if (p.name == name) return &p;
  return nullptr;
}

const PassEntry* find_pass(PassFn fn) {
  for (const PassEntry& p : kPasses)
    if (p.rewrite == fn) return &p;
  return nullptr;
}

}  // namespace lt::passes
