#include "backends/cpu/cpu_backend.h"

#include <utility>

#include "backends/cpu/cpu_kernel_rules.h"
#include "backends/cpu/cpu_recipe.h"
#include "codegen/compile.h"
#include "ir/error.h"

namespace lt::backends {
namespace {

class CpuBackend final : public Backend {
 public:
  const ir::KernelRules& rules() const override { return cpu_kernel_rules(); }

  std::shared_ptr<rt::Executable> compile(const passes::LoweredGraph& l,
                                          const codegen::CompileOptions& o,
                                          codegen::CompileStats* stats) const override {
    LT_CHECK(l.fusion && l.buffers, "compile: the lowered graph has no {} plan",
             l.fusion ? "buffer" : "fusion");
    return codegen::compile(l.graph, *l.fusion, *l.buffers, rules(), o, stats);
  }

 private:
  passes::LoweredGraph recipe(ir::Graph g, const passes::LowerOptions& o,
                              passes::PassLog& log) const override {
    return cpu_recipe(std::move(g), o, log);
  }
  void kernel_recipe(passes::LoweredGraph& l, const passes::LowerOptions& o,
                     passes::PassLog& log) const override {
    cpu_kernel_recipe(l, o, log);
  }
};

}  // namespace

const Backend& cpu() {
  static const CpuBackend backend;
  return backend;
}

}  // namespace lt::backends
