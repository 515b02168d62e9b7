// View kernels against a naive reference: for every output element, the reference names the
// input element it copies (or padding), and the expected bytes are assembled one element at a
// time. Runs every element size, ranks 0-5, and shapes large enough to take the parallel and
// tiled-transpose paths.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "ir/type_rules.h"
#include "runtime/kernels/kernel.h"
#include "runtime/thread_pool.h"

namespace lt {
namespace {

struct Buf {
  TensorType type;
  std::vector<uint8_t> bytes;
  explicit Buf(TensorType t) : type(std::move(t)), bytes(type.bytes() + 8) {}
  rt::TensorRef ref() { return {bytes.data(), &type}; }
};

Buf random_buf(DType dt, const Shape& s, std::mt19937& rng) {
  Buf b({dt, s});
  for (uint8_t& x : b.bytes) x = static_cast<uint8_t>(rng());
  return b;
}

std::vector<int64_t> unravel(int64_t i, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t i = 0;
  for (size_t d = 0; d < s.size(); ++d) i = i * s[d] + idx[d];
  return i;
}

/// Which input (and element of it) output element `o` copies; input -1 means padding.
struct Source {
  int input;
  int64_t elem;
};

Source reference_source(ir::ViewOp op, const ir::Attrs& a, std::span<const TensorType> in,
                        const Shape& out, int64_t o) {
  std::vector<int64_t> oi = unravel(o, out);
  const Shape& xs = in[0].shape;
  std::vector<int64_t> xi(xs.size());
  switch (op) {
    case ir::ViewOp::Reshape: return {0, o};
    case ir::ViewOp::Permute: {
      const auto& p = std::get<ir::PermuteAttrs>(a).perm;
      for (size_t d = 0; d < p.size(); ++d) xi[p[d]] = oi[d];
      return {0, ravel(xi, xs)};
    }
    case ir::ViewOp::Expand:
      for (size_t d = 0; d < xs.size(); ++d)
        xi[d] = xs[d] == 1 ? 0 : oi[out.size() - xs.size() + d];
      return {0, ravel(xi, xs)};
    case ir::ViewOp::Slice: {
      const auto& s = std::get<ir::SliceAttrs>(a);
      for (size_t d = 0; d < xs.size(); ++d) xi[d] = s.start[d] + oi[d] * s.step[d];
      return {0, ravel(xi, xs)};
    }
    case ir::ViewOp::Concat: {
      const int64_t axis = std::get<ir::ConcatAttrs>(a).axis;
      int input = 0;
      while (oi[axis] >= in[input].shape[axis]) oi[axis] -= in[input++].shape[axis];
      return {input, ravel(oi, in[input].shape)};
    }
    case ir::ViewOp::Pad: {
      const auto& p = std::get<ir::PadAttrs>(a);
      for (size_t d = 0; d < xs.size(); ++d) {
        xi[d] = oi[d] - p.lo[d];
        if (xi[d] < 0 || xi[d] >= xs[d]) return {-1, 0};
      }
      return {0, ravel(xi, xs)};
    }
  }
  return {-1, 0};
}

/// Runs the view kernel and checks every output element against the reference, byte for byte.
/// `pad_bytes` is the expected encoding of padding.
void check_view(ir::Op op, const ir::Attrs& attrs, std::vector<Buf>& in, uint64_t pad_bytes = 0) {
  std::vector<TensorType> types;
  std::vector<rt::TensorRef> refs;
  for (Buf& b : in) types.push_back(b.type);
  for (Buf& b : in) refs.push_back(b.ref());
  Buf out(ir::infer_types(op, types, attrs).at(0));
  rt::TensorRef oref = out.ref();
  rt::run_view(*ir::as_view(op), attrs, refs, std::span(&oref, 1));
  const size_t es = dtype_size(out.type.dtype);
  for (int64_t o = 0; o < out.type.numel(); ++o) {
    const Source s = reference_source(*ir::as_view(op), attrs, types, out.type.shape, o);
    const void* want = s.input < 0 ? static_cast<const void*>(&pad_bytes)
                                   : in[s.input].bytes.data() + s.elem * es;
    ASSERT_EQ(std::memcmp(out.bytes.data() + o * es, want, es), 0)
        << ir::mnemonic(op) << " " << type_str(out.type) << " element " << o;
  }
}

const DType kSizes[] = {DType::Bool, DType::BF16, DType::F32, DType::I64};  // 1, 2, 4, 8 bytes

TEST(ViewKernel, ReshapeCopiesInOrder) {
  std::mt19937 rng(1);
  for (DType dt : kAllDTypes) {
    std::vector<Buf> in;
    in.push_back(random_buf(dt, {3, 4, 5}, rng));
    check_view(ir::Op::Reshape, ir::ReshapeAttrs{{5, 12}}, in);
  }
}

TEST(ViewKernel, PermuteEveryRankAndElementSize) {
  std::mt19937 rng(2);
  const std::vector<std::pair<Shape, ir::Ints>> cases = {
      {{}, {}},
      {{7}, {0}},
      {{5, 9}, {1, 0}},
      {{1, 9}, {1, 0}},
      {{3, 4, 5}, {2, 0, 1}},
      {{3, 4, 5}, {0, 2, 1}},
      {{3, 4, 5}, {1, 0, 2}},
      {{2, 3, 1, 5}, {3, 2, 1, 0}},
      {{2, 3, 4, 5, 3}, {4, 1, 3, 0, 2}},
      {{2, 3, 4, 5, 3}, {0, 1, 2, 4, 3}}};
  for (DType dt : kSizes)
    for (const auto& [shape, perm] : cases) {
      std::vector<Buf> in;
      in.push_back(random_buf(dt, shape, rng));
      check_view(ir::Op::Permute, ir::PermuteAttrs{perm}, in);
    }
}

// Shapes past the tile size and the parallel grain, not multiples of either.
TEST(ViewKernel, LargeTransposesTakeTiledParallelPath) {
  std::mt19937 rng(3);
  rt::set_num_threads(2);
  const std::vector<std::pair<Shape, ir::Ints>> cases = {
      {{301, 517}, {1, 0}},
      {{128, 72}, {1, 0}},  // whole register blocks only
      {{3, 130, 67}, {0, 2, 1}},
      {{40, 30, 50}, {2, 1, 0}},
      {{64, 3, 33}, {2, 0, 1}},   // channel-last to channel-first style
      {{9, 33, 65}, {1, 2, 0}},
      {{3, 16, 9, 17}, {0, 2, 3, 1}}};  // NCHW to NHWC, as the ResNet-20's first layer
  for (DType dt : kSizes)
    for (const auto& [shape, perm] : cases) {
      std::vector<Buf> in;
      in.push_back(random_buf(dt, shape, rng));
      check_view(ir::Op::Permute, ir::PermuteAttrs{perm}, in);
    }
  rt::set_num_threads(1);
  std::vector<Buf> in;
  in.push_back(random_buf(DType::F64, {129, 257}, rng));
  check_view(ir::Op::Permute, ir::PermuteAttrs{{1, 0}}, in);
}

TEST(ViewKernel, ExpandBroadcastsSizeOneAndNewDims) {
  std::mt19937 rng(4);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{}, {7}},          {{1}, {4, 3}},           {{3, 1, 5}, {2, 3, 4, 5}},
      {{4, 1}, {4, 300}}, {{1, 300}, {200, 300}}, {{2, 1, 3}, {2, 1, 3}}};
  for (DType dt : kSizes)
    for (const auto& [from, to] : cases) {
      std::vector<Buf> in;
      in.push_back(random_buf(dt, from, rng));
      check_view(ir::Op::Expand, ir::ExpandAttrs{to}, in);
    }
}

TEST(ViewKernel, SliceWithStepsAndEmptyRanges) {
  std::mt19937 rng(5);
  const std::vector<std::pair<Shape, ir::SliceAttrs>> cases = {
      {{10}, {{1}, {9}, {3}}},
      {{6, 7}, {{0, 1}, {6, 7}, {2, 1}}},
      {{6, 7}, {{1, 0}, {5, 7}, {1, 3}}},
      {{4, 5, 6}, {{1, 0, 2}, {4, 5, 6}, {2, 2, 2}}},
      {{4, 5, 6}, {{2, 0, 0}, {2, 5, 6}, {1, 1, 1}}},  // empty
      {{200, 300}, {{3, 5}, {200, 290}, {1, 1}}},
      {{200, 300}, {{0, 0}, {200, 300}, {3, 7}}}};
  rt::set_num_threads(2);
  for (DType dt : kSizes)
    for (const auto& [shape, attrs] : cases) {
      std::vector<Buf> in;
      in.push_back(random_buf(dt, shape, rng));
      check_view(ir::Op::Slice, attrs, in);
    }
  rt::set_num_threads(1);
}

TEST(ViewKernel, ConcatAlongEveryAxis) {
  std::mt19937 rng(6);
  rt::set_num_threads(2);
  for (DType dt : kSizes)
    for (int64_t axis = 0; axis < 3; ++axis) {
      std::vector<Buf> in;
      for (int64_t len : {3, 0, 1, 2}) {
        Shape s = {2, 3, 4};
        s[axis] = len;
        in.push_back(random_buf(dt, s, rng));
      }
      check_view(ir::Op::Concat, ir::ConcatAttrs{axis}, in);
    }
  std::vector<Buf> big;
  big.push_back(random_buf(DType::F32, {300, 200}, rng));
  big.push_back(random_buf(DType::F32, {300, 57}, rng));
  check_view(ir::Op::Concat, ir::ConcatAttrs{1}, big);
  rt::set_num_threads(1);
}

TEST(ViewKernel, PadWritesTheValueInEachStorageType) {
  std::mt19937 rng(7);
  // -2.0 in each encoding; f16 and bf16 happen to share the top byte pattern.
  const std::vector<std::pair<DType, uint64_t>> values = {
      {DType::Bool, 1},        {DType::I32, 0xFFFFFFFEu}, {DType::I64, ~uint64_t{1}},
      {DType::F16, 0xC000},    {DType::BF16, 0xC000},     {DType::F32, 0xC0000000u},
      {DType::F64, 0xC000000000000000ull}};
  const std::vector<std::pair<Shape, ir::PadAttrs>> cases = {
      {{5}, {{2}, {3}, -2}},
      {{3, 4}, {{1, 0}, {2, 3}, -2}},
      {{2, 3, 4}, {{0, 1, 2}, {1, 0, 2}, -2}},
      {{2, 0, 3}, {{1, 1, 1}, {0, 1, 0}, -2}},
      {{40, 300}, {{2, 5}, {1, 0}, -2}}};
  for (const auto& [dt, bits] : values)
    for (const auto& [shape, attrs] : cases) {
      std::vector<Buf> in;
      in.push_back(random_buf(dt, shape, rng));
      check_view(ir::Op::Pad, attrs, in, bits);
    }
}

}  // namespace
}  // namespace lt
