#include "codegen/compile.h"

#include <fmt/format.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "codegen/jit.h"
#include "codegen/loop_emitter.h"
#include "ir/clock.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/plan_hash.h"
#include "ir/loop_kernel.h"

namespace lt::codegen {

namespace {

rt::Slot slot_from_plan(const ir::BufferSlot& b) {
  rt::Slot s;
  s.type = b.type;
  switch (b.storage) {
    case ir::Storage::Param:
      s.kind = rt::Slot::Kind::Param;
      break;
    case ir::Storage::Arena:
      s.kind = rt::Slot::Kind::Arena;
      s.offset = b.offset;
      break;
    case ir::Storage::Result:
      s.kind = rt::Slot::Kind::Owned;
      break;
    case ir::Storage::Donated:
      s.kind = rt::Slot::Kind::Owned;
      s.donor = b.donor;
      break;
    case ir::Storage::InResult:
      s.kind = rt::Slot::Kind::Owned;
      s.shares = b.in_result;
      break;
  }
  return s;
}

// Rows per chunk of a loop kernel's parallel_for: about 16k iteration points.
int64_t row_grain(const LoopShape& shape) {
  return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, shape.inner));
}

// The launch of an Epilogue group: the library node's eager kernel, and `loop` compiled as the
// epilogue it calls on each block of the library output. conv2d gives images as blocks where the
// loop's rows split by image; otherwise the epilogue runs once on the whole output, which then
// needs a buffer even where the buffer plan gave it none.
template <class SlotOf, class PlannedSlotOf>
rt::Launch epilogue_launch(const ir::Graph& g, const ir::FusionGroup& grp,
                           const ir::FusionGroup& loop, llvm::Module& module,
                           const std::string& name, std::span<const int> written_over,
                           SlotOf&& slot, PlannedSlotOf&& planned_slot) {
  const ir::Node& lib = g.node(grp.nodes.front());
  const ir::Value out = ir::Value::node(grp.nodes.front());
  const bool by_image = ir::info(lib.op).lowering == ir::Lowering::ImgEpilogue;
  const LoopShape shape = emit_loop_kernel(module, g, loop, name, written_over, by_image);
  const int64_t elems = numel(grp.shape);
  const bool blocks = by_image && shape.rows_per_outer > 0 && elems > 0;
  const bool whole = ir::epilogue_materializes(g, grp) || !blocks;
  rt::Launch l;
  l.kind = rt::Launch::Kind::Library;
  l.op = lib.op;
  l.attrs = lib.attrs;
  l.name = std::string(ir::mnemonic(lib.op));
  for (ir::Value v : lib.inputs) l.in_slots.push_back(planned_slot(v));
  rt::EpilogueLaunch ep;
  const int out_slot = whole ? slot(out) : -1;
  if (out_slot >= 0) l.out_slots.push_back(out_slot);
  for (size_t i = 0; i < loop.inputs.size(); ++i) {
    if (loop.inputs[i] == out) ep.source = static_cast<int>(i);
    ep.in_slots.push_back(loop.inputs[i] == out ? out_slot : planned_slot(loop.inputs[i]));
  }
  for (ir::Value v : loop.outputs) ep.out_slots.push_back(planned_slot(v));
  ep.written_over.assign(written_over.begin(), written_over.end());
  ep.library_out = g.type(out);
  ep.block_elems = blocks ? elems / grp.shape[0] : elems;
  ep.block_rows = blocks ? shape.rows_per_outer : shape.rows;
  ep.row_grain = row_grain(shape);
  l.epilogue = std::move(ep);
  return l;
}

// Collective launches split into start and done: the done goes just before the first launch
// that reads the collective's result (or at the end), so the launches between run while the
// collective is in flight: the rest of the backward pass, for a replica's gradient buckets.
std::vector<rt::Launch> split_collectives(std::vector<rt::Launch> launches) {
  const int n = static_cast<int>(launches.size());
  std::vector<std::vector<int>> done_before(n + 1);  // starts whose done precedes launch j
  bool any = false;
  auto reads = [](const rt::Launch& l, int slot) {
    auto has = [&](const std::vector<int>& v) {
      return std::find(v.begin(), v.end(), slot) != v.end();
    };
    return has(l.in_slots) || (l.epilogue && has(l.epilogue->in_slots));
  };
  for (int i = 0; i < n; ++i) {
    rt::Launch& l = launches[i];
    if (l.kind != rt::Launch::Kind::Library || l.epilogue || !ir::as_collective(l.op)) continue;
    l.kind = rt::Launch::Kind::Start;
    int j = i + 1;
    while (j < n && !reads(launches[j], l.out_slots[0])) ++j;
    done_before[j].push_back(i);
    any = true;
  }
  if (!any) return launches;
  std::vector<rt::Launch> out;
  std::vector<int> new_index(n, -1);
  for (int j = 0; j <= n; ++j) {
    for (int i : done_before[j]) {
      const rt::Launch& start = out[new_index[i]];
      rt::Launch d;
      d.kind = rt::Launch::Kind::Done;
      d.op = start.op;
      d.attrs = start.attrs;
      d.in_slots = start.out_slots;
      d.name = start.name;
      d.group = start.group;
      d.start = new_index[i];
      out.push_back(std::move(d));
    }
    if (j == n) break;
    new_index[j] = static_cast<int>(out.size());
    out.push_back(std::move(launches[j]));
  }
  return out;
}

}  // namespace

namespace {

/// The op table as this build has it: a structural hash numbers ops by their enumerators, which
/// a build with another table numbers differently, so its cached objects must not be taken.
uint64_t op_table_hash() {
  static const uint64_t value = [] {
    ir::Hasher h(0x6f707461626c6531ULL);
    for (ir::Op op : ir::all_ops()) {
      const ir::OpInfo& i = ir::info(op);
      h.add(i.mnemonic).add(static_cast<uint64_t>(i.arity + 1)).add(i.attrs_index);
      h.add(static_cast<uint64_t>(i.lowering));
    }
    return h.value();
  }();
  return value;
}

}  // namespace

std::string object_key(const ir::Graph& g, const ir::FusionPlan& plan,
                       const ir::BufferPlan& buffers) {
  ir::Hasher h(0x6f626a6563747331ULL);
  h.add(op_table_hash());
  h.add(ir::structural_hash(g)).add(ir::plan_hash(plan)).add(ir::plan_hash(buffers));
  h.add(static_cast<uint64_t>(kCodegenVersion)).add(Jit::host_cpu()).add(Jit::host_features());
  return fmt::format("{:016x}", h.value());
}

std::shared_ptr<rt::Executable> compile(const ir::Graph& g, const ir::FusionPlan& plan,
                                        const ir::BufferPlan& buffers,
                                        const CompileOptions& options, CompileStats* stats) {
  const int64_t t0 = ir::now_ns();
  LT_CHECK(buffers.num_params == static_cast<int>(g.params().size()) &&
               buffers.node_slots.size() == g.nodes().size(),
           "the buffer plan is not for this graph");
  // Slots where the buffer plan puts them; values inside a Loop group that runs node by node get
  // temporaries of their own, made on first use.
  std::vector<rt::Slot> slots;
  for (const ir::BufferSlot& b : buffers.slots) slots.push_back(slot_from_plan(b));
  std::map<ir::Value, int> temporary;
  auto slot = [&](ir::Value v) {
    if (const int s = buffers.slot_of(v); s >= 0) return s;
    auto [it, fresh] = temporary.try_emplace(v, static_cast<int>(slots.size()));
    if (fresh) slots.push_back({rt::Slot::Kind::Owned, g.type(v)});
    return it->second;
  };
  auto planned_slot = [&](ir::Value v) {
    const int s = buffers.slot_of(v);
    LT_CHECK(s >= 0, "the buffer plan has no slot for {}", ir::value_name(g, v));
    return s;
  };

  std::vector<rt::Launch> launches;
  std::vector<std::pair<size_t, std::string>> loop_launches;  // launch index, function name
  // Per output of a loop group, the input whose buffer it is written over (its donor, which the
  // group reads element by element), or -1: the kernel stores it through that input's pointer.
  // Two noalias pointers to one buffer would let LLVM reorder an element's load and store; no
  // noalias at all makes the vectorizer check the buffers for overlap at run time, which an
  // exact overlap fails, leaving the optimizer's update loops scalar.
  auto written_over = [&](const ir::FusionGroup& grp) {
    std::vector<int> over(grp.outputs.size(), -1);
    for (size_t k = 0; k < grp.outputs.size(); ++k) {
      const ir::BufferSlot& s = buffers.slots[planned_slot(grp.outputs[k])];
      if (!s.in_place) continue;
      const auto it = std::find(grp.inputs.begin(), grp.inputs.end(), ir::Value::param(s.donor));
      LT_CHECK(it != grp.inputs.end(), "output {} of a loop kernel is written over parameter {}, "
               "which the kernel does not read", k, s.donor);
      over[k] = static_cast<int>(it - grp.inputs.begin());
    }
    return over;
  };
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("lt_step", *ctx);
  for (size_t gi = 0; gi < plan.groups.size(); ++gi) {
    const ir::FusionGroup& grp = plan.groups[gi];
    const std::string name = fmt::format("lt_kernel_{}", gi);
    if (grp.kind == ir::KernelKind::Epilogue) {
      const ir::FusionGroup loop = ir::epilogue_loop(g, grp);
      if (can_emit_loop(g, loop)) {
        launches.push_back(epilogue_launch(g, grp, loop, *module, name, written_over(loop), slot,
                                           planned_slot));
        launches.back().group = static_cast<int>(gi);
        loop_launches.push_back({launches.size() - 1, name});
        continue;
      }
    }
    if (grp.kind == ir::KernelKind::Loop && can_emit_loop(g, grp)) {
      const std::vector<int> over = written_over(grp);
      const LoopShape shape =
          emit_loop_kernel(*module, g, grp, name, over);
      rt::Launch l;
      l.kind = rt::Launch::Kind::Loop;
      l.written_over = over;
      l.rows = shape.rows;
      l.row_grain = row_grain(shape);
      for (ir::Value v : grp.inputs) l.in_slots.push_back(planned_slot(v));
      for (ir::Value v : grp.outputs) l.out_slots.push_back(planned_slot(v));
      l.name = name;
      l.group = static_cast<int>(gi);
      loop_launches.push_back({launches.size(), name});
      launches.push_back(std::move(l));
      continue;
    }
    // One eager-kernel call per node. A Loop (or Epilogue) group run this way writes its outputs
    // node by node, so none may write over a donor that a later node of the group still reads.
    for (ir::Value v : grp.outputs)
      if (const int s = planned_slot(v); buffers.slots[s].in_place) slots[s].donor = -1;
    for (int id : grp.nodes) {
      const ir::Node& n = g.node(id);
      // A reshape whose output aliases its operand's bytes has nothing to copy.
      if (const int s = buffers.slot_of(ir::Value::node(id));
          n.op == ir::Op::Reshape && s >= 0 && buffers.slots[s].alias >= 0)
        continue;
      rt::Launch l;
      l.kind = rt::Launch::Kind::Library;
      l.op = n.op;
      l.attrs = n.attrs;
      for (ir::Value v : n.inputs) l.in_slots.push_back(slot(v));
      for (int k = 0; k < static_cast<int>(n.types.size()); ++k)
        l.out_slots.push_back(slot(ir::Value::node(id, k)));
      l.name = std::string(ir::mnemonic(n.op));
      l.group = static_cast<int>(gi);
      launches.push_back(std::move(l));
    }
  }
  std::vector<int> results;
  for (ir::Value v : g.results()) results.push_back(planned_slot(v));

  std::shared_ptr<Jit> jit;
  std::string object_file;
  if (!loop_launches.empty()) {
    jit = Jit::create(options.cache_dir);
    module->setDataLayout(jit->data_layout());
    module->setTargetTriple(jit->target_triple());
    JitOptions jo;
    jo.dump_dir = options.dump_dir;
    jo.dump_prefix = options.dump_prefix;
    if (!options.cache_dir.empty()) jo.cache_key = object_key(g, plan, buffers);
    object_file = jit->add_module(std::move(ctx), std::move(module), jo);
    for (auto& [li, name] : loop_launches) {
      const auto fn = reinterpret_cast<rt::LoopKernelFn>(jit->lookup(name));
      (launches[li].epilogue ? launches[li].epilogue->fn : launches[li].fn) = fn;
    }
  }
  launches = split_collectives(std::move(launches));
  if (stats) {
    stats->loop_kernels = static_cast<int>(loop_launches.size());
    stats->library_launches = static_cast<int>(launches.size() - loop_launches.size());
    stats->llvm_ms = static_cast<double>(ir::now_ns() - t0) / 1e6;
    stats->object_file = object_file;
  }
  const rt::MemoryPlan memory{buffers.arena_bytes, buffers.live_peak_bytes, buffers.result_bytes,
                              buffers.donated_bytes, buffers.naive_bytes};
  auto exe = std::make_shared<rt::Executable>(std::move(slots), std::move(launches),
                                              std::move(results), memory, std::move(jit));
  if (!options.dump_dir.empty()) {
    std::filesystem::create_directories(options.dump_dir);
    const std::string path = fmt::format(
        "{}/{}.launches.txt", options.dump_dir,
        options.dump_prefix.empty() ? "module" : options.dump_prefix);
    std::ofstream f(path);
    f << rt::print_launches(*exe);
    if (!f) throw Error(fmt::format("cannot write the launch list {}", path));
  }
  return exe;
}

}  // namespace lt::codegen
