// lt-opt: reads IR text, runs the named lowering stages in order under the CPU backend (the same
// registry, rules and recipe a compiled step uses), prints the graph and, when asked, its fusion
// and buffer plans. Used by the golden tests under tests/ir/ and by users who want to see what a
// pass does.
// Exit status 2 for a bad flag, an unreadable file, IR that does not parse or verify, or an
// unknown stage; 1 for any other failure.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "ir/error.h"
#include "ir/fusion_plan.h"
#include "ir/graph.h"
#include "ir/parser.h"
#include "passes/registry.h"
#include "tools/cli.h"

namespace {

void print_fusion(const lt::passes::LoweredGraph& l) {
  const lt::ir::FusionPlan& plan = *l.fusion;
  size_t loops = 0, epilogues = 0;
  for (const auto& grp : plan.groups) {
    loops += grp.kind == lt::ir::KernelKind::Loop;
    epilogues += grp.kind == lt::ir::KernelKind::Epilogue;
  }
  std::cout << "fusion plan @" << l.graph.name() << ": " << plan.groups.size() << " kernels ("
            << loops << " loop, " << epilogues << " epilogue, "
            << plan.groups.size() - loops - epilogues << " library)\n"
            << lt::ir::print_fusion_plan(l.graph, plan);
}

std::string read_text(const std::string& input) {
  std::stringstream text;
  if (input == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream f(input);
    if (!f) throw lt::InputError("cannot open " + input);
    text << f.rdbuf();
  }
  return text.str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lt-opt: run lazytrain IR passes"};
  std::string input = "-";
  std::string pass_list;
  bool list = false;
  bool fusion = false;
  bool buffers = false;
  bool memory = false;
  lt::passes::LowerOptions options;
  lt::passes::PassLogOptions log_options;
  log_options.verify = true;  // stages see a verified graph and have their output verified
  app.add_option("input", input, "IR file ('-' for stdin)");
  app.add_option("--passes", pass_list,
                 "comma-separated stages, run in order ('pipeline' is the CPU backend's whole "
                 "lowering)");
  app.add_flag("--list-passes", list, "print the stage names and exit");
  app.add_flag("--print-fusion", fusion,
               "after the passes, print the fusion plan (running the kernel stages, 'fuse' to "
               "'schedule_collectives', if they made none)");
  app.add_flag("--print-buffers", buffers,
               "after the passes, print the buffer plan (running the kernel stages and "
               "'buffer_plan' if they made none)");
  app.add_flag("--print-memory", memory,
               "after the passes, print the memory report: inputs, donated, fresh results, "
               "intermediates and the planned peak (running the stages --print-buffers runs)");
  app.add_option("--dump-dir", log_options.dump_dir,
                 "write each stage's output as a compiled step does under LT_DUMP_DIR");
  app.add_option("--dump-prefix", log_options.prefix, "file-name prefix of those dumps");
  app.add_option("--fusion-max-nodes", options.fusion.max_nodes_per_kernel,
                 "largest loop kernel 'fuse' forms")
      ->check(lt::cli::integer_at_least(1));
  app.add_option("--fusion-max-reductions", options.fusion.max_reductions_per_kernel,
                 "most reductions one loop kernel 'fuse' ends in")
      ->check(lt::cli::integer_at_least(1));
  app.add_flag("!--no-fusion", options.fusion.enabled,
               "'fuse' makes the unfused plan (every node its own kernel, opt level 1)");
  app.add_flag("!--no-channels-last", options.channels_last,
               "'pipeline' keeps convolutions on NCHW activations (LT_CHANNELS_LAST=0)");
  app.add_flag("!--no-wide-gemm-results", options.wide_gemm_results,
               "'pipeline' keeps bf16 GEMM results rounded (LT_WIDE_GEMM_RESULTS=0)");
  app.add_flag("!--no-epilogues", options.fusion.epilogues,
               "'fuse' keeps loops after matmul/conv2d as kernels of their own");
  int64_t bucket_first_kb = options.buckets.first_bytes >> 10;
  int64_t bucket_kb = options.buckets.bytes >> 10;
  app.add_option("--bucket-first-kb", bucket_first_kb,
                 "size of the first all_reduce bucket 'bucket_all_reduce' forms, in KiB")
      ->check(lt::cli::integer_at_least(1));
  app.add_option("--bucket-kb", bucket_kb,
                 "size of the later all_reduce buckets, in KiB (0: no bucketing)")
      ->check(lt::cli::integer_at_least(0));
  return lt::cli::run(app, argc, argv, [&] {
    options.buckets.first_bytes = bucket_first_kb << 10;
    options.buckets.bytes = bucket_kb << 10;
    if (list) {
      for (const auto& p : lt::passes::all_passes())
        std::cout << p.name << "  " << p.summary << "\n";
      return;
    }
    const std::string text = read_text(input);
    // An lt::Error from here on is about the input: IR that does not parse or verify, or a
    // stage name that does not exist.
    try {
      lt::passes::LoweredGraph l{lt::ir::parse(text), {}, {}};
      std::vector<std::string> names;
      std::stringstream list_text(pass_list);
      for (std::string name; std::getline(list_text, name, ',');)
        if (!name.empty()) names.push_back(name);
      lt::passes::PassLog log(log_options);
      const lt::backends::Backend& backend = lt::backends::cpu();
      // "pipeline" verifies its input itself, so its dumps are numbered as a step's are.
      const bool plans = fusion || buffers || memory;
      if ((!names.empty() && names.front() != "pipeline") || (names.empty() && plans))
        log.verify(l.graph);
      backend.run_passes(l, names, options, log);
      if (plans && !l.fusion) backend.plan_kernels(l, options, log);
      const std::vector<std::string> buffer_stage = {"buffer_plan"};
      if ((buffers || memory) && !l.buffers) backend.run_passes(l, buffer_stage, options, log);
      std::cout << lt::ir::print(l.graph);
      if (fusion) print_fusion(l);
      if (buffers) std::cout << lt::ir::print_buffer_plan(l.graph, *l.buffers);
      if (memory)
        std::cout << lt::ir::print_memory_report(lt::ir::memory_report(l.graph, *l.buffers));
    } catch (const lt::InputError&) {
      throw;
    } catch (const lt::Error& e) {
      throw lt::InputError(e.what());
    }
  });
}
