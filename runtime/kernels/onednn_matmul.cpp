// oneDNN matmul primitives for rt::gemm's blocks: created once per GEMM signature, kept in a
// small map, and run on the calling thread.
// (Threading: onednn_runtime.h.)
#include "runtime/kernels/onednn_matmul.h"

#include <bit>
#include <algorithm>
#include <compare>
#include <cstdint>
#include <dnnl.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "ir/error.h"
#include "runtime/kernels/onednn_runtime.h"

namespace lt::rt::onednn {
namespace {

using dnnl::memory;

memory::data_type dnnl_type(DType t) {
  LT_CHECK(t == DType::BF16 || t == DType::F32, "onednn matmul on {}", dtype_name(t));
  return t == DType::BF16 ? memory::data_type::bf16 : memory::data_type::f32;
}

/// Everything a primitive is specialized for. alpha and beta by their bits: they are part of the
/// primitive (output scale, sum post-op), and bits order NaN too.
struct Signature {
  DType a, b, c;
  bool trans_a, trans_b;
  int64_t m, n, k, lda, ldb, ldc;
  uint32_t alpha, beta;
  int64_t batch, stride_a, stride_b, stride_c;  // batch 1: one GEMM, strides unused
  auto operator<=>(const Signature&) const = default;
};

Signature signature_of(const GemmArgs& g, int64_t batch = 1, int64_t stride_a = 0,
                       int64_t stride_b = 0, int64_t stride_c = 0) {
  if (batch == 1) stride_a = stride_b = stride_c = 0;
  return {g.a_type(), g.b_type(), g.c_type(), g.trans_a, g.trans_b, g.m, g.n, g.k, g.lda, g.ldb,
          g.ldc, std::bit_cast<uint32_t>(static_cast<float>(g.alpha)),
          std::bit_cast<uint32_t>(static_cast<float>(g.beta)), batch, stride_a, stride_b,
          stride_c};
}

struct Prepared {
  dnnl::matmul primitive;
  memory::desc a, b, c, scratchpad;
};

/// A row-major [rows, cols] matrix with row stride ld, or its transpose when `trans` (stored
/// [cols, rows]). Strides of a dimension of size 1 are never used; BLAS-style clamping keeps
/// them valid.
memory::desc matrix_desc(DType t, bool trans, int64_t rows, int64_t cols, int64_t ld) {
  const int64_t stored_cols = trans ? rows : cols;
  ld = std::max({ld, stored_cols, int64_t{1}});
  const memory::dims strides = trans ? memory::dims{1, ld} : memory::dims{ld, 1};
  return memory::desc({rows, cols}, dnnl_type(t), strides);
}

/// matrix_desc with a leading batch dim: `batch` matrices `stride` elements apart.
memory::desc batch_desc(DType t, bool trans, int64_t rows, int64_t cols, int64_t ld,
                        int64_t batch, int64_t stride) {
  const memory::desc m = matrix_desc(t, trans, rows, cols, ld);
  const dnnl_dim_t* s = m.data.format_desc.blocking.strides;
  return memory::desc({batch, rows, cols}, dnnl_type(t), memory::dims{stride, s[0], s[1]});
}

std::shared_ptr<const Prepared> prepare(const Signature& s) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // per thread (run below)
  const float alpha = std::bit_cast<float>(s.alpha), beta = std::bit_cast<float>(s.beta);
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  if (beta != 0.0f) {  // C = alpha * AB + beta * C; beta 0 has no post-op and never reads C
    dnnl::post_ops ops;
    ops.append_sum(beta);
    attr.set_post_ops(ops);
  }
  const bool batched = s.batch > 1;
  const memory::desc a = batched ? batch_desc(s.a, s.trans_a, s.m, s.k, s.lda, s.batch, s.stride_a)
                                 : matrix_desc(s.a, s.trans_a, s.m, s.k, s.lda);
  const memory::desc b = batched ? batch_desc(s.b, s.trans_b, s.k, s.n, s.ldb, s.batch, s.stride_b)
                                 : matrix_desc(s.b, s.trans_b, s.k, s.n, s.ldb);
  const memory::desc c = batched ? batch_desc(s.c, false, s.m, s.n, s.ldc, s.batch, s.stride_c)
                                 : matrix_desc(s.c, false, s.m, s.n, s.ldc);
  try {
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, cpu_engine());
    return std::make_shared<const Prepared>(
        Prepared{dnnl::matmul(pd), a, b, c, pd.scratchpad_desc()});
  } catch (const dnnl::error& e) {
    LT_CHECK(false, "oneDNN matmul {}x{}x{} ({} x {} -> {}): {}", s.m, s.k, s.n, dtype_name(s.a),
             dtype_name(s.b), dtype_name(s.c), e.what());
  }
  LT_UNREACHABLE();
}

PrimitiveCache<Signature, Prepared>& cache() {
  static PrimitiveCache<Signature, Prepared> c;
  return c;
}

/// Whether oneDNN dispatches to `isa` here. Its values are bit sets, each holding the sets it
/// extends (avx512_core_bf16 holds avx512_core's bits; avx2_vnni does not).
bool cpu_has(dnnl::cpu_isa isa) {
  const auto have = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto want = static_cast<unsigned>(isa);
  return (have & want) == want;
}

}  // namespace

const char* bf16_isa() {
  static const char* const isa = [] () -> const char* {
    if (cpu_has(dnnl::cpu_isa::avx512_core_amx)) return "amx";
    if (cpu_has(dnnl::cpu_isa::avx512_core_bf16)) return "avx512_core_bf16";
    return nullptr;
  }();
  return isa;
}

bool has_avx512() {
  static const bool yes = cpu_has(dnnl::cpu_isa::avx512_core);
  return yes;
}

void matmul(const GemmArgs& g) { matmul_batch(g, 1, 0, 0, 0); }

void matmul_batch(const GemmArgs& g, int64_t batch, int64_t stride_a, int64_t stride_b,
                  int64_t stride_c) {
  use_one_omp_thread();
  const std::shared_ptr<const Prepared> p =
      cache().get(signature_of(g, batch, stride_a, stride_b, stride_c), prepare);
  const dnnl::engine& e = cpu_engine();
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(p->a, e, const_cast<void*>(g.a))},
                                       {DNNL_ARG_WEIGHTS, memory(p->b, e, const_cast<void*>(g.b))},
                                       {DNNL_ARG_DST, memory(p->c, e, g.c)}};
  if (const size_t bytes = p->scratchpad.get_size(); bytes > 0)
    args.emplace(DNNL_ARG_SCRATCHPAD, memory(p->scratchpad, e, scratchpad(bytes)));
  p->primitive.execute(thread_stream(), args);
  thread_stream().wait();
}

}  // namespace lt::rt::onednn
