// LLJIT for the host, after KaleidoscopeJIT: an ExecutionSession with a JITLink object layer and
// the process's symbols. Modules do not go through LLJIT's IR layers: add_module optimizes and
// emits the object itself, so that a disk-cache hit skips the O3 pipeline as well as codegen
// (an llvm::ObjectCache behind IRCompileLayer is only asked after the IR transforms have run),
// and then adds the object and links it at once, so errors surface in add_module.
#include "codegen/jit.h"

#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/ObjectCache.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/SmallVectorMemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <vector>

#include "codegen/object_cache.h"
#include "ir/error.h"

namespace lt::codegen {
namespace {

void init_llvm_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

// glibc's libmvec holds SSE/AVX2 versions of expf, logf, sinf, ... (_ZGVdN8v_expf): with it as
// the vector library, loops calling them vectorize instead of staying scalar. Loaded into the
// process (RTLD_GLOBAL) so that the JIT's process-symbol lookup finds it.
bool libmvec_loaded() {
  static const bool ok = !llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
  return ok;
}

std::string message(llvm::Error e) { return llvm::toString(std::move(e)); }

template <typename T>
T take(llvm::Expected<T> v, const char* what) {
  if (!v) throw InternalError(fmt::format("jit: {}: {}", what, message(v.takeError())));
  return std::move(*v);
}

llvm::OptimizationLevel opt_level(int level) {
  switch (level) {
    case 0:
      return llvm::OptimizationLevel::O0;
    case 1:
      return llvm::OptimizationLevel::O1;
    case 2:
      return llvm::OptimizationLevel::O2;
    case 3:
      return llvm::OptimizationLevel::O3;
  }
  throw InternalError(fmt::format("jit: opt_level {} is not 0-3", level));
}

// The new-PM pipeline clang runs at -O<level>, with the TargetMachine so that the cost models
// (vectorizer, unroller, inliner) are those of the host CPU. Vectorization is off in
// PipelineTuningOptions unless asked for; clang asks at -O2 and up, and so do we.
void optimize(llvm::Module& m, llvm::TargetMachine& tm, int level, bool vector_math) {
  const llvm::OptimizationLevel ol = opt_level(level);
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = level >= 2;
  pto.SLPVectorization = level >= 2;
  const llvm::Triple triple(m.getTargetTriple());
  llvm::TargetLibraryInfoImpl tlii(triple);
  if (vector_math)
    tlii.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, triple);
  // Declared in this order so that they are destroyed in the right one (they refer to each other).
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });  // before the defaults
  llvm::PassBuilder pb(&tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      level == 0 ? pb.buildO0DefaultPipeline(ol) : pb.buildPerModuleDefaultPipeline(ol);
  mpm.run(m, mam);
}

// Codegen still runs on the legacy pass manager in LLVM 19.
llvm::SmallVector<char, 0> emit(llvm::Module& m, llvm::TargetMachine& tm,
                                llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, type))
    throw InternalError("jit: the target machine cannot emit this file type");
  pm.run(m);
  return out;
}

// Dumps are diagnostics: failing to write one warns and does not stop the compile.
void write_dump(const std::string& path, llvm::StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (!ec) os << text;
  if (ec || os.has_error())
    std::fprintf(stderr, "lt: cannot write %s: %s\n", path.c_str(), ec.message().c_str());
}

std::string ir_text(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

// The names a module defines for others: what add_module links eagerly.
std::vector<std::string> defined_symbols(const llvm::Module& m) {
  std::vector<std::string> names;
  for (const llvm::GlobalValue& gv : m.global_values())
    if (!gv.isDeclaration() && !gv.hasLocalLinkage() && gv.hasName())
      names.push_back(gv.getName().str());
  return names;
}

}  // namespace

struct Jit::Impl {
  // Declared first so that it outlives the session, which reports into it until its end.
  std::vector<std::string> session_errors;
  std::unique_ptr<llvm::TargetMachine> tm;   // optimization, object and assembly emission
  std::unique_ptr<llvm::ObjectCache> cache;  // null: disk cache off
  std::unique_ptr<llvm::orc::LLJIT> jit;

  // Errors the session reported (e.g. "Symbols not found") since the last call, joined.
  std::string drain_session_errors() {
    std::string s;
    for (const std::string& e : session_errors) s += "; " + e;
    session_errors.clear();
    return s;
  }
  llvm::SmallVector<char, 0> compile(llvm::Module& m, const JitOptions& o, bool vector_math);
  void link(std::unique_ptr<llvm::MemoryBuffer> obj, const std::vector<std::string>& names);
};

// The LLVM version, the target and the code model objects are built for: with the CPU and its
// features, what the disk cache keys on besides the module's own key.
static std::string compiler_id(const llvm::Triple& triple) {
  return fmt::format("llvm {}|{}|{}|{}|pic-small", LLVM_VERSION_STRING, triple.str(),
                     Jit::host_cpu(), Jit::host_features());
}

std::unique_ptr<Jit> Jit::create(std::string disk_cache_dir) {
  init_llvm_once();
  auto impl = std::make_unique<Impl>();
  auto jtmb = take(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  // PIC + small code model is what LLJIT configures JITLink with on x86-64; our own target
  // machine must agree, since it emits the objects. Calls into the process then go through
  // JITLink's GOT/PLT stubs, wherever in the address space the callee is.
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  jtmb.setCodeModel(llvm::CodeModel::Small);
  impl->tm = take(jtmb.createTargetMachine(), "creating the target machine");
  const llvm::DataLayout dl = impl->tm->createDataLayout();
  impl->jit = take(
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(jtmb))
          .setDataLayout(dl)
          // Objects only: no IR-level initializer support needed.
          .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
          // The process's symbols (libm, the runtime's exported extern "C" functions), found
          // with dlsym: LLJIT's default "<Process Symbols>" dylib, a DynamicLibrarySearchGenerator
          // for the current process behind its executor-process-control interface.
          .setLinkProcessSymbolsByDefault(true)
          .create(),
      "creating the JIT");
  Impl* raw = impl.get();
  impl->jit->getExecutionSession().setErrorReporter(
      [raw](llvm::Error e) { raw->session_errors.push_back(message(std::move(e))); });
  if (!disk_cache_dir.empty())
    impl->cache = make_disk_object_cache(std::move(disk_cache_dir),
                                         compiler_id(impl->jit->getTargetTriple()));
  return std::unique_ptr<Jit>(new Jit(std::move(impl)));
}

Jit::Jit(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Jit::~Jit() = default;

llvm::SmallVector<char, 0> Jit::Impl::compile(llvm::Module& m, const JitOptions& o,
                                              bool vector_math) {
  const bool dump = !o.dump_dir.empty();
  const std::string stem = o.dump_dir + "/" + (o.dump_prefix.empty() ? "module" : o.dump_prefix);
  if (dump) {
    std::error_code ec;
    std::filesystem::create_directories(o.dump_dir, ec);
    write_dump(stem + ".ll", ir_text(m));
  }
  optimize(m, *tm, o.opt_level, vector_math);
  if (dump) {
    write_dump(stem + ".opt.ll", ir_text(m));
    // Codegen rewrites the IR it runs on (CodeGenPrepare): the assembly comes from a clone.
    std::unique_ptr<llvm::Module> clone = llvm::CloneModule(m);
    const auto s = emit(*clone, *tm, llvm::CodeGenFileType::AssemblyFile);
    write_dump(stem + ".s", llvm::StringRef(s.data(), s.size()));
  }
  return emit(m, *tm, llvm::CodeGenFileType::ObjectFile);
}

// Adds the object under its own resource tracker and looks up everything it defines, which links
// it now; on failure the tracker is removed, so the JIT stays usable and the names stay free.
void Jit::Impl::link(std::unique_ptr<llvm::MemoryBuffer> obj,
                     const std::vector<std::string>& names) {
  llvm::orc::JITDylib& main = jit->getMainJITDylib();
  llvm::orc::ResourceTrackerSP rt = main.createResourceTracker();
  auto fail = [&](std::string what, llvm::Error e) {
    what += ": " + message(std::move(e)) + drain_session_errors();
    if (llvm::Error r = rt->remove()) what += "; " + message(std::move(r));
    throw InternalError("jit: " + what);
  };
  if (llvm::Error e = jit->addObjectFile(rt, std::move(obj)))
    fail("adding the object", std::move(e));
  if (names.empty()) return;
  llvm::orc::SymbolLookupSet set;
  for (const std::string& n : names) set.add(jit->mangleAndIntern(n));
  auto& es = jit->getExecutionSession();
  auto syms = es.lookup(
      llvm::orc::makeJITDylibSearchOrder(&main, llvm::orc::JITDylibLookupFlags::MatchAllSymbols),
      std::move(set));
  if (!syms) fail("linking", syms.takeError());
}

std::string Jit::add_module(std::unique_ptr<llvm::LLVMContext> ctx,
                            std::unique_ptr<llvm::Module> m, const JitOptions& options) {
  LT_CHECK(ctx && m, "add_module needs a context and a module");
  // Declared in this order so that the module dies before its context, whatever happens.
  const std::unique_ptr<llvm::LLVMContext> context = std::move(ctx);
  const std::unique_ptr<llvm::Module> module = std::move(m);
  llvm::Module& mod = *module;
  Impl& I = *impl_;
  const llvm::DataLayout& dl = I.jit->getDataLayout();
  if (mod.getDataLayout().isDefault()) mod.setDataLayout(dl);
  if (mod.getDataLayout() != dl)
    throw InternalError(fmt::format("jit: module data layout {} is not the JIT's {}",
                                    mod.getDataLayout().getStringRepresentation(),
                                    dl.getStringRepresentation()));
  if (mod.getTargetTriple().empty()) mod.setTargetTriple(I.jit->getTargetTriple().str());
  opt_level(options.opt_level);  // validates it before a cache lookup keyed on it
  // Vector width, as the "prefer-vector-width" attribute (LLVM's own default follows the CPU's
  // tuning: 512 on znver4, 256 on Intel cores such as rocketlake, icelake, sapphirerapids).
  // 512 here, also on CPUs that run AVX-512 on 256-bit units (znver4): a reduction gets twice
  // the accumulator lanes, an FMA-bound loop runs the same, and a streaming loop loses a little
  // in L1 only (from memory it is bandwidth-bound either way). Intel cores, whose tuning says
  // 256, may choose otherwise: measure there before trusting this default.
  const int width = options.prefer_vector_width ? options.prefer_vector_width : kDefaultVectorWidth;
  LT_CHECK(width == 128 || width == 256 || width == 512, "prefer_vector_width {}", width);
  const bool vector_math = options.vector_math && libmvec_loaded();
  for (llvm::Function& f : mod)
    if (!f.isDeclaration() && !f.hasFnAttribute("prefer-vector-width"))
      f.addFnAttr("prefer-vector-width", std::to_string(width));
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(mod, &es)) throw InternalError("jit: invalid module: " + es.str());
  const std::vector<std::string> names = defined_symbols(mod);

  // The key carries what changes the code besides the IR and the compiler (see compiler_id).
  const bool cached = I.cache && !options.cache_key.empty();
  if (cached)
    mod.setModuleIdentifier(object_cache_module_id(fmt::format(
        "{}.O{}.v{}{}", options.cache_key, options.opt_level, width, vector_math ? ".mvec" : "")));
  std::unique_ptr<llvm::MemoryBuffer> obj;
  if (cached && options.dump_dir.empty()) obj = I.cache->getObject(&mod);
  if (!obj) {
    auto bytes = I.compile(mod, options, vector_math);
    obj = std::make_unique<llvm::SmallVectorMemoryBuffer>(std::move(bytes),
                                                          mod.getModuleIdentifier(), false);
    if (cached) I.cache->notifyObjectCompiled(&mod, obj->getMemBufferRef());
  }
  I.link(std::move(obj), names);
  return cached ? object_cache_entry(*I.cache, mod.getModuleIdentifier()) : std::string();
}

void* Jit::lookup(std::string_view name) {
  auto addr = impl_->jit->lookup(llvm::StringRef(name.data(), name.size()));
  if (!addr)
    throw InternalError(fmt::format("jit: no function '{}': {}{}", name, message(addr.takeError()),
                                    impl_->drain_session_errors()));
  return addr->toPtr<void*>();
}

void Jit::define_symbol(std::string_view name, const void* address) {
  llvm::orc::LLJIT& j = *impl_->jit;
  llvm::orc::SymbolMap syms;
  syms[j.mangleAndIntern(llvm::StringRef(name.data(), name.size()))] = {
      llvm::orc::ExecutorAddr::fromPtr(address),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  if (llvm::Error e = j.getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(syms))))
    throw InternalError(fmt::format("jit: define_symbol '{}': {}", name, message(std::move(e))));
}

const std::string& Jit::host_cpu() {
  static const std::string cpu = llvm::sys::getHostCPUName().str();
  return cpu;
}

// Sorted, so that the string (part of the disk-cache key) does not depend on hash-map order.
const std::string& Jit::host_features() {
  static const std::string features = [] {
    std::vector<std::string> v;
    for (const auto& kv : llvm::sys::getHostCPUFeatures())
      v.push_back((kv.second ? "+" : "-") + kv.first().str());
    std::sort(v.begin(), v.end());
    std::string s;
    for (const std::string& f : v) s += (s.empty() ? "" : ",") + f;
    return s;
  }();
  return features;
}

std::string Jit::data_layout() const {
  return impl_->jit->getDataLayout().getStringRepresentation();
}

std::string Jit::target_triple() const { return impl_->jit->getTargetTriple().str(); }

}  // namespace lt::codegen
