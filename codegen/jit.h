// The JIT: LLVM ORC (LLJIT) compiling modules at O3 for the host CPU (its name and, since a CPU
// name can hide features, its full feature list). LLVM types stay behind a pimpl: only
// codegen/*.cpp include LLVM headers.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace lt::codegen {

struct JitOptions {
  int opt_level = 3;          // LLVM optimization level for the module pipeline
  std::string dump_dir;       // non-empty: write <dump_prefix>.{ll,opt.ll,s} per module
  std::string dump_prefix;    // file stem inside dump_dir
};

/// One JIT instance owns the code of the modules added to it; function pointers stay valid while
/// it lives.
class Jit {
 public:
  static std::unique_ptr<Jit> create();
  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

  /// Optimizes (per options) and compiles a module; its functions become available to lookup.
  /// Throws lt::InternalError with LLVM's message on failure.
  void add_module(std::unique_ptr<llvm::LLVMContext> ctx, std::unique_ptr<llvm::Module> m,
                  const JitOptions& options);
  /// Address of a compiled function; throws when absent.
  void* lookup(std::string_view name);

  /// What the code is compiled for (part of the compile-cache key).
  static const std::string& host_cpu();
  static const std::string& host_features();
  /// The data layout and triple modules must be created with.
  std::string data_layout() const;
  std::string target_triple() const;

 private:
  struct Impl;
  explicit Jit(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lt::codegen
