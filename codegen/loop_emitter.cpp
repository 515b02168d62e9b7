// Loop kernels. The group's iteration shape is collapsed like the eager broadcast loop (dims
// merge where every input walks them as one run); the kernel walks rows of the innermost dim,
// each input with stride 1 or 0 (broadcast), and computes the group's nodes per element.
#include "codegen/loop_emitter.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <map>

#include "codegen/scalar_emitter.h"
#include "ir/error.h"

namespace lt::codegen {
namespace {

struct Access {
  std::vector<int64_t> outer_stride;  // per collapsed outer dim
  int64_t inner_stride = 0;           // 0 or 1
};

struct Plan {
  LoopShape shape;
  std::vector<int64_t> outer;  // collapsed outer dims
  std::vector<Access> in;      // per group input
};

/// Strides of `s` broadcast (right-aligned) into `iter`, 0 where it repeats.
std::vector<int64_t> broadcast_strides(const Shape& s, const Shape& iter) {
  std::vector<int64_t> st(iter.size(), 0);
  int64_t acc = 1;
  const size_t off = iter.size() - s.size();
  for (size_t i = iter.size(); i-- > off;) {
    const int64_t d = s[i - off];
    st[i] = d == 1 ? 0 : acc;
    acc *= d;
  }
  return st;
}

Plan make_plan(const ir::Graph& g, const ir::FusionGroup& grp) {
  const Shape& iter = grp.shape;
  std::vector<std::vector<int64_t>> st;
  for (ir::Value v : grp.inputs) st.push_back(broadcast_strides(g.type(v).shape, iter));
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> cs(st.size());
  for (size_t i = 0; i < iter.size(); ++i) {
    if (iter[i] == 1) continue;
    bool merge = !dims.empty();
    for (size_t k = 0; merge && k < st.size(); ++k) merge = cs[k].back() == st[k][i] * iter[i];
    if (merge) {
      dims.back() *= iter[i];
      for (size_t k = 0; k < st.size(); ++k) cs[k].back() = st[k][i];
    } else {
      dims.push_back(iter[i]);
      for (size_t k = 0; k < st.size(); ++k) cs[k].push_back(st[k][i]);
    }
  }
  Plan p;
  p.in.resize(st.size());
  if (dims.empty()) return p;  // a single element
  p.shape.inner = dims.back();
  dims.pop_back();
  p.outer = dims;
  for (int64_t d : dims) p.shape.rows *= d;
  for (size_t k = 0; k < st.size(); ++k) {
    p.in[k].inner_stride = cs[k].back();
    cs[k].pop_back();
    p.in[k].outer_stride = cs[k];
  }
  return p;
}

/// for (iv = begin; iv < end; ++iv) body(iv), as a canonical loop LLVM can vectorize.
template <class Body>
void counted_loop(Builder& b, llvm::Value* begin, llvm::Value* end, const char* name, Body body) {
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& c = b.getContext();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* head = llvm::BasicBlock::Create(c, std::string(name) + ".head", f);
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(c, std::string(name) + ".body", f);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(c, std::string(name) + ".exit", f);
  b.CreateBr(head);
  b.SetInsertPoint(head);
  llvm::PHINode* iv = b.CreatePHI(b.getInt64Ty(), 2, name);
  iv->addIncoming(begin, pre);
  b.CreateCondBr(b.CreateICmpSLT(iv, end), loop, exit);
  b.SetInsertPoint(loop);
  body(iv);
  llvm::Value* next = b.CreateAdd(iv, b.getInt64(1), "", /*HasNUW=*/true, /*HasNSW=*/true);
  iv->addIncoming(next, b.GetInsertBlock());
  b.CreateBr(head);
  b.SetInsertPoint(exit);
}

}  // namespace

bool can_emit_loop(const ir::Graph& g, const ir::FusionGroup& grp) {
  for (ir::Value v : grp.inputs)
    if (!is_compute_type(g.type(v).dtype)) return false;
  for (int id : grp.nodes) {
    const ir::Node& n = g.node(id);
    if (n.op == ir::Op::Expand) continue;
    auto ew = ir::as_elementwise(n.op);
    if (!ew) return false;
    const DType in = n.inputs.empty() ? n.types[0].dtype
                     : *ew == ir::ElementwiseOp::Where ? g.type(n.inputs[1]).dtype
                                                        : g.type(n.inputs[0]).dtype;
    if (!can_emit_elementwise(*ew, in, n.types[0].dtype)) return false;
  }
  return true;
}

LoopShape emit_loop_kernel(llvm::Module& m, const ir::Graph& g, const ir::FusionGroup& grp,
                           const std::string& name, bool noalias) {
  llvm::LLVMContext& c = m.getContext();
  Builder b(c);
  const Plan plan = make_plan(g, grp);
  const size_t nin = grp.inputs.size(), nout = grp.outputs.size();

  // The body takes one noalias pointer per buffer so the vectorizer needs no runtime checks; the
  // exported wrapper unpacks the buffer table and is what the runtime calls.
  std::vector<llvm::Type*> params(nin + nout, b.getPtrTy());
  params.push_back(b.getInt64Ty());
  params.push_back(b.getInt64Ty());
  auto* body_ty = llvm::FunctionType::get(b.getVoidTy(), params, false);
  auto* body = llvm::Function::Create(body_ty, llvm::Function::InternalLinkage, name + ".body", m);
  body->addFnAttr(llvm::Attribute::AlwaysInline);
  for (size_t i = 0; i < nin + nout; ++i) {
    if (noalias) body->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
    body->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::getWithAlignment(c, llvm::Align(64)));
  }
  b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", body));
  llvm::Value* row_begin = body->getArg(static_cast<unsigned>(nin + nout));
  llvm::Value* row_end = body->getArg(static_cast<unsigned>(nin + nout + 1));
  const int64_t inner = plan.shape.inner;

  std::map<ir::Value, int> input_index;
  for (size_t k = 0; k < nin; ++k) input_index[grp.inputs[k]] = static_cast<int>(k);

  counted_loop(b, row_begin, row_end, "row", [&](llvm::Value* row) {
    // Base offset of each input for this row: decompose the row index over the outer dims.
    std::vector<llvm::Value*> base(nin, b.getInt64(0));
    llvm::Value* rem = row;
    for (size_t d = plan.outer.size(); d-- > 0;) {
      llvm::Value* dim = b.getInt64(plan.outer[d]);
      llvm::Value* idx = d == 0 ? rem : b.CreateSRem(rem, dim);
      if (d > 0) rem = b.CreateSDiv(rem, dim);
      for (size_t k = 0; k < nin; ++k)
        if (plan.in[k].outer_stride[d] != 0)
          base[k] = b.CreateAdd(base[k], b.CreateMul(idx, b.getInt64(plan.in[k].outer_stride[d])));
    }
    llvm::Value* out_base = b.CreateMul(row, b.getInt64(inner));
    counted_loop(b, b.getInt64(0), b.getInt64(inner), "i", [&](llvm::Value* i) {
      std::map<ir::Value, llvm::Value*> val;
      auto load_input = [&](ir::Value v) {
        const int k = input_index.at(v);
        const DType dt = g.type(v).dtype;
        llvm::Value* off = plan.in[k].inner_stride ? b.CreateAdd(base[k], i) : base[k];
        llvm::Value* p = b.CreateInBoundsGEP(storage_type(b, dt), body->getArg(k), off);
        llvm::Value* x = b.CreateLoad(storage_type(b, dt), p);
        return dt == DType::Bool ? b.CreateICmpNE(x, b.getInt8(0)) : x;
      };
      auto get = [&](ir::Value v) -> llvm::Value* {
        if (auto it = val.find(v); it != val.end()) return it->second;
        return val[v] = load_input(v);
      };
      for (int id : grp.nodes) {
        const ir::Node& n = g.node(id);
        const ir::Value self = ir::Value::node(id);
        if (n.op == ir::Op::Expand) {
          // The input broadcasts into the iteration space: reading it with its strides is the
          // expand. A group input's strides came from its own shape; an in-group value already
          // has the iteration shape.
          const ir::Value src = n.inputs[0];
          val[self] = input_index.count(src) ? get(src) : val.at(src);
          continue;
        }
        const auto op = *ir::as_elementwise(n.op);
        std::vector<llvm::Value*> xs;
        for (ir::Value v : n.inputs) xs.push_back(get(v));
        const DType in = op == ir::ElementwiseOp::Where ? g.type(n.inputs[1]).dtype
                                                         : g.type(n.inputs[0]).dtype;
        val[self] = emit_elementwise(b, m, op, xs, in, n.types[0].dtype);
      }
      for (size_t k = 0; k < nout; ++k) {
        const ir::Value v = grp.outputs[k];
        const DType dt = g.type(v).dtype;
        llvm::Value* x = get(v);
        if (dt == DType::Bool) x = b.CreateZExt(x, b.getInt8Ty());
        llvm::Value* p = b.CreateInBoundsGEP(storage_type(b, dt), body->getArg(static_cast<unsigned>(nin + k)),
                                             b.CreateAdd(out_base, i));
        b.CreateStore(x, p);
      }
    });
  });
  b.CreateRetVoid();

  // The exported entry point: void name(ptr buffers, i64 row_begin, i64 row_end).
  auto* entry_ty = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getInt64Ty(), b.getInt64Ty()}, false);
  auto* entry = llvm::Function::Create(entry_ty, llvm::Function::ExternalLinkage, name, m);
  b.SetInsertPoint(llvm::BasicBlock::Create(c, "entry", entry));
  std::vector<llvm::Value*> args;
  for (size_t k = 0; k < nin + nout; ++k)
    args.push_back(b.CreateLoad(b.getPtrTy(), b.CreateConstInBoundsGEP1_64(b.getPtrTy(), entry->getArg(0), k)));
  args.push_back(entry->getArg(1));
  args.push_back(entry->getArg(2));
  b.CreateCall(body, args);
  b.CreateRetVoid();
  return plan.shape;
}

}  // namespace lt::codegen
