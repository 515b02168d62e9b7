// Loop kernels. Every access of the kernel (a piece of an input's index map, a store of an
// output, a reduction's accumulator) is an affine function of the iteration index, with bounds
// where a pad or concat decides between pieces. The iteration shape is collapsed where every
// access walks two dims as one run, ordered (kept dims, then reduced dims; or, when the innermost
// dim is kept, reduced dims around it) and split into rows for the thread pool; the innermost
// loop is the one LLVM vectorizes.
#include "codegen/loop_emitter.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <limits>
#include <map>

#include "codegen/scalar_emitter.h"
#include "ir/error.h"

namespace lt::codegen {
namespace {

// Elementwise kernels with fewer rows than this get blocks of the innermost dim as rows.
constexpr int64_t kMinElementwiseRows = 16;
constexpr int64_t kElementwiseBlock = 16384;

using ir::LoopRole;
using ir::Value;

/// An affine access over the iteration dims: buffer[offset + sum(stride[d] * idx[d])], valid
/// where lo[d] <= idx[d] < hi[d]; a constant (padding) when buffer < 0.
struct Access {
  int buffer = -1;
  double fill = 0;
  int64_t offset = 0;
  std::vector<int64_t> stride, lo, hi;
};

/// A value read through an index map: the first piece whose bounds hold.
struct Read {
  DType dtype = DType::F32;
  std::vector<Access> pieces;
};

struct Reduction {
  int node = -1;
  ir::ReduceOp op{};
  std::vector<int> out_buffers;  // the reduction and its aliases that the kernel writes
  Access out;                    // where the output element of an iteration index lies
};

/// The kernel's shape of work.
struct Nest {
  std::vector<int64_t> dims;   // collapsed iteration dims
  std::vector<char> reduced;   // per dim
  std::vector<int> par;        // dims decomposed from the row index, outer first
  std::vector<int> seq;        // dims looped inside a row, outer first
  int block_dim = -1;          // >= 0: this (last seq) dim runs in blocks of `block`, one per row
  int64_t block = 0, blocks = 1;
  LoopShape shape;
};

class Emitter {
 public:
  Emitter(llvm::Module& m, const ir::Graph& g, const ir::FusionGroup& grp, bool noalias,
          bool keep_outer_dim)
      : m_(m), c_(m.getContext()), b_(c_), g_(g), grp_(grp), noalias_(noalias),
        keep_outer_dim_(keep_outer_dim) {}

  LoopShape emit(const std::string& name);

 private:
  bool outside(Value v) const { return v.is_param() || !role_.count(v.def); }
  LoopRole role(Value v) const { return role_.at(v.def); }
  void collect();
  Access dense_store(int buffer) const;
  void collapse();
  void order_loops();
  llvm::Function* declare_body(const std::string& name);
  void emit_row(llvm::Value* row);
  std::vector<int64_t> inner_segments(int d) const;
  void emit_nest(size_t k, llvm::Value* block_begin, llvm::Value* block_end);
  void emit_point();
  llvm::Value* address(const Access& a);
  llvm::Value* in_bounds(const Access& a);
  llvm::Value* load(const Read& r);
  llvm::Value* load_at(DType t, int buffer, llvm::Value* offset, bool inbounds);
  llvm::Value* guarded_load(DType t, const Access& a, llvm::Value* ok, llvm::Value* otherwise);
  llvm::Value* get(Value v);
  llvm::Value* constant(DType t, double v);
  llvm::Value* identity(const Reduction& r);
  llvm::Value* step(const Reduction& r, llvm::Value* acc, llvm::Value* x, bool reassoc);
  llvm::Value* mean_scale(const Reduction& r);
  llvm::Value* pointer(int buffer, DType t, llvm::Value* offset);
  void store(int buffer, DType t, llvm::Value* offset, llvm::Value* x);
  void emit_entry(const std::string& name, llvm::Function* body);

  llvm::Module& m_;
  llvm::LLVMContext& c_;
  Builder b_;
  const ir::Graph& g_;
  const ir::FusionGroup& grp_;
  bool noalias_;
  bool keep_outer_dim_;
  bool outer_kept_ = false;  // keep_outer_dim_ and dim 0 (of size > 1) is collapsed dim 0

  std::map<int, LoopRole> role_;                 // by node id
  std::map<Value, int> input_buffer_;            // group input -> argument
  std::map<Value, Read> reads_;                  // values read through index maps
  std::vector<std::pair<Value, Access>> stores_; // per-element outputs
  std::vector<Reduction> reductions_;
  std::vector<std::vector<int64_t>*> strides_;   // every access's strides, for collapsing
  std::vector<std::vector<int64_t>*> los_, his_;
  Nest nest_;
  struct Segment {
    int dim = -1;  // the innermost loop's dim while it runs over [lo, hi); -1: none
    int64_t lo = 0, hi = 0;
  } segment_;
  static constexpr size_t kMaxSegments = 8;

  llvm::Function* body_ = nullptr;
  std::vector<llvm::Value*> idx_;                // per collapsed dim, while emitting
  std::vector<llvm::AllocaInst*> acc_;           // case "reduced innermost": accumulators
  std::map<Value, llvm::Value*> val_;            // per iteration point
};

Access Emitter::dense_store(int buffer) const {
  Access a;
  a.buffer = buffer;
  a.stride = contiguous_strides(grp_.shape);
  a.lo.assign(grp_.shape.size(), 0);
  a.hi = grp_.shape;
  return a;
}

// Reads through index maps, stores and reductions, over the uncollapsed iteration shape.
void Emitter::collect() {
  const std::vector<LoopRole> roles = ir::loop_roles(g_, grp_.nodes);
  for (size_t i = 0; i < grp_.nodes.size(); ++i) role_[grp_.nodes[i]] = roles[i];
  for (size_t k = 0; k < grp_.inputs.size(); ++k)
    input_buffer_[grp_.inputs[k]] = static_cast<int>(k);
  const Shape& iter = grp_.shape;
  auto add_read = [&](Value v) {
    if (reads_.count(v) || (!outside(v) && role(v) != LoopRole::FoldedView)) return;
    const auto map = ir::read_map(g_, v, iter, [&](Value x) { return outside(x); });
    LT_CHECK(map.has_value(), "loop kernel reads {} through views that do not fold",
             ir::value_name(g_, v));
    Read r;
    r.dtype = g_.type(v).dtype;
    for (const ir::ReadPiece& p : map->pieces)
      r.pieces.push_back({p.constant ? -1 : input_buffer_.at(p.source), p.fill, p.offset, p.stride,
                          p.lo, p.hi});
    reads_[v] = std::move(r);
  };
  for (int id : grp_.nodes) {
    const LoopRole r = role_.at(id);
    if (r == LoopRole::Compute || r == LoopRole::Reduction)
      for (Value v : g_.node(id).inputs) add_read(v);
  }
  // Outputs: per element, or a reduction (or an alias of one) written once per kept index.
  auto reduction_of = [&](Value v) {
    while (role(v) == LoopRole::Alias) v = g_.node(v.def).inputs[0];
    return role(v) == LoopRole::Reduction ? v.def : -1;
  };
  const size_t nin = grp_.inputs.size();
  for (size_t k = 0; k < grp_.outputs.size(); ++k) {
    const Value v = grp_.outputs[k];
    const int buffer = static_cast<int>(nin + k);
    const int red = reduction_of(v);
    if (red < 0) {
      if (role(v) == LoopRole::FoldedView) add_read(v);
      stores_.push_back({v, dense_store(buffer)});
      continue;
    }
    auto it = std::find_if(reductions_.begin(), reductions_.end(),
                           [&](const Reduction& x) { return x.node == red; });
    if (it == reductions_.end()) {
      Reduction x;
      x.node = red;
      x.op = *ir::as_reduce(g_.node(red).op);
      const std::vector<int64_t> axes = ir::reduced_axes(g_, red);
      x.out = dense_store(-1);
      int64_t s = 1;
      for (size_t d = iter.size(); d-- > 0;) {
        const bool reduced = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end();
        x.out.stride[d] = reduced ? 0 : s;
        if (!reduced) s *= iter[d];
      }
      reductions_.push_back(std::move(x));
      it = reductions_.end() - 1;
    }
    it->out_buffers.push_back(buffer);
  }
  for (auto& [v, r] : reads_)
    for (Access& a : r.pieces) {
      strides_.push_back(&a.stride);
      los_.push_back(&a.lo);
      his_.push_back(&a.hi);
    }
  for (auto& [v, a] : stores_) {
    strides_.push_back(&a.stride);
    los_.push_back(&a.lo);
    his_.push_back(&a.hi);
  }
  for (Reduction& r : reductions_) {
    strides_.push_back(&r.out.stride);
    los_.push_back(&r.out.lo);
    his_.push_back(&r.out.hi);
  }
}

// Drops dims of size 1 and merges neighbours that every access walks as one run (same role, no
// bounds, stride[d] = stride[d+1] * dim[d+1]).
void Emitter::collapse() {
  const Shape& iter = grp_.shape;
  std::vector<char> reduced(iter.size(), 0);
  for (int id : grp_.nodes)
    if (role_.at(id) == LoopRole::Reduction) {
      for (int64_t d : ir::reduced_axes(g_, id)) reduced[d] = 1;
      break;
    }
  const size_t n = strides_.size();
  std::vector<std::vector<int64_t>> st(n), lo(n), hi(n);
  Nest& ne = nest_;
  for (size_t d = 0; d < iter.size(); ++d) {
    if (iter[d] == 1) continue;
    if (keep_outer_dim_ && d == 0) outer_kept_ = true;
    bool merge = !ne.dims.empty() && ne.reduced.back() == reduced[d] &&
                 !(outer_kept_ && ne.dims.size() == 1);
    for (size_t k = 0; merge && k < n; ++k) {
      const auto& s = *strides_[k];
      merge = st[k].back() == s[d] * iter[d] && lo[k].back() == 0 &&
              hi[k].back() == ne.dims.back() && (*los_[k])[d] == 0 && (*his_[k])[d] == iter[d];
    }
    if (merge) {
      ne.dims.back() *= iter[d];
      for (size_t k = 0; k < n; ++k) {
        st[k].back() = (*strides_[k])[d];
        hi[k].back() = ne.dims.back();
      }
    } else {
      ne.dims.push_back(iter[d]);
      ne.reduced.push_back(reduced[d]);
      for (size_t k = 0; k < n; ++k) {
        st[k].push_back((*strides_[k])[d]);
        lo[k].push_back((*los_[k])[d]);
        hi[k].push_back((*his_[k])[d]);
      }
    }
  }
  for (size_t k = 0; k < n; ++k) {
    *strides_[k] = std::move(st[k]);
    *los_[k] = std::move(lo[k]);
    *his_[k] = std::move(hi[k]);
  }
}

// Rows for the thread pool and loops inside a row. Without reductions: rows of the innermost
// dim. Innermost dim reduced: one row per kept index, the reduced dims inside (the innermost one
// vectorized through its accumulator). Innermost dim kept: rows are kept indices of the outer
// kept dims times blocks of the innermost dim, and each row runs the reduced dims around a
// vectorized loop over its block, accumulating into the output (a bias gradient: blocks of
// columns, summing down the batch).
void Emitter::order_loops() {
  Nest& ne = nest_;
  const int nd = static_cast<int>(ne.dims.size());
  ne.shape = {1, 1};
  if (nd == 0) return;
  const bool reducing = !reductions_.empty();
  if (!reducing) {
    int64_t rows = 1;
    for (int d = 0; d + 1 < nd; ++d) {
      ne.par.push_back(d);
      rows *= ne.dims[d];
    }
    ne.seq.push_back(nd - 1);
    // A few long rows (a collapsed 1-D update of a whole weight matrix is one row) would leave
    // the thread pool idle: rows become blocks of kElementwiseBlock elements of the innermost
    // dim instead (a multiple of 16: whole vectors and cache lines).
    if (rows < kMinElementwiseRows && ne.dims[nd - 1] >= 2 * kElementwiseBlock) {
      ne.block_dim = nd - 1;
      ne.block = kElementwiseBlock;
      ne.blocks = (ne.dims[nd - 1] + ne.block - 1) / ne.block;
    }
  } else if (ne.reduced[nd - 1]) {
    for (int d = 0; d < nd; ++d) (ne.reduced[d] ? ne.seq : ne.par).push_back(d);
  } else {
    int64_t reduced_count = 1;
    for (int d = 0; d + 1 < nd; ++d) {
      (ne.reduced[d] ? ne.seq : ne.par).push_back(d);
      if (ne.reduced[d]) reduced_count *= ne.dims[d];
    }
    ne.seq.push_back(nd - 1);
    ne.block_dim = nd - 1;
    // Blocks of about 16k elements of work, a multiple of 16 columns, and at least 256 columns:
    // each row of a block is then a run of whole cache lines that the prefetcher follows (blocks
    // of one line per row ran 2-5x slower than one block on [4096,256]).
    const int64_t want = (16384 / std::max<int64_t>(1, reduced_count) + 15) / 16 * 16;
    ne.block = std::clamp<int64_t>(std::max<int64_t>(want, 256), 16, ne.dims[nd - 1]);
    ne.blocks = (ne.dims[nd - 1] + ne.block - 1) / ne.block;
  }
  for (int d : ne.par) ne.shape.rows *= ne.dims[d];
  ne.shape.rows *= ne.blocks;
  for (int d : ne.seq) ne.shape.inner *= d == ne.block_dim ? ne.block : ne.dims[d];
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
    if (a.lo[d] == 0 && a.hi[d] == nest_.dims[d]) continue;
    if (segment_.dim == static_cast<int>(d)) {
      if (segment_.lo >= a.lo[d] && segment_.hi <= a.hi[d]) continue;
      if (segment_.hi <= a.lo[d] || segment_.lo >= a.hi[d]) return b_.getFalse();
    }
    both(b_.CreateICmpULT(b_.CreateSub(idx_[d], b_.getInt64(a.lo[d])),
                          b_.getInt64(a.hi[d] - a.lo[d])));
  }
  return ok;
}

llvm::Value* Emitter::constant(DType t, double v) {
  if (t == DType::Bool) return b_.getInt1(v != 0);
  llvm::Type* rt = register_type(b_, t);
  if (is_float(t)) return llvm::ConstantFP::get(rt, t == DType::F32 ? double(float(v)) : v);
  return llvm::ConstantInt::get(rt, static_cast<uint64_t>(static_cast<int64_t>(v)), true);
}

llvm::Value* Emitter::pointer(int buffer, DType t, llvm::Value* offset) {
  llvm::Value* base = body_->getArg(static_cast<unsigned>(buffer));
  return b_.CreateInBoundsGEP(storage_type(b_, t), base, offset);
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
  llvm::Value* base = body_->getArg(static_cast<unsigned>(buffer));
  llvm::Value* p =
      inbounds ? b_.CreateInBoundsGEP(st, base, offset) : b_.CreateGEP(st, base, offset);
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
  return val_[v] = load(reads_.at(v));
}

llvm::Value* Emitter::identity(const Reduction& r) {
  const DType t = g_.type(g_.node(r.node).inputs[0]).dtype;
  auto limit = [&](bool lowest) -> double {
    const double m = t == DType::F32 ? std::numeric_limits<float>::max()
                                     : std::numeric_limits<double>::max();
    return lowest ? -m : m;
  };
  switch (r.op) {
    case ir::ReduceOp::Sum:
    case ir::ReduceOp::Mean: return constant(t, 0);
    case ir::ReduceOp::ReduceMax:
    case ir::ReduceOp::ReduceMin: {
      const bool max = r.op == ir::ReduceOp::ReduceMax;
      if (is_float(t)) return constant(t, limit(max));
      const unsigned bits = register_type(b_, t)->getIntegerBitWidth();
      return b_.getInt(max ? llvm::APInt::getSignedMinValue(bits)
                           : llvm::APInt::getSignedMaxValue(bits));
    }
    case ir::ReduceOp::ArgMax:
    case ir::ReduceOp::LogSumExp: break;
  }
  LT_UNREACHABLE();
}

// The eager kernels' steps: a + x; (x > a || x is NaN) ? x : a; (x < a || x is NaN) ? x : a.
// `reassoc` lets LLVM split a float sum into vector partial sums (any order is within the
// tolerance a sum has; max and min stay in order so their result is exact).
llvm::Value* Emitter::step(const Reduction& r, llvm::Value* acc, llvm::Value* x, bool reassoc) {
  const bool flt = x->getType()->isFloatingPointTy();
  switch (r.op) {
    case ir::ReduceOp::Sum:
    case ir::ReduceOp::Mean: {
      if (!flt) return b_.CreateAdd(acc, x);
      auto* sum = llvm::cast<llvm::Instruction>(b_.CreateFAdd(acc, x));
      if (reassoc) sum->setHasAllowReassoc(true);
      return sum;
    }
    case ir::ReduceOp::ReduceMax:
    case ir::ReduceOp::ReduceMin: {
      const bool max = r.op == ir::ReduceOp::ReduceMax;
      llvm::Value* better =
          flt ? b_.CreateOr(max ? b_.CreateFCmpOGT(x, acc) : b_.CreateFCmpOLT(x, acc),
                            b_.CreateFCmpUNO(x, x))
              : (max ? b_.CreateICmpSGT(x, acc) : b_.CreateICmpSLT(x, acc));
      return b_.CreateSelect(better, x, acc);
    }
    case ir::ReduceOp::ArgMax:
    case ir::ReduceOp::LogSumExp: break;
  }
  LT_UNREACHABLE();
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
  const bool accumulate_in_output = nest_.block_dim >= 0;
  for (int id : grp_.nodes) {
    const ir::Node& n = g_.node(id);
    const Value self = Value::node(id);
    switch (role_.at(id)) {
      case LoopRole::Compute: {
        if (n.op == ir::Op::Expand) {  // a no-op expand of a computed value
          val_[self] = get(n.inputs[0]);
          break;
        }
        const auto op = *ir::as_elementwise(n.op);
        std::vector<llvm::Value*> xs;
        for (Value v : n.inputs) xs.push_back(get(v));
        const DType in = op == ir::ElementwiseOp::Where ? g_.type(n.inputs[1]).dtype
                                                         : g_.type(n.inputs[0]).dtype;
        val_[self] = emit_elementwise(b_, m_, op, xs, in, n.types[0].dtype);
        break;
      }
      case LoopRole::Alias:
        if (auto it = val_.find(n.inputs[0]); it != val_.end()) val_[self] = it->second;
        break;
      case LoopRole::Reduction: {
        const auto it = std::find_if(reductions_.begin(), reductions_.end(),
                                     [&](const Reduction& r) { return r.node == id; });
        if (it == reductions_.end()) break;  // nothing reads it
        const size_t k = static_cast<size_t>(it - reductions_.begin());
        const DType t = n.types[0].dtype;
        llvm::Value* x = get(n.inputs[0]);
        if (accumulate_in_output) {
          llvm::Value* p = pointer(it->out_buffers[0], t, address(it->out));
          b_.CreateStore(step(*it, b_.CreateLoad(register_type(b_, t), p), x, false), p);
        } else {
          b_.CreateStore(step(*it, b_.CreateLoad(register_type(b_, t), acc_[k]), x, true), acc_[k]);
        }
        break;
      }
      case LoopRole::FoldedView:
      case LoopRole::Invalid: break;  // read where used
    }
  }
  for (auto& [v, a] : stores_) store(a.buffer, g_.type(v).dtype, address(a), get(v));
}

// Where the pieces' bounds cut the innermost dim: the innermost loop runs once per segment, and
// inside a segment every bound on that dim is known (in_bounds folds it), so a pad or a concat
// along the innermost dim reads contiguously instead of through masks or gathers. Too many
// segments (a concat of many pieces) would multiply the code: then one loop checks each index.
std::vector<int64_t> Emitter::inner_segments(int d) const {
  std::vector<int64_t> cuts{0, nest_.dims[d]};
  for (const auto& [v, r] : reads_)
    for (const Access& a : r.pieces) {
      cuts.push_back(a.lo[d]);
      cuts.push_back(a.hi[d]);
    }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  if (cuts.size() > kMaxSegments + 1) return {0, nest_.dims[d]};
  return cuts;
}

void Emitter::emit_nest(size_t k, llvm::Value* block_begin, llvm::Value* block_end) {
  if (k == nest_.seq.size()) return emit_point();
  const int d = nest_.seq[k];
  const bool blocked = d == nest_.block_dim;
  const bool innermost = k + 1 == nest_.seq.size();
  llvm::Value* begin = blocked ? block_begin : b_.getInt64(0);
  llvm::Value* end = blocked ? block_end : b_.getInt64(nest_.dims[d]);
  auto body = [&](llvm::Value* iv) {
    idx_[d] = iv;
    emit_nest(k + 1, block_begin, block_end);
  };
  if (!innermost) return counted_loop(b_, begin, end, "r", body);
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
  Nest& ne = nest_;
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
        for (Reduction& r : reductions_) each(r);
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
  for (size_t k = 0; k < reductions_.size(); ++k) b_.CreateStore(identity(reductions_[k]), acc_[k]);
  emit_nest(0, nullptr, nullptr);
  for (int d : ne.seq) idx_[d] = b_.getInt64(0);
  for (size_t k = 0; k < reductions_.size(); ++k) {
    const Reduction& r = reductions_[k];
    const DType t = g_.node(r.node).types[0].dtype;
    llvm::Value* x = b_.CreateLoad(register_type(b_, t), acc_[k]);
    if (r.op == ir::ReduceOp::Mean) x = b_.CreateFMul(x, mean_scale(r));
    llvm::Value* off = address(r.out);
    for (int buffer : r.out_buffers) store(buffer, t, off, x);
  }
}

// The body takes one noalias pointer per buffer so the vectorizer needs no runtime checks; the
// exported wrapper unpacks the buffer table and is what the runtime calls.
llvm::Function* Emitter::declare_body(const std::string& name) {
  const size_t nbuf = grp_.inputs.size() + grp_.outputs.size();
  std::vector<llvm::Type*> params(nbuf, b_.getPtrTy());
  params.push_back(b_.getInt64Ty());
  params.push_back(b_.getInt64Ty());
  auto* ty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  auto* f = llvm::Function::Create(ty, llvm::Function::InternalLinkage, name + ".body", m_);
  f->addFnAttr(llvm::Attribute::AlwaysInline);
  for (size_t i = 0; i < nbuf; ++i) {
    if (noalias_) f->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
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
  collect();
  collapse();
  order_loops();
  body_ = declare_body(name);
  b_.SetInsertPoint(llvm::BasicBlock::Create(c_, "entry", body_));
  const size_t nbuf = grp_.inputs.size() + grp_.outputs.size();
  for (const Reduction& r : reductions_)
    acc_.push_back(b_.CreateAlloca(register_type(b_, g_.node(r.node).types[0].dtype)));
  idx_.assign(nest_.dims.size(), nullptr);
  if (numel(grp_.shape) > 0) {
    counted_loop(b_, body_->getArg(static_cast<unsigned>(nbuf)),
                 body_->getArg(static_cast<unsigned>(nbuf + 1)), "row",
                 [&](llvm::Value* row) { emit_row(row); });
  }
  b_.CreateRetVoid();
  emit_entry(name, body_);
  LoopShape s = nest_.shape;
  if (numel(grp_.shape) == 0) s.rows = 0;
  if (keep_outer_dim_ && numel(grp_.shape) > 0) {
    if (grp_.shape.empty() || grp_.shape[0] == 1) s.rows_per_outer = s.rows;
    else if (outer_kept_ && !nest_.par.empty() && nest_.par[0] == 0)
      s.rows_per_outer = s.rows / grp_.shape[0];
  }
  return s;
}

}  // namespace

bool can_emit_loop(const ir::Graph& g, const ir::FusionGroup& grp) {
  for (Value v : grp.inputs)
    if (!is_compute_type(g.type(v).dtype)) return false;
  const std::vector<LoopRole> roles = ir::loop_roles(g, grp.nodes);
  for (size_t i = 0; i < grp.nodes.size(); ++i) {
    const ir::Node& n = g.node(grp.nodes[i]);
    if (!is_compute_type(n.types[0].dtype)) return false;
    switch (roles[i]) {
      case LoopRole::Invalid: return false;
      case LoopRole::FoldedView:
      case LoopRole::Alias:
      case LoopRole::Reduction: continue;
      case LoopRole::Compute: break;
    }
    if (n.op == ir::Op::Expand) continue;
    const auto ew = *ir::as_elementwise(n.op);
    const DType in = n.inputs.empty() ? n.types[0].dtype
                     : ew == ir::ElementwiseOp::Where ? g.type(n.inputs[1]).dtype
                                                       : g.type(n.inputs[0]).dtype;
    if (!can_emit_elementwise(ew, in, n.types[0].dtype)) return false;
  }
  return true;
}

LoopShape emit_loop_kernel(llvm::Module& m, const ir::Graph& g, const ir::FusionGroup& grp,
                           const std::string& name, bool noalias, bool keep_outer_dim) {
  return Emitter(m, g, grp, noalias, keep_outer_dim).emit(name);
}

}  // namespace lt::codegen
