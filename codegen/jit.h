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
  int opt_level = 3;            // LLVM optimization level for the module pipeline (0-3)
  std::string dump_dir;         // non-empty: write <dump_prefix>.{ll,opt.ll,s} per module
  std::string dump_prefix;      // file stem inside dump_dir
  std::string cache_key;        // non-empty: the on-disk object cache entry for this module
  int prefer_vector_width = 0;  // 0: the JIT's default (kDefaultVectorWidth); else 128/256/512
  bool vector_math = true;      // loops calling exp/log/sin/... use glibc's libmvec (a few ulp)
};

/// The vector width loops are vectorized for unless a module asks otherwise (jit.cpp says why).
inline constexpr int kDefaultVectorWidth = 512;

/// One JIT instance owns the code of the modules added to it; function pointers stay valid while
/// it lives. An instance is used by one thread at a time (the functions it returns may be called
/// from any thread); separate instances may compile concurrently.
///
/// JIT code calls functions of the process by name: extern "C" symbols that are in the dynamic
/// symbol table (shared libraries such as libm, or an executable linked with -rdynamic /
/// ENABLE_EXPORTS), and anything passed to define_symbol.
class Jit {
 public:
  /// `disk_cache_dir` non-empty: modules added with a cache_key are kept as objects in that
  /// folder (see make_disk_object_cache) and loaded from it.
  static std::unique_ptr<Jit> create(std::string disk_cache_dir = {});
  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

  /// Optimizes (per options) and compiles a module, and links it now (an unresolved symbol is an
  /// error here, not at lookup); its functions become available to lookup. With a cache_key and
  /// the cache on, a valid disk entry replaces optimization and codegen (except when dumping,
  /// which always compiles so that the dumps are complete). A module without a data layout or
  /// triple gets the JIT's. Throws lt::InternalError with LLVM's message on failure. Returns the
  /// module's disk-cache entry file (read or written), or "" when it is not cached.
  std::string add_module(std::unique_ptr<llvm::LLVMContext> ctx, std::unique_ptr<llvm::Module> m,
                         const JitOptions& options);
  /// Address of a compiled function; throws when absent.
  void* lookup(std::string_view name);
  /// Makes `address` the definition of `name` for modules added afterwards (runtime entry points
  /// in a static library are not in the dynamic symbol table, and may not even be linked in,
  /// unless something takes their address). Throws when `name` is already defined.
  void define_symbol(std::string_view name, const void* address);

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
