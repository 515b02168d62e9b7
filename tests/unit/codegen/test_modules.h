// Small LLVM modules for the codegen tests, built with IRBuilder: a saxpy loop and functions that
// call out of the JIT by name. Test-only (LLVM headers are otherwise kept out of headers).
#pragma once
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>

#include "codegen/jit.h"

namespace lt::codegen::testing {

struct TestModule {
  std::unique_ptr<llvm::LLVMContext> ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> m;

  explicit TestModule(const Jit& jit, const std::string& name = "test") {
    m = std::make_unique<llvm::Module>(name, *ctx);
    m->setDataLayout(jit.data_layout());
    m->setTargetTriple(jit.target_triple());
  }
  void add_to(Jit& jit, const JitOptions& options = {}) {
    jit.add_module(std::move(ctx), std::move(m), options);
  }
};

/// void saxpy(float* x, float* y, float a, int64_t n): y[i] = a * x[i] + y[i].
inline void add_saxpy(llvm::Module& m, const std::string& name = "saxpy") {
  llvm::LLVMContext& c = m.getContext();
  llvm::IRBuilder<> b(c);
  auto* ptr = b.getPtrTy();
  auto* f32 = b.getFloatTy();
  auto* i64 = b.getInt64Ty();
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, f32, i64}, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, m);
  llvm::Value* x = f->getArg(0);
  llvm::Value* y = f->getArg(1);
  llvm::Value* a = f->getArg(2);
  llvm::Value* n = f->getArg(3);
  f->addParamAttr(0, llvm::Attribute::NoAlias);
  f->addParamAttr(1, llvm::Attribute::NoAlias);
  auto* entry = llvm::BasicBlock::Create(c, "entry", f);
  auto* loop = llvm::BasicBlock::Create(c, "loop", f);
  auto* exit = llvm::BasicBlock::Create(c, "exit", f);
  b.SetInsertPoint(entry);
  b.CreateCondBr(b.CreateICmpSGT(n, b.getInt64(0)), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(i64, 2, "i");
  i->addIncoming(b.getInt64(0), entry);
  llvm::Value* px = b.CreateInBoundsGEP(f32, x, i);
  llvm::Value* py = b.CreateInBoundsGEP(f32, y, i);
  llvm::Value* v = b.CreateFAdd(b.CreateFMul(a, b.CreateLoad(f32, px)), b.CreateLoad(f32, py));
  b.CreateStore(v, py);
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1), "next", /*HasNUW=*/true, /*HasNSW=*/true);
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, n), loop, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
}

/// void exp_loop(float* x, float* y, int64_t n): y[i] = llvm.exp(x[i]).
inline void add_exp_loop(llvm::Module& m) {
  llvm::LLVMContext& c = m.getContext();
  llvm::IRBuilder<> b(c);
  auto* f32 = b.getFloatTy();
  auto* i64 = b.getInt64Ty();
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getPtrTy(), i64}, false);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, "exp_loop", m);
  f->addParamAttr(0, llvm::Attribute::NoAlias);
  f->addParamAttr(1, llvm::Attribute::NoAlias);
  auto* entry = llvm::BasicBlock::Create(c, "entry", f);
  auto* loop = llvm::BasicBlock::Create(c, "loop", f);
  auto* exit = llvm::BasicBlock::Create(c, "exit", f);
  b.SetInsertPoint(entry);
  b.CreateCondBr(b.CreateICmpSGT(f->getArg(2), b.getInt64(0)), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(i64, 2, "i");
  i->addIncoming(b.getInt64(0), entry);
  llvm::Value* v = b.CreateLoad(f32, b.CreateInBoundsGEP(f32, f->getArg(0), i));
  b.CreateStore(b.CreateUnaryIntrinsic(llvm::Intrinsic::exp, v),
                b.CreateInBoundsGEP(f32, f->getArg(1), i));
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1), "next", /*HasNUW=*/true, /*HasNSW=*/true);
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, f->getArg(2)), loop, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
}

/// double <name>(double v) { return <callee>(v) + 1; } with callee declared, defined elsewhere.
inline void add_caller(llvm::Module& m, const std::string& name, const std::string& callee) {
  llvm::IRBuilder<> b(m.getContext());
  auto* fty = llvm::FunctionType::get(b.getDoubleTy(), {b.getDoubleTy()}, false);
  llvm::FunctionCallee target = m.getOrInsertFunction(callee, fty);
  auto* f = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, m);
  b.SetInsertPoint(llvm::BasicBlock::Create(m.getContext(), "entry", f));
  llvm::Value* r = b.CreateCall(target, {f->getArg(0)});
  b.CreateRet(b.CreateFAdd(r, llvm::ConstantFP::get(b.getDoubleTy(), 1.0)));
}

using SaxpyFn = void (*)(float*, float*, float, int64_t);
using UnaryFn = double (*)(double);
using MapFn = void (*)(const float*, float*, int64_t);

}  // namespace lt::codegen::testing
