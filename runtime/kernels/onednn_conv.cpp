// oneDNN convolution primitives: created once per pass, chunk geometry and dtype, kept in a map,
// and run on the calling thread (threading: onednn_runtime.h). Activations are reordered from
// NCHW into the primitive's blocked layout (nChw16c for most channel counts) chunk by chunk, into
// buffers of the calling thread; the forward's output goes back image by image, so that a
// caller's epilogue reads each image while it is in cache.
#include "runtime/kernels/onednn_conv.h"

#include <compare>
#include <cstdint>
#include <dnnl.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "ir/error.h"
#include "runtime/kernels/onednn_runtime.h"

namespace lt::rt::onednn {

using dnnl::memory;
using Tag = memory::format_tag;

/// A reorder primitive and the scratch memory it needs (user-provided, per thread: a primitive
/// with the library's scratchpad is not safe to run on two threads at once).
struct Reorder {
  dnnl::reorder primitive;
  memory::desc scratchpad;
};

/// A tensor the primitive reads or writes: ours and the primitive's layout, and the reorder
/// between them when they differ (into the primitive's for inputs, out of it for outputs).
struct Operand {
  memory::desc user, inner;
  std::optional<Reorder> reorder;
};

struct ConvPrimitives {
  ConvPass pass;
  ConvGeom g;
  size_t out_elem_bytes;  // of the forward's output
  dnnl::primitive conv;
  memory::desc scratchpad;
  // Forward: x, w, y. InputGrad: gy, w, gx. WeightGrad: x, gy, gw.
  Operand in0, in1, out;
  // Forward, when the primitive's output layout is not ours: one image of `out` (the primitive's
  // layout to NCHW), and where images start in the primitive's layout, in elements.
  std::optional<Reorder> out_image;
  memory::desc out_image_inner, out_image_user;
  int64_t out_image_stride = 0;
};

namespace {

using Type = memory::data_type;

memory::desc activations(int64_t n, int64_t c, int64_t h, int64_t w, Type t, Tag tag) {
  return memory::desc({n, c, h, w}, t, tag);
}

memory::desc weights(const ConvGeom& g, Type t, bool any) {
  if (g.groups == 1) return memory::desc({g.o, g.cg(), g.kh, g.kw}, t, any ? Tag::any : Tag::oihw);
  return memory::desc({g.groups, g.og(), g.cg(), g.kh, g.kw}, t, any ? Tag::any : Tag::goihw);
}

Reorder make_reorder(const memory::desc& from, const memory::desc& to) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const dnnl::reorder::primitive_desc pd(cpu_engine(), from, cpu_engine(), to, attr);
  return {dnnl::reorder(pd), pd.scratchpad_desc()};
}

Operand input(const memory::desc& user, const memory::desc& inner) {
  Operand op{user, inner, std::nullopt};
  if (user != inner) op.reorder = make_reorder(user, inner);
  return op;
}

Operand output(const memory::desc& user, const memory::desc& inner) {
  Operand op{user, inner, std::nullopt};
  if (user != inner) op.reorder = make_reorder(inner, user);
  return op;
}

/// Whether images are whole blocks of `md`, one after the other (N is its outermost dimension
/// and not split into blocks), so that a chunk's image i starts i * strides[0] elements in.
bool images_are_contiguous(const memory::desc& md) {
  if (md.data.format_kind != dnnl_blocked) return false;
  const dnnl_blocking_desc_t& b = md.data.format_desc.blocking;
  for (int i = 0; i < b.inner_nblks; ++i)
    if (b.inner_idxs[i] == 0) return false;
  for (int d = 1; d < md.data.ndims; ++d)
    if (b.strides[d] > b.strides[0]) return false;
  return true;
}

/// JIT kernels only: "ref" loops are far slower than im2col, and "gemm" is oneDNN's im2col.
bool is_jit(std::string_view impl) {
  return impl.starts_with("jit") || impl.starts_with("brg");
}

std::shared_ptr<const ConvPrimitives> prepare(ConvPass pass, const ConvGeom& g, DType dtype,
                                              DType out_dtype) {
  LT_CHECK((dtype == DType::F32 || dtype == DType::BF16) &&
               (out_dtype == dtype || out_dtype == DType::F32),
           "oneDNN convolution on {} to {}", dtype_name(dtype), dtype_name(out_dtype));
  use_one_omp_thread();  // the primitive takes the creating thread's OpenMP thread count
  const Type t = dtype == DType::BF16 ? Type::bf16 : Type::f32;
  // The forward's y or the input gradient's gx may be f32 where the operands are bf16.
  const Type to = out_dtype == DType::BF16 ? Type::bf16 : Type::f32;
  // Channels-last activations stay so inside the primitive: no reorders, and on AVX-512 oneDNN
  // runs its brgemm forward on them, as fast as on its blocked layouts (docs/BENCHMARKS.md,
  // "Channels-last convolutions"). NCHW ones go to the layout oneDNN picks and back.
  const Tag user_tag = g.channels_last ? Tag::nhwc : Tag::nchw;
  const Tag inner_tag = g.channels_last ? Tag::nhwc : Tag::any;
  const memory::desc x_any = activations(g.n, g.c, g.h, g.w, t, inner_tag);
  const memory::desc y_any = activations(g.n, g.o, g.oh, g.ow, t, inner_tag);
  const memory::desc x_user = activations(g.n, g.c, g.h, g.w, t, user_tag);
  const memory::desc y_user = activations(g.n, g.o, g.oh, g.ow, t, user_tag);
  const memory::desc w_any = weights(g, t, true), w_user = weights(g, t, false);
  const memory::desc y_out_any = activations(g.n, g.o, g.oh, g.ow, to, inner_tag);
  const memory::desc y_out_user = activations(g.n, g.o, g.oh, g.ow, to, user_tag);
  const memory::desc gx_any = activations(g.n, g.c, g.h, g.w, to, inner_tag);
  const memory::desc gx_user = activations(g.n, g.c, g.h, g.w, to, user_tag);
  // The weight gradient sums over images in f32 (bf16 kernels accumulate in f32 and write it so).
  const memory::desc gw_any = weights(g, Type::f32, true), gw_user = weights(g, Type::f32, false);
  const memory::dims strides{g.sh, g.sw}, dilation{g.dh - 1, g.dw - 1}, padding{g.ph, g.pw};
  // Right padding as the left: oneDNN sizes the output as (in + pl + pr - extent) / stride + 1,
  // rounded down as our output size is.
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per thread (onednn_runtime.h)
  const auto algo = dnnl::algorithm::convolution_direct;
  auto made = std::make_shared<ConvPrimitives>();
  made->pass = pass;
  made->g = g;
  made->out_elem_bytes = to == Type::bf16 ? 2 : 4;
  try {
    // The forward, and the backward passes' layout hint, on operands of one dtype.
    const dnnl::convolution_forward::primitive_desc fwd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algo, x_any, w_any,
                                        y_any, strides, dilation, padding, padding),
        attr, cpu_engine());
    std::string_view impl;
    switch (pass) {
      case ConvPass::Forward: {
        const dnnl::convolution_forward::primitive_desc fwd_out =
            to == t ? fwd
                    : dnnl::convolution_forward::primitive_desc(
                          dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algo,
                                                          x_any, w_any, y_out_any, strides,
                                                          dilation, padding, padding),
                          attr, cpu_engine());
        impl = fwd_out.impl_info_str();
        made->conv = dnnl::convolution_forward(fwd_out);
        made->scratchpad = fwd_out.scratchpad_desc();
        made->in0 = input(x_user, fwd_out.src_desc());
        made->in1 = input(w_user, fwd_out.weights_desc());
        made->out = {y_out_user, fwd_out.dst_desc(), std::nullopt};  // goes out image by image
        break;
      }
      case ConvPass::InputGrad: {
        const dnnl::convolution_backward_data::primitive_desc bwd(
            dnnl::convolution_backward_data::desc(algo, gx_any, w_any, y_any, strides, dilation,
                                                  padding, padding),
            attr, cpu_engine(), fwd);
        impl = bwd.impl_info_str();
        made->conv = dnnl::convolution_backward_data(bwd);
        made->scratchpad = bwd.scratchpad_desc();
        made->in0 = input(y_user, bwd.diff_dst_desc());
        made->in1 = input(w_user, bwd.weights_desc());
        made->out = output(gx_user, bwd.diff_src_desc());
        break;
      }
      case ConvPass::WeightGrad: {
        const dnnl::convolution_backward_weights::primitive_desc bwd(
            dnnl::convolution_backward_weights::desc(algo, x_any, gw_any, y_any, strides,
                                                     dilation, padding, padding),
            attr, cpu_engine(), fwd);
        impl = bwd.impl_info_str();
        made->conv = dnnl::convolution_backward_weights(bwd);
        made->scratchpad = bwd.scratchpad_desc();
        made->in0 = input(x_user, bwd.src_desc());
        made->in1 = input(y_user, bwd.diff_dst_desc());
        made->out = output(gw_user, bwd.diff_weights_desc());
        break;
      }
    }
    if (!is_jit(impl)) return nullptr;
    if (pass == ConvPass::Forward && made->out.inner != made->out.user) {
      if (!images_are_contiguous(made->out.inner)) return nullptr;
      const memory::dims image{1, g.o, g.oh, g.ow}, origin{0, 0, 0, 0};
      made->out_image_inner = made->out.inner.submemory_desc(image, origin);
      made->out_image_user = activations(1, g.o, g.oh, g.ow, to, Tag::nchw);
      made->out_image = make_reorder(made->out_image_inner, made->out_image_user);
      made->out_image_stride = made->out.inner.data.format_desc.blocking.strides[0];
    }
  } catch (const dnnl::error&) {
    return nullptr;  // a geometry oneDNN does not take: the caller keeps its own path
  }
  return made;
}

struct Key {
  ConvPass pass;
  ConvGeom g;
  DType dtype, out_dtype;
  auto operator<=>(const Key&) const = default;
};

/// The primitives made so far, and (null) the geometries oneDNN has no JIT kernel for.
PrimitiveCache<Key, ConvPrimitives>& cache() {
  static PrimitiveCache<Key, ConvPrimitives> c;
  return c;
}

/// This thread's buffers for operands in the primitive's layout, one per slot, grown as needed.
void* thread_buffer(int slot, size_t bytes) {
  struct AlignedDelete {
    void operator()(char* p) const { ::operator delete[](p, std::align_val_t(64)); }
  };
  struct Buffer {
    std::unique_ptr<char[], AlignedDelete> data;
    size_t size = 0;
  };
  thread_local Buffer buffers[3];
  Buffer& b = buffers[slot];
  if (bytes > b.size) {
    b.data.reset(static_cast<char*>(::operator new[](bytes, std::align_val_t(64))));
    b.size = bytes;
  }
  return b.data.get();
}

memory mem(const memory::desc& md, const void* data) {
  return memory(md, cpu_engine(), const_cast<void*>(data));
}

void run_reorder(const Reorder& r, const memory& from, const memory& to) {
  std::unordered_map<int, memory> args{{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  if (const size_t bytes = r.scratchpad.get_size(); bytes > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, mem(r.scratchpad, scratchpad(bytes)));
  r.primitive.execute(thread_stream(), args);
}

/// The input in the primitive's layout: `data` itself, or reordered into buffer `slot`.
memory inner_input(const Operand& op, const void* data, int slot) {
  if (!op.reorder) return mem(op.inner, data);
  memory inner = mem(op.inner, thread_buffer(slot, op.inner.get_size()));
  run_reorder(*op.reorder, mem(op.user, data), inner);
  return inner;
}

/// Where the primitive writes the output: `data` itself, or buffer `slot` (then reordered).
memory inner_output(const Operand& op, void* data, int slot) {
  return op.reorder ? mem(op.inner, thread_buffer(slot, op.inner.get_size())) : mem(op.inner, data);
}

void finish_output(const Operand& op, const memory& inner, void* data) {
  if (op.reorder) run_reorder(*op.reorder, inner, mem(op.user, data));
}

void run(const ConvPrimitives& p, std::unordered_map<int, memory> args) {
  if (const size_t bytes = p.scratchpad.get_size(); bytes > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, mem(p.scratchpad, scratchpad(bytes)));
  p.conv.execute(thread_stream(), args);
}

}  // namespace

std::shared_ptr<const ConvPrimitives> conv_primitives(ConvPass pass, const ConvGeom& chunk,
                                                      DType dtype, DType out_dtype) {
  return cache().get(Key{pass, chunk, dtype, out_dtype},
                     [](const Key& k) { return prepare(k.pass, k.g, k.dtype, k.out_dtype); });
}

size_t packed_weights_bytes(const ConvPrimitives& p) {
  return p.in1.reorder && p.pass != ConvPass::WeightGrad ? p.in1.inner.get_size() : 0;
}

const void* pack_weights(const ConvPrimitives& p, const void* w, void* packed) {
  LT_CHECK(p.pass != ConvPass::WeightGrad, "a weight gradient reads no weights");
  if (!p.in1.reorder) return w;
  use_one_omp_thread();
  run_reorder(*p.in1.reorder, mem(p.in1.user, w), mem(p.in1.inner, packed));
  thread_stream().wait();
  return packed;
}

bool same_weight_layout(const ConvPrimitives& a, const ConvPrimitives& b) {
  return a.in1.inner == b.in1.inner;
}

void conv_forward(const ConvPrimitives& p, const void* x, const void* packed_w,
                  const std::function<void*(int64_t)>& image_out,
                  const std::function<void(int64_t, void*)>& image_done) {
  use_one_omp_thread();
  const memory src = inner_input(p.in0, x, 0);
  const memory dst = mem(p.out.inner, thread_buffer(1, p.out.inner.get_size()));
  run(p, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, mem(p.in1.inner, packed_w)},
          {DNNL_ARG_DST, dst}});
  const auto* images = static_cast<const char*>(dst.get_data_handle());
  for (int64_t i = 0; i < p.g.n; ++i) {
    void* out = image_out(i);
    run_reorder(*p.out_image,
                mem(p.out_image_inner, images + i * p.out_image_stride * p.out_elem_bytes),
                mem(p.out_image_user, out));
    thread_stream().wait();
    if (image_done) image_done(i, out);
  }
}

bool writes_our_layout(const ConvPrimitives& p) { return !p.out_image; }

void conv_forward_direct(const ConvPrimitives& p, const void* x, const void* packed_w, void* y) {
  LT_CHECK(writes_our_layout(p), "this forward writes its own layout");
  use_one_omp_thread();
  run(p, {{DNNL_ARG_SRC, inner_input(p.in0, x, 0)},
          {DNNL_ARG_WEIGHTS, mem(p.in1.inner, packed_w)},
          {DNNL_ARG_DST, mem(p.out.inner, y)}});
  thread_stream().wait();
}

void conv_input_grad(const ConvPrimitives& p, const void* gy, const void* packed_w, void* gx) {
  use_one_omp_thread();
  const memory diff_dst = inner_input(p.in0, gy, 0);
  const memory diff_src = inner_output(p.out, gx, 1);
  run(p, {{DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_WEIGHTS, mem(p.in1.inner, packed_w)},
          {DNNL_ARG_DIFF_SRC, diff_src}});
  finish_output(p.out, diff_src, gx);
  thread_stream().wait();
}

void conv_weight_grad(const ConvPrimitives& p, const void* x, const void* gy, float* gw) {
  use_one_omp_thread();
  const memory src = inner_input(p.in0, x, 0);
  const memory diff_dst = inner_input(p.in1, gy, 1);
  const memory diff_w = inner_output(p.out, gw, 2);
  run(p, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_WEIGHTS, diff_w}});
  finish_output(p.out, diff_w, gw);
  thread_stream().wait();
}

}  // namespace lt::rt::onednn
