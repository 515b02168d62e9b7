// Loop kernels: the plan (codegen/loop_nest.h) emitted as LLVM IR, one function per kernel that
// runs a range of rows; the innermost loop is the one LLVM vectorizes.
#include "codegen/loop_emitter.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <limits>
#include <map>

#include "codegen/scalar_emitter.h"
#include "ir/error.h"
#include "ir/loop_kernel.h"

namespace lt::codegen {
namespace {

using ir::LoopRole;
using ir::Value;

class Emitter {
 public:
  Emitter(llvm::Module& m, const ir::Graph& g, const ir::FusionGroup& grp,
          std::span<const int> written_over, bool keep_outer_dim)
      : m_(m), c_(m.getContext()), b_(c_), g_(g), grp_(grp),
        written_over_(written_over.begin(), written_over.end()),
        p_(plan_loop_nest(g, grp, keep_outer_dim)) {}

  LoopShape emit(const std::string& name);

 private:
  llvm::Function* declare_body(const std::string& name);
  void emit_row(llvm::Value* row);
  std::vector<int64_t> inner_segments(int d) const;
  bool vector_inner() const;
  void emit_nest(size_t k, llvm::Value* block_begin, llvm::Value* block_end);
  void emit_point();
  llvm::Value* address(const Access& a);
  llvm::Value* in_bounds(const Access& a);
  llvm::Value* load(const Read& r);
  llvm::Value* load_at(DType t, int buffer, llvm::Value* offset, bool inbounds);
  llvm::Value* guarded_load(DType t, const Access& a, llvm::Value* ok, llvm::Value* otherwise);
  llvm::Value* get(Value v);
  llvm::Value* constant(DType t, double v) { return codegen::constant(b_, t, v); }
  llvm::Value* identity(const Reduction& r) {
    return reduction_identity(b_, r.op, g_.type(g_.node(r.node).inputs[0]).dtype);
  }
  llvm::Value* mean_scale(const Reduction& r);
  llvm::Value* base(int buffer);
  llvm::Value* pointer(int buffer, DType t, llvm::Value* offset);
  void store(int buffer, DType t, llvm::Value* offset, llvm::Value* x);
  void emit_entry(const std::string& name, llvm::Function* body);

  llvm::Module& m_;
  llvm::LLVMContext& c_;
  Builder b_;
  const ir::Graph& g_;
  const ir::FusionGroup& grp_;
  std::vector<int> written_over_;
  LoopNest p_;
  struct Segment {
    int dim = -1;  // the innermost loop's dim while it runs over [lo, hi); -1: none
    int64_t lo = 0, hi = 0;
  } segment_;
  static constexpr size_t kMaxSegments = 8;

  llvm::Function* body_ = nullptr;
  std::vector<llvm::Value*> idx_;                // per collapsed dim, while emitting
  std::vector<llvm::AllocaInst*> acc_;           // case "reduced innermost": accumulators
  std::map<Value, llvm::Value*> val_;            // per iteration point
  bool vector_inner_ = false;                    // the loops around the innermost stay scalar
};

/// for (iv = begin; iv < end; ++iv) body(iv), as a canonical loop LLVM can vectorize, or may
/// not where `scalar` (a loop around the one to vectorize).
template <class Body>
void counted_loop(Builder& b, llvm::Value* begin, llvm::Value* end, const char* name, Body body,
                  bool scalar = false) {
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
  llvm::BranchInst* latch = b.CreateBr(head);
  if (scalar) {
    llvm::Metadata* width1[] = {llvm::MDString::get(c, "llvm.loop.vectorize.width"),
                                llvm::ConstantAsMetadata::get(b.getInt32(1))};
    llvm::MDNode* id = llvm::MDNode::getDistinct(c, {nullptr, llvm::MDNode::get(c, width1)});
    id->replaceOperandWith(0, id);
    latch->setMetadata(llvm::LLVMContext::MD_loop, id);
  }
  b.SetInsertPoint(exit);
}

llvm::Value* Emitter::address(const Access& a) {
  llvm::Value* off = b_.getInt64(a.offset);
  for (size_t d = 0; d < a.stride.size(); ++d)
    if (a.stride[d] != 0)
      off = b_.CreateAdd(off, b_.CreateMul(idx_[d], b_.getInt64(a.stride[d])));
  return off;
}

// Null where the access holds everywhere.
llvm::Value* Emitter::in_bounds(const Access& a) {
  llvm::Value* ok = nullptr;
  auto both = [&](llvm::Value* x) { ok = ok ? b_.CreateAnd(ok, x) : x; };
  // lo <= idx < hi as one unsigned compare, idx - lo < hi - lo (two compares and an `and` of a
  // loop index become a switch in SimplifyCFG, which the vectorizer gives up on). Within a
  // segment of the innermost loop, its bounds are known: inside or outside the whole segment.
  for (size_t d = 0; d < a.lo.size(); ++d) {
    if (a.lo[d] == 0 && a.hi[d] == p_.nest.dims[d]) continue;
    if (segment_.dim == static_cast<int>(d)) {
      if (segment_.lo >= a.lo[d] && segment_.hi <= a.hi[d]) continue;
      if (segment_.hi <= a.lo[d] || segment_.lo >= a.hi[d]) return b_.getFalse();
    }
    both(b_.CreateICmpULT(b_.CreateSub(idx_[d], b_.getInt64(a.lo[d])),
                          b_.getInt64(a.hi[d] - a.lo[d])));
  }
  return ok;
}

// An output written over an input goes through the input's pointer: a load and a store of one
// element then share their address, which LLVM orders and vectorizes without a runtime check.
llvm::Value* Emitter::base(int buffer) {
  const int out = buffer - static_cast<int>(grp_.inputs.size());
  if (out >= 0 && out < static_cast<int>(written_over_.size()) && written_over_[out] >= 0)
    buffer = written_over_[out];
  return body_->getArg(static_cast<unsigned>(buffer));
}

llvm::Value* Emitter::pointer(int buffer, DType t, llvm::Value* offset) {
  return b_.CreateInBoundsGEP(storage_type(b_, t), base(buffer), offset);
}

void Emitter::store(int buffer, DType t, llvm::Value* offset, llvm::Value* x) {
  if (t == DType::Bool) x = b_.CreateZExt(x, b_.getInt8Ty());
  b_.CreateStore(x, pointer(buffer, t, offset));
}

// Pieces from the last to the first, each taking over where its bounds hold. A bounded load is
// a branch around the load, which the vectorizer turns into a masked load: the addresses stay
// consecutive (a select of the address would make them a gather), and none outside the
// buffer is read.
llvm::Value* Emitter::load(const Read& r) {
  llvm::Value* x = nullptr;
  for (size_t i = r.pieces.size(); i-- > 0;) {
    const Access& a = r.pieces[i];
    llvm::Value* ok = in_bounds(a);
    if (a.buffer < 0) {
      llvm::Value* y = constant(r.dtype, a.fill);
      x = x && ok ? b_.CreateSelect(ok, y, x) : y;
    } else if (!ok) {
      x = load_at(r.dtype, a.buffer, address(a), /*inbounds=*/true);
    } else {
      x = guarded_load(r.dtype, a, ok, x ? x : constant(r.dtype, 0));
    }
  }
  return x ? x : constant(r.dtype, 0);  // no pieces: an empty iteration space
}

llvm::Value* Emitter::load_at(DType t, int buffer, llvm::Value* offset, bool inbounds) {
  llvm::Type* st = storage_type(b_, t);
  llvm::Value* from = base(buffer);
  llvm::Value* p =
      inbounds ? b_.CreateInBoundsGEP(st, from, offset) : b_.CreateGEP(st, from, offset);
  llvm::Value* y = b_.CreateLoad(st, p);
  return t == DType::Bool ? b_.CreateICmpNE(y, b_.getInt8(0)) : y;
}

// ok ? buffer[address(a)] : otherwise. The address is formed only under `ok` (no inbounds: the
// vectorizer may compute it for masked-off lanes too).
llvm::Value* Emitter::guarded_load(DType t, const Access& a, llvm::Value* ok,
                                   llvm::Value* otherwise) {
  llvm::Function* f = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* from = b_.GetInsertBlock();
  llvm::BasicBlock* then = llvm::BasicBlock::Create(c_, "piece", f);
  llvm::BasicBlock* join = llvm::BasicBlock::Create(c_, "piece.join", f);
  b_.CreateCondBr(ok, then, join);
  b_.SetInsertPoint(then);
  llvm::Value* y = load_at(t, a.buffer, address(a), /*inbounds=*/false);
  llvm::BasicBlock* then_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  llvm::PHINode* phi = b_.CreatePHI(y->getType(), 2);
  phi->addIncoming(y, then_end);
  phi->addIncoming(otherwise, from);
  return phi;
}

llvm::Value* Emitter::get(Value v) {
  if (auto it = val_.find(v); it != val_.end()) return it->second;
  return val_[v] = load(p_.reads.at(v));
}

// Mean: the sum times 1/count, computed as the eager kernel does (the reciprocal in the dtype).
llvm::Value* Emitter::mean_scale(const Reduction& r) {
  const DType t = g_.type(g_.node(r.node).inputs[0]).dtype;
  const double count = static_cast<double>(g_.type(g_.node(r.node).inputs[0]).numel() /
                                           std::max<int64_t>(1, g_.node(r.node).types[0].numel()));
  return constant(t, t == DType::F32 ? double(1.0f / static_cast<float>(count)) : 1.0 / count);
}

// One iteration point: the nodes in order, per-element stores, reduction steps.
void Emitter::emit_point() {
  val_.clear();
  const bool accumulate_in_output = p_.nest.block_dim >= 0;
  for (int id : grp_.nodes) {
    const ir::Node& n = g_.node(id);
    const Value self = Value::node(id);
    switch (p_.role.at(id)) {
      case LoopRole::Compute: {
        if (n.op == ir::Op::Expand) {  // a no-op expand of a computed value
          val_[self] = get(n.inputs[0]);
          break;
        }
        const auto op = *ir::as_elementwise(n.op);
        std::vector<llvm::Value*> xs;
        for (Value v : n.inputs) xs.push_back(get(v));
        const DType in = g_.type(n.inputs[ir::data_operand(n.op)]).dtype;
        val_[self] = emit_elementwise(b_, m_, op, xs, in, n.types[0].dtype);
        break;
      }
      case LoopRole::Alias:
        if (auto it = val_.find(n.inputs[0]); it != val_.end()) val_[self] = it->second;
        break;
      case LoopRole::Reduction: {
        const auto it = std::find_if(p_.reductions.begin(), p_.reductions.end(),
                                     [&](const Reduction& r) { return r.node == id; });
        if (it == p_.reductions.end()) break;  // nothing reads it
        const size_t k = static_cast<size_t>(it - p_.reductions.begin());
        const DType t = n.types[0].dtype;
        llvm::Value* x = get(n.inputs[0]);
        if (accumulate_in_output) {
          llvm::Value* p = pointer(it->out_buffers[0], t, address(it->out));
          llvm::Value* acc = b_.CreateLoad(register_type(b_, t), p);
          b_.CreateStore(reduction_step(b_, it->op, acc, x, false), p);
        } else {
          llvm::Value* acc = b_.CreateLoad(register_type(b_, t), acc_[k]);
          b_.CreateStore(reduction_step(b_, it->op, acc, x, true), acc_[k]);
        }
        break;
      }
      case LoopRole::FoldedView:
      case LoopRole::Invalid: break;  // read where used
    }
  }
  for (auto& [v, a] : p_.stores) store(a.buffer, g_.type(v).dtype, address(a), get(v));
}

// Where the pieces' bounds cut the innermost dim: the innermost loop runs once per segment, and
// inside a segment every bound on that dim is known (in_bounds folds it), so a pad or a concat
// along the innermost dim reads contiguously instead of through masks or gathers. Too many
// segments (a concat of many pieces) would multiply the code: then one loop checks each index.
std::vector<int64_t> Emitter::inner_segments(int d) const {
  std::vector<int64_t> cuts{0, p_.nest.dims[d]};
  for (const auto& [v, r] : p_.reads)
    for (const Access& a : r.pieces) {
      cuts.push_back(a.lo[d]);
      cuts.push_back(a.hi[d]);
    }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  if (cuts.size() > kMaxSegments + 1) return {0, p_.nest.dims[d]};
  return cuts;
}

// A short innermost loop (16 channels of a channels-last [N,H,W,16] activation, read with
// per-channel operands) is unrolled fully by LLVM, and its loop vectorizer then takes the loop
// around it: 16-lane gathers and scatters with a 64-byte stride, far slower than the unrolled
// body's 16 contiguous floats as one vector. Where every access runs along the innermost dim with
// stride 0 or 1, the loops around it stay scalar (SLP vectorizes the unrolled body; a longer
// loop, not unrolled, is vectorized itself). A strided access (a transpose) or a loop shorter
// than 8 leaves the choice to LLVM: the loop around may then be the contiguous one.
bool Emitter::vector_inner() const {
  if (p_.nest.seq.empty()) return false;
  const int d = p_.nest.seq.back();
  if (d == p_.nest.block_dim || p_.nest.dims[d] < 8) return false;
  const auto along = [&](const Access& a) { return a.stride[d] == 0 || a.stride[d] == 1; };
  for (const auto& [v, r] : p_.reads)
    if (!std::all_of(r.pieces.begin(), r.pieces.end(), along)) return false;
  for (const auto& [v, a] : p_.stores)
    if (!along(a)) return false;
  return std::all_of(p_.reductions.begin(), p_.reductions.end(),
                     [&](const Reduction& r) { return along(r.out); });
}

void Emitter::emit_nest(size_t k, llvm::Value* block_begin, llvm::Value* block_end) {
  if (k == p_.nest.seq.size()) return emit_point();
  const int d = p_.nest.seq[k];
  const bool blocked = d == p_.nest.block_dim;
  const bool innermost = k + 1 == p_.nest.seq.size();
  llvm::Value* begin = blocked ? block_begin : b_.getInt64(0);
  llvm::Value* end = blocked ? block_end : b_.getInt64(p_.nest.dims[d]);
  auto body = [&](llvm::Value* iv) {
    idx_[d] = iv;
    emit_nest(k + 1, block_begin, block_end);
  };
  if (!innermost) return counted_loop(b_, begin, end, "r", body, vector_inner_);
  const std::vector<int64_t> cuts = inner_segments(d);
  for (size_t s = 0; s + 1 < cuts.size(); ++s) {
    segment_ = {d, cuts[s], cuts[s + 1]};
    llvm::Value* lo = b_.getInt64(cuts[s]);
    llvm::Value* hi = b_.getInt64(cuts[s + 1]);
    if (blocked) {  // the segment within this row's block
      lo = b_.CreateSelect(b_.CreateICmpSGT(begin, lo), begin, lo);
      hi = b_.CreateSelect(b_.CreateICmpSLT(end, hi), end, hi);
    }
    counted_loop(b_, lo, hi, "i", body);
  }
  segment_ = {};
}

// One row: its indices, accumulators set up, the loops, the reductions written.
void Emitter::emit_row(llvm::Value* row) {
  Nest& ne = p_.nest;
  llvm::Value* rem = row;
  llvm::Value* block_begin = nullptr;
  llvm::Value* block_end = nullptr;
  if (ne.block_dim >= 0) {
    llvm::Value* blk = b_.CreateSRem(rem, b_.getInt64(ne.blocks));
    rem = b_.CreateSDiv(rem, b_.getInt64(ne.blocks));
    block_begin = b_.CreateMul(blk, b_.getInt64(ne.block));
    llvm::Value* end = b_.CreateAdd(block_begin, b_.getInt64(ne.block));
    llvm::Value* dim = b_.getInt64(ne.dims[ne.block_dim]);
    block_end = b_.CreateSelect(b_.CreateICmpSLT(end, dim), end, dim);
  }
  for (size_t k = ne.par.size(); k-- > 0;) {
    const int d = ne.par[k];
    llvm::Value* dim = b_.getInt64(ne.dims[d]);
    idx_[d] = k == 0 ? rem : b_.CreateSRem(rem, dim);
    if (k > 0) rem = b_.CreateSDiv(rem, dim);
  }
  // Reduced dims do not move a reduction's output: index 0 stands for them outside the loops.
  for (int d : ne.seq) idx_[d] = b_.getInt64(0);
  if (ne.block_dim >= 0) {
    // Accumulate into the output rows of this block: set them first, finish them after.
    auto over_block = [&](auto each) {
      counted_loop(b_, block_begin, block_end, "j", [&](llvm::Value* j) {
        idx_[ne.block_dim] = j;
        for (Reduction& r : p_.reductions) each(r);
      });
    };
    over_block([&](Reduction& r) {
      store(r.out_buffers[0], g_.node(r.node).types[0].dtype, address(r.out), identity(r));
    });
    emit_nest(0, block_begin, block_end);
    over_block([&](Reduction& r) {
      const DType t = g_.node(r.node).types[0].dtype;
      llvm::Value* off = address(r.out);
      llvm::Value* x = b_.CreateLoad(register_type(b_, t), pointer(r.out_buffers[0], t, off));
      if (r.op == ir::ReduceOp::Mean) {
        x = b_.CreateFMul(x, mean_scale(r));
        b_.CreateStore(x, pointer(r.out_buffers[0], t, off));
      }
      for (size_t k = 1; k < r.out_buffers.size(); ++k) store(r.out_buffers[k], t, off, x);
    });
    return;
  }
  for (size_t k = 0; k < p_.reductions.size(); ++k)
    b_.CreateStore(identity(p_.reductions[k]), acc_[k]);
  emit_nest(0, nullptr, nullptr);
  for (int d : ne.seq) idx_[d] = b_.getInt64(0);
  for (size_t k = 0; k < p_.reductions.size(); ++k) {
    const Reduction& r = p_.reductions[k];
    const DType t = g_.node(r.node).types[0].dtype;
    llvm::Value* x = b_.CreateLoad(register_type(b_, t), acc_[k]);
    if (r.op == ir::ReduceOp::Mean) x = b_.CreateFMul(x, mean_scale(r));
    llvm::Value* off = address(r.out);
    for (int buffer : r.out_buffers) store(buffer, t, off, x);
  }
}

// The body takes one noalias pointer per buffer so the vectorizer needs no runtime checks (an
// output written over an input leaves its own pointer unused: base()); the exported wrapper
// unpacks the buffer table and is what the runtime calls.
llvm::Function* Emitter::declare_body(const std::string& name) {
  const size_t nbuf = grp_.inputs.size() + grp_.outputs.size();
  std::vector<llvm::Type*> params(nbuf, b_.getPtrTy());
  params.push_back(b_.getInt64Ty());
  params.push_back(b_.getInt64Ty());
  auto* ty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  auto* f = llvm::Function::Create(ty, llvm::Function::InternalLinkage, name + ".body", m_);
  f->addFnAttr(llvm::Attribute::AlwaysInline);
  for (size_t i = 0; i < nbuf; ++i) {
    f->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
    f->addParamAttr(static_cast<unsigned>(i),
                    llvm::Attribute::getWithAlignment(c_, llvm::Align(64)));
  }
  return f;
}

void Emitter::emit_entry(const std::string& name, llvm::Function* body) {
  const size_t nbuf = grp_.inputs.size() + grp_.outputs.size();
  auto* ty = llvm::FunctionType::get(b_.getVoidTy(),
                                     {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty()}, false);
  auto* entry = llvm::Function::Create(ty, llvm::Function::ExternalLinkage, name, m_);
  b_.SetInsertPoint(llvm::BasicBlock::Create(c_, "entry", entry));
  std::vector<llvm::Value*> args;
  for (size_t k = 0; k < nbuf; ++k)
    args.push_back(b_.CreateLoad(
        b_.getPtrTy(), b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), entry->getArg(0), k)));
  args.push_back(entry->getArg(1));
  args.push_back(entry->getArg(2));
  b_.CreateCall(body, args);
  b_.CreateRetVoid();
}

LoopShape Emitter::emit(const std::string& name) {
  body_ = declare_body(name);
  b_.SetInsertPoint(llvm::BasicBlock::Create(c_, "entry", body_));
  const size_t nbuf = grp_.inputs.size() + grp_.outputs.size();
  for (const Reduction& r : p_.reductions)
    acc_.push_back(b_.CreateAlloca(register_type(b_, g_.node(r.node).types[0].dtype)));
  idx_.assign(p_.nest.dims.size(), nullptr);
  vector_inner_ = vector_inner();
  if (numel(grp_.shape) > 0) {
    counted_loop(b_, body_->getArg(static_cast<unsigned>(nbuf)),
                 body_->getArg(static_cast<unsigned>(nbuf + 1)), "row",
                 [&](llvm::Value* row) { emit_row(row); }, vector_inner_);
  }
  b_.CreateRetVoid();
  emit_entry(name, body_);
  return p_.nest.shape;
}

}  // namespace

bool can_emit_loop(const ir::Graph& g, const ir::FusionGroup& grp, const ir::KernelRules& rules) {
  // Values of every dtype are loaded, moved through views and stored as they are (bf16 and f16
  // too); which ops may compute on them is the rules' question (KernelRules::computes: casts
  // only, for those).
  const std::vector<LoopRole> roles = ir::loop_roles(g, grp.nodes);
  for (size_t i = 0; i < grp.nodes.size(); ++i) {
    const ir::Node& n = g.node(grp.nodes[i]);
    switch (roles[i]) {
      case LoopRole::Invalid: return false;
      case LoopRole::FoldedView:
      case LoopRole::Alias: continue;
      case LoopRole::Reduction:
        if (!rules.loop_reduction(g, grp.nodes[i])) return false;
        continue;
      case LoopRole::Compute: break;
    }
    if (n.op != ir::Op::Expand && !rules.computes(g, grp.nodes[i])) return false;
  }
  return true;
}

LoopShape emit_loop_kernel(llvm::Module& m, const ir::Graph& g, const ir::FusionGroup& grp,
                           const std::string& name, std::span<const int> written_over,
                           bool keep_outer_dim) {
  return Emitter(m, g, grp, written_over, keep_outer_dim).emit(name);
}

}  // namespace lt::codegen
