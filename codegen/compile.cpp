#include "codegen/compile.h"

#include <fmt/format.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <chrono>
#include <map>

#include "codegen/jit.h"
#include "codegen/loop_emitter.h"

namespace lt::codegen {

std::shared_ptr<rt::Executable> compile(const ir::Graph& g, const ir::FusionPlan& plan,
                                        const CompileOptions& options, CompileStats* stats) {
  const auto t0 = std::chrono::steady_clock::now();
  // Slots: parameters first, then every value a launch writes, made on first use.
  std::vector<TensorType> slot_types;
  for (const ir::Param& p : g.params()) slot_types.push_back(p.type);
  std::map<ir::Value, int> slot_of;
  auto slot = [&](ir::Value v) {
    if (v.is_param()) return v.param_index();
    auto [it, fresh] = slot_of.try_emplace(v, static_cast<int>(slot_types.size()));
    if (fresh) slot_types.push_back(g.type(v));
    return it->second;
  };

  std::vector<rt::Launch> launches;
  std::vector<std::pair<size_t, std::string>> loop_launches;  // launch index, function name
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("lt_step", *ctx);
  for (size_t gi = 0; gi < plan.groups.size(); ++gi) {
    const ir::FusionGroup& grp = plan.groups[gi];
    if (grp.kind == ir::KernelKind::Loop && can_emit_loop(g, grp)) {
      const std::string name = fmt::format("lt_kernel_{}", gi);
      const LoopShape shape = emit_loop_kernel(*module, g, grp, name);
      rt::Launch l;
      l.kind = rt::Launch::Kind::Loop;
      l.rows = shape.rows;
      l.row_grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, shape.inner));
      for (ir::Value v : grp.inputs) l.in_slots.push_back(slot(v));
      for (ir::Value v : grp.outputs) l.out_slots.push_back(slot(v));
      l.name = name;
      loop_launches.push_back({launches.size(), name});
      launches.push_back(std::move(l));
      continue;
    }
    for (int id : grp.nodes) {  // one eager-kernel call per node
      const ir::Node& n = g.node(id);
      rt::Launch l;
      l.kind = rt::Launch::Kind::Library;
      l.op = n.op;
      l.attrs = n.attrs;
      for (ir::Value v : n.inputs) l.in_slots.push_back(slot(v));
      for (int k = 0; k < static_cast<int>(n.types.size()); ++k)
        l.out_slots.push_back(slot(ir::Value::node(id, k)));
      l.name = std::string(ir::mnemonic(n.op));
      launches.push_back(std::move(l));
    }
  }
  std::vector<int> results;
  for (ir::Value v : g.results()) results.push_back(slot(v));

  std::shared_ptr<Jit> jit;
  if (!loop_launches.empty()) {
    jit = Jit::create();
    module->setDataLayout(jit->data_layout());
    module->setTargetTriple(jit->target_triple());
    JitOptions jo;
    jo.dump_dir = options.dump_dir;
    jo.dump_prefix = options.dump_prefix;
    jo.cache_key = options.cache_key;
    jit->add_module(std::move(ctx), std::move(module), jo);
    for (auto& [li, name] : loop_launches)
      launches[li].fn = reinterpret_cast<rt::LoopKernelFn>(jit->lookup(name));
  }
  if (stats) {
    stats->loop_kernels = static_cast<int>(loop_launches.size());
    stats->library_launches = static_cast<int>(launches.size() - loop_launches.size());
    stats->llvm_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  return std::make_shared<rt::Executable>(static_cast<int>(g.params().size()), std::move(slot_types),
                                          std::move(launches), std::move(results), std::move(jit));
}

}  // namespace lt::codegen
