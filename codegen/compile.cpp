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
#include "ir/kernel_rules.h"
#include "ir/plan_hash.h"

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

/// The op table as this build has it: a structural hash numbers ops by their enumerators, which
/// a build with another table numbers differently, so its cached objects must not be taken.
uint64_t op_table_hash() {
  static const uint64_t value = [] {
    ir::Hasher h(0x6f707461626c6531ULL);
    for (ir::Op op : ir::all_ops()) {
      const ir::OpInfo& i = ir::info(op);
      h.add(i.mnemonic).add(static_cast<uint64_t>(i.arity + 1)).add(i.attrs_index);
      h.add(static_cast<uint64_t>(i.loop));
    }
    return h.value();
  }();
  return value;
}

}  // namespace

std::string object_key(const ir::Graph& g, const ir::FusionPlan& plan,
                       const ir::BufferPlan& buffers, const ir::KernelRules& rules) {
  ir::Hasher h(0x6f626a6563747331ULL);
  h.add(op_table_hash()).add(rules.backend);
  h.add(ir::structural_hash(g)).add(ir::plan_hash(plan)).add(ir::plan_hash(buffers));
  h.add(static_cast<uint64_t>(kCodegenVersion)).add(Jit::host_cpu()).add(Jit::host_features());
  return fmt::format("{:016x}", h.value());
}

namespace {

// The launches of a plan, group by group in plan order: Loop and Epilogue groups become compiled
// kernels added to one LLVM module, Library groups eager-kernel calls, a collective's group that
// runs in flight (ir::FusionGroup::awaited_before) a Start here and a Done before the group that
// awaits it. Every decision was made by the plans; this only translates them.
class LaunchBuilder {
 public:
  LaunchBuilder(const ir::Graph& g, const ir::FusionPlan& plan, const ir::BufferPlan& buffers,
                const ir::KernelRules& rules)
      : g_(g),
        plan_(plan),
        buffers_(buffers),
        rules_(rules),
        module_(std::make_unique<llvm::Module>("lt_step", *ctx_)),
        awaited_at_(plan.groups.size() + 1) {}

  void build() {
    for (size_t gi = 0; gi < plan_.groups.size(); ++gi) {
      add_dones(gi);
      add_group(static_cast<int>(gi));
    }
    add_dones(plan_.groups.size());
  }

  std::vector<rt::Launch>& launches() { return launches_; }
  /// Launch index and function name of every compiled kernel.
  const std::vector<std::pair<size_t, std::string>>& compiled() const { return compiled_; }
  std::unique_ptr<llvm::LLVMContext> take_context() { return std::move(ctx_); }
  std::unique_ptr<llvm::Module> take_module() { return std::move(module_); }
  /// Slots beyond the buffer plan's (outputs it did not place), in slot order.
  std::vector<rt::Slot>& extra_slots() { return extra_slots_; }

 private:
  int slot(ir::Value v) const {
    const int s = buffers_.slot_of(v);
    LT_CHECK(s >= 0, "the buffer plan has no slot for {}", ir::value_name(g_, v));
    return s;
  }

  // Per output of a loop kernel, the input whose buffer it is written over (its donor, which the
  // kernel reads element by element), or -1: the kernel stores it through that input's pointer.
  // Two noalias pointers to one buffer would let LLVM reorder an element's load and store; no
  // noalias at all makes the vectorizer check the buffers for overlap at run time, which an
  // exact overlap fails, leaving the optimizer's update loops scalar.
  std::vector<int> written_over(const ir::FusionGroup& grp) const {
    std::vector<int> over(grp.outputs.size(), -1);
    for (size_t k = 0; k < grp.outputs.size(); ++k) {
      const ir::BufferSlot& s = buffers_.slots[slot(grp.outputs[k])];
      if (!s.in_place) continue;
      const auto it = std::find(grp.inputs.begin(), grp.inputs.end(), ir::Value::param(s.donor));
      LT_CHECK(it != grp.inputs.end(), "output {} of a loop kernel is written over parameter {}, "
               "which the kernel does not read", k, s.donor);
      over[k] = static_cast<int>(it - grp.inputs.begin());
    }
    return over;
  }

  void add_group(int gi) {
    const ir::FusionGroup& grp = plan_.groups[gi];
    switch (grp.kind) {
      case ir::KernelKind::Loop: return add_loop(grp, gi);
      case ir::KernelKind::Epilogue: return add_epilogue(grp, gi);
      case ir::KernelKind::Library: return add_library(grp, gi);
    }
    LT_UNREACHABLE();
  }

  void add_loop(const ir::FusionGroup& grp, int gi) {
    LT_CHECK(can_emit_loop(g_, grp, rules_),
             "loop kernel {} holds a node the emitter cannot compute", gi);
    const std::string name = fmt::format("lt_kernel_{}", gi);
    rt::Launch l;
    l.kind = rt::Launch::Kind::Loop;
    l.written_over = written_over(grp);
    const LoopShape shape = emit_loop_kernel(*module_, g_, grp, name, l.written_over);
    l.rows = shape.rows;
    l.row_grain = row_grain(shape);
    for (ir::Value v : grp.inputs) l.in_slots.push_back(slot(v));
    for (ir::Value v : grp.outputs) l.out_slots.push_back(slot(v));
    l.name = name;
    push(std::move(l), gi, name);
  }

  // The library node's eager kernel, and the group's loop compiled as the epilogue it calls on
  // each block of the library output. conv2d gives images as blocks where the loop's rows split
  // by image; otherwise the epilogue runs once on the whole output, which then needs a buffer
  // even where the buffer plan gave it none.
  void add_epilogue(const ir::FusionGroup& grp, int gi) {
    const ir::FusionGroup loop = ir::epilogue_loop(g_, grp);
    LT_CHECK(can_emit_loop(g_, loop, rules_),
             "epilogue kernel {} holds a node the emitter cannot compute", gi);
    const std::string name = fmt::format("lt_kernel_{}", gi);
    const ir::Value out = ir::Value::node(grp.nodes.front());
    const bool by_image = rules_.epilogue_by_image(g_, grp.nodes.front());
    const std::vector<int> over = written_over(loop);
    const LoopShape shape = emit_loop_kernel(*module_, g_, loop, name, over, by_image);
    const int64_t elems = numel(grp.shape);
    const bool blocks = by_image && shape.rows_per_outer > 0 && elems > 0;
    const bool whole = rules_.epilogue_materializes(g_, grp) || !blocks;
    rt::Launch l = library_call(grp.nodes.front());
    l.out_slots.clear();
    const int out_slot = whole ? output_slot(out) : -1;
    if (out_slot >= 0) l.out_slots.push_back(out_slot);
    rt::EpilogueLaunch ep;
    for (size_t i = 0; i < loop.inputs.size(); ++i) {
      if (loop.inputs[i] == out) ep.source = static_cast<int>(i);
      ep.in_slots.push_back(loop.inputs[i] == out ? out_slot : slot(loop.inputs[i]));
    }
    for (ir::Value v : loop.outputs) ep.out_slots.push_back(slot(v));
    ep.written_over = over;
    ep.library_out = g_.type(out);
    ep.block_elems = blocks ? elems / grp.shape[0] : elems;
    ep.block_rows = blocks ? shape.rows_per_outer : shape.rows;
    ep.row_grain = row_grain(shape);
    l.epilogue = std::move(ep);
    push(std::move(l), gi, name);
  }

  void add_library(const ir::FusionGroup& grp, int gi) {
    LT_CHECK(grp.nodes.size() == 1, "library kernel {} holds {} nodes", gi, grp.nodes.size());
    const int id = grp.nodes.front();
    if (buffers_.is_elided(id)) return;
    rt::Launch l = library_call(id);
    if (grp.awaited_before >= 0) {
      l.kind = rt::Launch::Kind::Start;
      awaited_at_[grp.awaited_before].push_back(launches_.size());
    }
    push(std::move(l), gi, "");
  }

  rt::Launch library_call(int id) {
    const ir::Node& n = g_.node(id);
    rt::Launch l;
    l.kind = rt::Launch::Kind::Library;
    l.op = n.op;
    l.attrs = n.attrs;
    for (ir::Value v : n.inputs) l.in_slots.push_back(slot(v));
    for (int k = 0; k < static_cast<int>(n.types.size()); ++k)
      l.out_slots.push_back(output_slot(ir::Value::node(id, k)));
    l.name = std::string(ir::mnemonic(n.op));
    return l;
  }

  // An output no later kernel reads (an epilogue's library output, a multi-output node's unused
  // value) may have no planned slot: it gets a buffer of its own, made by its launch.
  int output_slot(ir::Value v) {
    if (const int s = buffers_.slot_of(v); s >= 0) return s;
    auto [it, fresh] = unplanned_.try_emplace(v, static_cast<int>(extra_slots_.size()));
    if (fresh) extra_slots_.push_back({rt::Slot::Kind::Owned, g_.type(v)});
    return static_cast<int>(buffers_.slots.size()) + it->second;
  }

  void add_dones(size_t before) {
    for (size_t start : awaited_at_[before]) {
      const rt::Launch& s = launches_[start];
      rt::Launch d;
      d.kind = rt::Launch::Kind::Done;
      d.op = s.op;
      d.attrs = s.attrs;
      d.in_slots = s.out_slots;
      d.name = s.name;
      d.group = s.group;
      d.start = static_cast<int>(start);
      launches_.push_back(std::move(d));
    }
  }

  void push(rt::Launch l, int gi, const std::string& kernel) {
    l.group = gi;
    if (!kernel.empty()) compiled_.push_back({launches_.size(), kernel});
    launches_.push_back(std::move(l));
  }

 private:
  const ir::Graph& g_;
  const ir::FusionPlan& plan_;
  const ir::BufferPlan& buffers_;
  const ir::KernelRules& rules_;
  std::unique_ptr<llvm::LLVMContext> ctx_ = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module_;
  std::vector<rt::Launch> launches_;
  std::vector<std::pair<size_t, std::string>> compiled_;
  std::vector<std::vector<size_t>> awaited_at_;  // by group: the Start launches it awaits first
  std::map<ir::Value, int> unplanned_;
  std::vector<rt::Slot> extra_slots_;
};

// Compiles the builder's module (or takes it from the disk cache) and points each compiled
// launch at its function. Returns the disk-cache entry file ("" when none).
std::string link_kernels(LaunchBuilder& b, const ir::Graph& g, const ir::FusionPlan& plan,
                         const ir::BufferPlan& buffers, const ir::KernelRules& rules,
                         const CompileOptions& options, std::shared_ptr<Jit>& jit) {
  if (b.compiled().empty()) return "";
  jit = Jit::create(options.cache_dir);
  auto ctx = b.take_context();
  auto module = b.take_module();
  module->setDataLayout(jit->data_layout());
  module->setTargetTriple(jit->target_triple());
  JitOptions jo;
  jo.dump_dir = options.dump_dir;
  jo.dump_prefix = options.dump_prefix;
  if (!options.cache_dir.empty()) jo.cache_key = object_key(g, plan, buffers, rules);
  std::string object_file = jit->add_module(std::move(ctx), std::move(module), jo);
  for (const auto& [li, name] : b.compiled()) {
    rt::Launch& l = b.launches()[li];
    const auto fn = reinterpret_cast<rt::LoopKernelFn>(jit->lookup(name));
    (l.epilogue ? l.epilogue->fn : l.fn) = fn;
  }
  return object_file;
}

void dump_launches(const rt::Executable& exe, const CompileOptions& options) {
  if (options.dump_dir.empty()) return;
  std::filesystem::create_directories(options.dump_dir);
  const std::string path =
      fmt::format("{}/{}.launches.txt", options.dump_dir,
                  options.dump_prefix.empty() ? "module" : options.dump_prefix);
  std::ofstream f(path);
  f << rt::print_launches(exe);
  if (!f) throw Error(fmt::format("cannot write the launch list {}", path));
}

}  // namespace

std::shared_ptr<rt::Executable> compile(const ir::Graph& g, const ir::FusionPlan& plan,
                                        const ir::BufferPlan& buffers, const ir::KernelRules& rules,
                                        const CompileOptions& options, CompileStats* stats) {
  const int64_t t0 = ir::now_ns();
  LT_CHECK(buffers.num_params == static_cast<int>(g.params().size()) &&
               buffers.node_slots.size() == g.nodes().size(),
           "the buffer plan is not for this graph");
  LaunchBuilder builder(g, plan, buffers, rules);
  builder.build();
  std::shared_ptr<Jit> jit;
  const std::string object_file = link_kernels(builder, g, plan, buffers, rules, options, jit);
  std::vector<rt::Slot> slots;
  for (const ir::BufferSlot& b : buffers.slots) slots.push_back(slot_from_plan(b));
  for (rt::Slot& s : builder.extra_slots()) slots.push_back(std::move(s));
  std::vector<int> results;
  for (ir::Value v : g.results()) {
    results.push_back(buffers.slot_of(v));
    LT_CHECK(results.back() >= 0, "the buffer plan has no slot for result {}",
             ir::value_name(g, v));
  }
  if (stats) {
    const int compiled = static_cast<int>(builder.compiled().size());
    stats->loop_kernels = compiled;
    stats->library_launches = static_cast<int>(builder.launches().size()) - compiled;
    stats->llvm_ms = static_cast<double>(ir::now_ns() - t0) / 1e6;
    stats->object_file = object_file;
  }
  const rt::MemoryPlan memory{buffers.arena_bytes, buffers.live_peak_bytes, buffers.result_bytes,
                              buffers.donated_bytes, buffers.naive_bytes};
  auto exe = std::make_shared<rt::Executable>(std::move(slots), std::move(builder.launches()),
                                              std::move(results), memory, std::move(jit));
  dump_launches(*exe, options);
  return exe;
}

}  // namespace lt::codegen
