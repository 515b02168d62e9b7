// View kernels: pure data movement, so they dispatch on element size (1/2/4/8 bytes), never on
// dtype. Permute, expand and slice are one strided gather into a contiguous output; concat and
// pad write rows of their inputs into the output.
#include <Eigen/Core>
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "ir/error.h"
#include "runtime/kernels/kernel.h"
#include "runtime/thread_pool.h"

namespace lt::rt {
namespace {

// Bytes of output per parallel chunk: below this, splitting costs more than the copy.
constexpr int64_t kGrainBytes = 64 * 1024;

int64_t grain_for(int64_t item_bytes) {
  return std::max<int64_t>(1, kGrainBytes / std::max<int64_t>(1, item_bytes));
}

template <class F>
void dispatch_size(size_t bytes, F&& f) {
  switch (bytes) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
  }
  LT_UNREACHABLE();
}

/// A gather into a contiguous output of shape `size`: out element i (multi-index idx) reads
/// in[base + sum(idx[d] * stride[d])]. Coalescing keeps every loop below short and dense.
struct Gather {
  Dims size, stride;
  int64_t base = 0;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : size) n *= s;
    return n;
  }

  // Drops size-1 dims and merges neighbours that the input walks as one run.
  void coalesce() {
    std::vector<int64_t> cs, cst;
    for (size_t d = 0; d < size.size(); ++d) {
      if (size[d] == 1) continue;
      if (!cs.empty() && cst.back() == stride[d] * size[d]) {
        cs.back() *= size[d];
        cst.back() = stride[d];
      } else {
        cs.push_back(size[d]);
        cst.push_back(stride[d]);
      }
    }
    if (cs.empty()) {  // a single element
      cs.push_back(1);
      cst.push_back(1);
    }
    size = std::move(cs);
    stride = std::move(cst);
  }
};

/// Walks the rows (every dim but the last) of a Gather in row-major order.
class RowCursor {
 public:
  RowCursor(const Gather& g, int64_t row) : g_(g), idx_(g.size.size() - 1, 0) {
    const size_t dims = idx_.size();
    off_ = g.base;
    for (size_t d = dims; d-- > 0;) {
      idx_[d] = row % g.size[d];
      off_ += idx_[d] * g.stride[d];
      row /= g.size[d];
    }
  }
  int64_t offset() const { return off_; }
  void next() {
    for (size_t d = idx_.size(); d-- > 0;) {
      off_ += g_.stride[d];
      if (++idx_[d] < g_.size[d]) return;
      off_ -= idx_[d] * g_.stride[d];
      idx_[d] = 0;
    }
  }

 private:
  const Gather& g_;
  std::vector<int64_t> idx_;
  int64_t off_;
};

// Rows of the output, each read with a constant input stride (1: memcpy, 0: fill).
template <class E>
void gather_rows(const Gather& g, const E* in, E* out) {
  const int64_t inner = g.size.back(), step = g.stride.back();
  const int64_t rows = g.numel() / inner;
  parallel_for(rows, grain_for(inner * sizeof(E)), [&](int64_t b, int64_t e) {
    RowCursor cur(g, b);
    for (int64_t r = b; r < e; ++r, cur.next()) {
      const E* src = in + cur.offset();
      E* dst = out + r * inner;
      if (step == 1) std::memcpy(dst, src, inner * sizeof(E));
      else if (step == 0) std::fill(dst, dst + inner, *src);
      else for (int64_t i = 0; i < inner; ++i) dst[i] = src[i * step];
    }
  });
}

// A transpose: output dim j is contiguous in the input (stride 1) while the output's last dim
// is not. Walking 2-D tiles of (j, last) keeps both the reads and the writes in cache, and
// register transposes (8x8 of 1, 2 and 4 bytes, 4x4 of 8 bytes) move whole vectors, where
// scalar tiles move one element at a time. Those of 4 and 8 bytes are AVX code whatever the build
// targets, run where the CPU has AVX; those of 1 and 2 bytes are SSE2.
constexpr int64_t kTile = 64;

#define LT_AVX __attribute__((target("avx")))

// d[r * ld + c] = s[r + c * ls] for an 8x8 block of 4-byte elements (shuffles keep any bits).
LT_AVX void transpose_8x8(const void* src, int64_t ls, void* dst, int64_t ld) {
  const float* s = static_cast<const float*>(src);
  float* d = static_cast<float*>(dst);
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(s + i * ls);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(d + i * ld, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(d + (i + 4) * ld, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

// The same for a 4x4 block of 8-byte elements.
LT_AVX void transpose_4x4(const void* src, int64_t ls, void* dst, int64_t ld) {
  const double* s = static_cast<const double*>(src);
  double* d = static_cast<double*>(dst);
  const __m256d r0 = _mm256_loadu_pd(s), r1 = _mm256_loadu_pd(s + ls);
  const __m256d r2 = _mm256_loadu_pd(s + 2 * ls), r3 = _mm256_loadu_pd(s + 3 * ls);
  const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
  const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  _mm256_storeu_pd(d, _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(d + ld, _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(d + 2 * ld, _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(d + 3 * ld, _mm256_permute2f128_pd(t1, t3, 0x31));
}

// The same for an 8x8 block of 2-byte elements (bf16, f16), in SSE2, which every x86-64 CPU
// has: 16-, 32- and 64-bit interleaves. Scalar tiles were slow on the ResNet-20's bf16
// channels-last permutes.
void transpose_8x8_2byte(const void* src, int64_t ls, void* dst, int64_t ld) {
  const uint16_t* s = static_cast<const uint16_t*>(src);
  uint16_t* d = static_cast<uint16_t*>(dst);
  __m128i r[8], a[8], b[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i * ls));
  for (int i = 0; i < 8; i += 2) {
    a[i] = _mm_unpacklo_epi16(r[i], r[i + 1]);
    a[i + 1] = _mm_unpackhi_epi16(r[i], r[i + 1]);
  }
  for (int h = 0; h < 8; h += 4)  // rows 0-3, then 4-7
    for (int k = 0; k < 2; ++k) {
      b[h + 2 * k] = _mm_unpacklo_epi32(a[h + k], a[h + k + 2]);
      b[h + 2 * k + 1] = _mm_unpackhi_epi32(a[h + k], a[h + k + 2]);
    }
  for (int i = 0; i < 4; ++i) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * i * ld),
                     _mm_unpacklo_epi64(b[i], b[i + 4]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (2 * i + 1) * ld),
                     _mm_unpackhi_epi64(b[i], b[i + 4]));
  }
}

// The same for an 8x8 block of 1-byte elements (bool masks), in SSE2: 8-, 16- and 32-bit
// interleaves of 8-byte rows.
void transpose_8x8_1byte(const void* src, int64_t ls, void* dst, int64_t ld) {
  const uint8_t* s = static_cast<const uint8_t*>(src);
  uint8_t* d = static_cast<uint8_t*>(dst);
  __m128i r[8], a[4], b[4];
  for (int i = 0; i < 8; ++i) r[i] = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(s + i * ls));
  for (int i = 0; i < 4; ++i) a[i] = _mm_unpacklo_epi8(r[2 * i], r[2 * i + 1]);
  b[0] = _mm_unpacklo_epi16(a[0], a[1]);
  b[1] = _mm_unpackhi_epi16(a[0], a[1]);
  b[2] = _mm_unpacklo_epi16(a[2], a[3]);
  b[3] = _mm_unpackhi_epi16(a[2], a[3]);
  for (int i = 0; i < 2; ++i) {
    const __m128i lo = _mm_unpacklo_epi32(b[i], b[i + 2]);  // output rows 4i, 4i + 1
    const __m128i hi = _mm_unpackhi_epi32(b[i], b[i + 2]);  // output rows 4i + 2, 4i + 3
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d + 4 * i * ld), lo);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d + (4 * i + 1) * ld), _mm_srli_si128(lo, 8));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d + (4 * i + 2) * ld), hi);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(d + (4 * i + 3) * ld), _mm_srli_si128(hi, 8));
  }
}

// Side of the register block for element type E on this CPU; 1 = scalar only.
template <class E>
int64_t micro_size() {
  if constexpr (sizeof(E) <= 2) return 8;  // SSE2
  static const bool avx = __builtin_cpu_supports("avx");
  if (!avx) return 1;
  if constexpr (sizeof(E) == 4) return 8;
  if constexpr (sizeof(E) == 8) return 4;
  return 1;
}

// out[r * out_ld + c] = in[r + c * in_ld] for r < nr, c < nc.
template <class E>
void transpose_tile(const E* in, int64_t in_ld, E* out, int64_t out_ld, int64_t nr, int64_t nc) {
  const int64_t kM = micro_size<E>();
  int64_t r = 0;
  if (kM > 1) {
    for (; r + kM <= nr; r += kM) {
      int64_t c = 0;
      for (; c + kM <= nc; c += kM) {
        const E* from = in + r + c * in_ld;
        E* to = out + r * out_ld + c;
        if constexpr (sizeof(E) == 1) transpose_8x8_1byte(from, in_ld, to, out_ld);
        else if constexpr (sizeof(E) == 2) transpose_8x8_2byte(from, in_ld, to, out_ld);
        else if constexpr (sizeof(E) == 4) transpose_8x8(from, in_ld, to, out_ld);
        else transpose_4x4(from, in_ld, to, out_ld);
      }
      for (int64_t rr = r; rr < r + kM; ++rr)
        for (int64_t cc = c; cc < nc; ++cc) out[rr * out_ld + cc] = in[rr + cc * in_ld];
    }
  }
  for (; r < nr; ++r)
    for (int64_t c = 0; c < nc; ++c) out[r * out_ld + c] = in[r + c * in_ld];
}

template <class E>
void gather_transposed(const Gather& g, size_t j, const E* in, E* out) {
  const size_t last = g.size.size() - 1;
  const int64_t rows_j = g.size[j], cols = g.size[last], in_ld = g.stride[last];
  // The other dims, flattened: each combination is one independent 2-D transpose.
  Gather outer;
  for (size_t d = 0; d < last; ++d)
    if (d != j) {
      outer.size.push_back(g.size[d]);
      outer.stride.push_back(g.stride[d]);
    }
  const Dims out_stride = contiguous_strides(g.size);
  const int64_t out_ld = out_stride[j];
  std::vector<int64_t> outer_out_stride;
  for (size_t d = 0; d < last; ++d)
    if (d != j) outer_out_stride.push_back(out_stride[d]);
  const int64_t tiles_j = (rows_j + kTile - 1) / kTile;
  const int64_t tasks = outer.numel() * tiles_j;
  parallel_for(tasks, grain_for(kTile * cols * sizeof(E)), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / tiles_j, in_off = g.base, out_off = 0;
      for (size_t d = outer.size.size(); d-- > 0;) {
        const int64_t i = o % outer.size[d];
        in_off += i * outer.stride[d];
        out_off += i * outer_out_stride[d];
        o /= outer.size[d];
      }
      const int64_t r0 = (t % tiles_j) * kTile, r1 = std::min(rows_j, r0 + kTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t c1 = std::min(cols, c0 + kTile);
        transpose_tile(in + in_off + r0 + c0 * in_ld, in_ld, out + out_off + r0 * out_ld + c0,
                       out_ld, r1 - r0, c1 - c0);
      }
    }
  });
}

void run_gather(Gather g, size_t esize, const void* in, void* out) {
  if (g.numel() == 0) return;
  g.coalesce();
  const size_t last = g.size.size() - 1;
  size_t j = last;
  if (g.stride[last] != 1 && g.stride[last] != 0)
    for (size_t d = 0; d < last; ++d)
      if (g.stride[d] == 1) j = d;
  dispatch_size(esize, [&](auto e) {
    using E = decltype(e);
    // Transpose tiles pay off once the rows are long enough to lose the cache.
    if (j != last && g.size[last] >= 8 && g.size[j] >= 8)
      gather_transposed(g, j, static_cast<const E*>(in), static_cast<E*>(out));
    else
      gather_rows(g, static_cast<const E*>(in), static_cast<E*>(out));
  });
}

Gather permute_gather(const Shape& in, const ir::PermuteAttrs& a) {
  const Dims st = contiguous_strides(in);
  Gather g;
  for (int64_t p : a.perm) {
    g.size.push_back(in[p]);
    g.stride.push_back(st[p]);
  }
  return g;
}

Gather expand_gather(const Shape& in, const Shape& out) {
  const Dims st = contiguous_strides(in);
  const size_t lead = out.size() - in.size();
  Gather g;
  g.size = out;
  g.stride.assign(out.size(), 0);
  for (size_t d = 0; d < in.size(); ++d) g.stride[lead + d] = in[d] == 1 ? 0 : st[d];
  return g;
}

Gather slice_gather(const Shape& in, const Shape& out, const ir::SliceAttrs& a) {
  const Dims st = contiguous_strides(in);
  Gather g;
  g.size = out;
  for (size_t d = 0; d < in.size(); ++d) {
    g.base += a.start[d] * st[d];
    g.stride.push_back(a.step[d] * st[d]);
  }
  return g;
}

void copy_parallel(const void* in, void* out, int64_t bytes) {
  if (in == out) return;  // a reshape the caller ran in place
  const auto* src = static_cast<const char*>(in);
  auto* dst = static_cast<char*>(out);
  parallel_for(bytes, kGrainBytes, [&](int64_t b, int64_t e) {
    std::memcpy(dst + b, src + b, e - b);
  });
}

// Each input is a [outer, block] matrix; the output interleaves their blocks along `axis`.
void concat(const ir::ConcatAttrs& a, Ins in, const TensorRef& out) {
  const size_t esize = dtype_size(out.dtype());
  int64_t outer = 1;
  for (int64_t d = 0; d < a.axis; ++d) outer *= out.shape()[d];
  const int64_t out_block = out.numel() / std::max<int64_t>(1, outer) * esize;
  if (out_block == 0) return;
  std::vector<int64_t> block(in.size()), at(in.size());
  int64_t acc = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    block[i] = outer == 0 ? 0 : in[i].numel() / outer * esize;
    at[i] = acc;
    acc += block[i];
  }
  parallel_for(outer, grain_for(out_block), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o)
      for (size_t i = 0; i < in.size(); ++i)
        if (block[i] > 0)
          std::memcpy(out.as<char>() + o * out_block + at[i], in[i].as<const char>() + o * block[i],
                    block[i]);
  });
}

// The pad value in the output's storage format (f16/bf16 through Eigen's converters).
uint64_t pad_bits(DType t, double v) {
  uint64_t bits = 0;
  auto put = [&](auto x) { std::memcpy(&bits, &x, sizeof(x)); };
  switch (t) {
    case DType::Bool: put(static_cast<uint8_t>(v != 0)); break;
    case DType::I32: put(static_cast<int32_t>(v)); break;
    case DType::I64: put(static_cast<int64_t>(v)); break;
    case DType::F16: put(Eigen::half(static_cast<float>(v))); break;
    case DType::BF16: put(Eigen::bfloat16(static_cast<float>(v))); break;
    case DType::F32: put(static_cast<float>(v)); break;
    case DType::F64: put(v); break;
  }
  return bits;
}

// One pass over the output rows: a row outside the input on any outer axis is all padding,
// any other is [lo fill | input row | hi fill].
template <class E>
void pad_rows(const ir::PadAttrs& a, const TensorRef& x, const TensorRef& out, E fill) {
  const Shape& os = out.shape();
  const Shape& xs = x.shape();
  const size_t r = os.size();
  if (r == 0) {
    *out.as<E>() = *x.as<const E>();
    return;
  }
  const int64_t inner = os[r - 1], xinner = xs[r - 1], lo = a.lo[r - 1];
  const Dims xst = contiguous_strides(xs);
  const int64_t rows = out.numel() / std::max<int64_t>(1, inner);
  parallel_for(rows, grain_for(inner * sizeof(E)), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      int64_t rem = row, xoff = 0;
      bool inside = true;
      for (size_t d = r - 1; d-- > 0;) {
        const int64_t i = rem % os[d] - a.lo[d];
        rem /= os[d];
        inside = inside && i >= 0 && i < xs[d];
        xoff += i * xst[d];
      }
      E* dst = out.as<E>() + row * inner;
      if (!inside || xinner == 0) {
        std::fill(dst, dst + inner, fill);
        continue;
      }
      std::fill(dst, dst + lo, fill);
      std::memcpy(dst + lo, x.as<const E>() + xoff, xinner * sizeof(E));
      std::fill(dst + lo + xinner, dst + inner, fill);
    }
  });
}

void pad(const ir::PadAttrs& a, const TensorRef& x, const TensorRef& out) {
  if (out.numel() == 0) return;
  const uint64_t bits = pad_bits(out.dtype(), a.value);
  dispatch_size(dtype_size(out.dtype()), [&](auto e) {
    using E = decltype(e);
    E fill;
    std::memcpy(&fill, &bits, sizeof(E));  // little-endian: the low bytes hold the value
    pad_rows<E>(a, x, out, fill);
  });
}

}  // namespace

void run_view(ir::ViewOp op, const ir::Attrs& attrs, Ins in, Outs out) {
  const TensorRef& x = in[0];
  const TensorRef& y = out[0];
  const size_t esize = dtype_size(y.dtype());
  switch (op) {
    case ir::ViewOp::Reshape:
      return copy_parallel(x.data, y.data, static_cast<int64_t>(y.type->bytes()));
    case ir::ViewOp::Permute:
      return run_gather(permute_gather(x.shape(), std::get<ir::PermuteAttrs>(attrs)), esize,
                        x.data, y.data);
    case ir::ViewOp::Expand:
      return run_gather(expand_gather(x.shape(), y.shape()), esize, x.data, y.data);
    case ir::ViewOp::Slice:
      return run_gather(slice_gather(x.shape(), y.shape(), std::get<ir::SliceAttrs>(attrs)),
                        esize, x.data, y.data);
    case ir::ViewOp::Concat: return concat(std::get<ir::ConcatAttrs>(attrs), in, y);
    case ir::ViewOp::Pad: return pad(std::get<ir::PadAttrs>(attrs), x, y);
  }
  LT_UNREACHABLE();
}

}  // namespace lt::rt
