// The indexing and shaping ops against PyTorch 1.13's values (each literal's comment gives the
// torch expression that printed it) and PyTorch's errors for bad arguments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "tests/support/error_of.h"

namespace lt {
namespace {

using testing::error_of;
using ::testing::StartsWith;
using V = std::vector<double>;
using I = std::vector<int64_t>;

Tensor f64(V v, Shape s) { return from_vector<double>(v, std::move(s)); }
Tensor i64(I v, Shape s) { return from_vector<int64_t>(v, std::move(s)); }
V vals(const Tensor& t) { return t.to_vector<double>(); }
I ints(const Tensor& t) { return t.to_vector<int64_t>(); }

/// torch.arange(12.).reshape(4, 3)
Tensor x43() { return reshape(arange(0, 12, 1, DType::F64), {4, 3}); }

/// The message without its " at file:line" suffix.
std::string reason(const std::function<void()>& f) {
  const std::string m = error_of(f);
  return m.substr(0, m.rfind(" at "));
}

TEST(IndexOpsReference, GatherScatterAndScatterAdd) {
  // torch.gather(x, 0, torch.tensor([[0,1,2],[3,0,1]]))
  const Tensor g0 = gather(x43(), 0, i64({0, 1, 2, 3, 0, 1}, {2, 3}));
  EXPECT_EQ(g0.shape(), (Shape{2, 3}));
  EXPECT_EQ(vals(g0), (V{0, 4, 8, 9, 1, 5}));
  // torch.gather(x, 1, torch.tensor([[2,0],[1,1],[0,0],[2,2]]))
  EXPECT_EQ(vals(gather(x43(), 1, i64({2, 0, 1, 1, 0, 0, 2, 2}, {4, 2}))),
            (V{2, 0, 4, 4, 6, 6, 11, 11}));
  // torch.zeros(3,4).scatter_add(1, torch.tensor([[0,1,0,3],[2,2,2,2],[1,0,3,1]]),
  //                              torch.arange(12.).reshape(3,4))
  const Tensor idx = i64({0, 1, 0, 3, 2, 2, 2, 2, 1, 0, 3, 1}, {3, 4});
  const Tensor src = reshape(arange(0, 12, 1, DType::F64), {3, 4});
  EXPECT_EQ(vals(scatter_add(zeros({3, 4}, DType::F64), 1, idx, src)),
            (V{2, 1, 0, 3, 0, 0, 22, 0, 9, 19, 0, 10}));
  // torch.ones(3,4).scatter_add(0, torch.tensor([[2,0],[2,1]]), torch.arange(1.,13).reshape(3,4))
  EXPECT_EQ(vals(scatter_add(ones({3, 4}, DType::F64), 0, i64({2, 0, 2, 1}, {2, 2}),
                             reshape(arange(1, 13, 1, DType::F64), {3, 4}))),
            (V{1, 3, 1, 1, 1, 7, 1, 1, 7, 1, 1, 1}));
  // torch.zeros(3,5).scatter(0, torch.tensor([[0,1,2,0]]), torch.arange(1.,11).reshape(2,5))
  EXPECT_EQ(vals(scatter(zeros({3, 5}, DType::F64), 0, i64({0, 1, 2, 0}, {1, 4}),
                         reshape(arange(1, 11, 1, DType::F64), {2, 5}))),
            (V{1, 0, 0, 4, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0}));
  // torch.zeros(2,4).scatter(1, torch.tensor([[2],[3]]), 1.23)
  EXPECT_EQ(vals(scatter(zeros({2, 4}, DType::F64), 1, i64({2, 3}, {2, 1}), 1.23)),
            (V{0, 0, 1.23, 0, 0, 0, 0, 1.23}));
}

/// Row-major coordinates of element i of `shape`.
I coords(int64_t i, const Shape& shape) {
  I c(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  return c;
}
int64_t offset(const I& c, const Shape& shape) {
  int64_t o = 0;
  for (size_t d = 0; d < shape.size(); ++d) o = o * shape[d] + c[d];
  return o;
}

// The kernels against a host loop over the index, element by element, on shapes that take the
// threaded paths and an index smaller than x and src in the other dims.
TEST(IndexOpsReference, GatherAndScatterMatchAHostLoop) {
  struct Case {
    Shape x, index, src;
    int64_t axis;
  };
  const Case cases[] = {{{70, 300}, {64, 290}, {66, 295}, 0},
                        {{40, 3, 500}, {37, 2, 500}, {40, 3, 500}, 2},
                        {{5, 9, 7}, {4, 12, 6}, {4, 12, 7}, 1}};
  uint64_t state = 1;
  const auto next = [&] {  // a linear congruential generator
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(shape_str(k.index));
    V xv(numel(k.x)), sv(numel(k.src));
    for (double& v : xv) v = static_cast<double>(next() % 1000) / 8;
    for (double& v : sv) v = static_cast<double>(next() % 1000) / 8;
    I iv(numel(k.index));
    // Few distinct positions, so scatter_add adds many times to each and scatter overwrites.
    for (int64_t& v : iv) v = static_cast<int64_t>(next() % std::min<int64_t>(3, k.x[k.axis]));
    const Tensor x = f64(xv, k.x), index = i64(iv, k.index), src = f64(sv, k.src);
    V gathered(iv.size()), added = xv, written = xv;
    for (size_t i = 0; i < iv.size(); ++i) {
      I c = coords(static_cast<int64_t>(i), k.index);
      const double from_src = sv[offset(c, k.src)];
      c[k.axis] = iv[i];
      const int64_t at = offset(c, k.x);
      gathered[i] = xv[at];
      added[at] += from_src;
      written[at] = from_src;
    }
    EXPECT_EQ(vals(gather(x, k.axis, index)), gathered);
    EXPECT_EQ(vals(scatter(x, k.axis, index, src)), written);
    EXPECT_EQ(vals(scatter_add(x, k.axis, index, src)), added);
  }
}

TEST(IndexOpsReference, InPlaceForms) {
  Tensor x = zeros({2, 4}, DType::F64);
  x.scatter_(1, i64({2, 3}, {2, 1}), 1.23);
  EXPECT_EQ(vals(x), (V{0, 0, 1.23, 0, 0, 0, 0, 1.23}));
  x.scatter_add_(0, i64({1, 1, 1, 1}, {1, 4}), f64({1, 2, 3, 4}, {1, 4}));
  EXPECT_EQ(vals(x), (V{0, 0, 1.23, 0, 1, 2, 3, 5.23}));
  x.index_add_(1, i64({0}, {1}), f64({10, 20}, {2, 1}), -1);
  EXPECT_EQ(vals(x), (V{-10, 0, 1.23, 0, -19, 2, 3, 5.23}));
  x.scatter_(0, i64({1, 0, 0, 0}, {1, 4}), f64({7, 7, 7, 7}, {1, 4}));
  EXPECT_EQ(vals(x), (V{-10, 7, 7, 7, 7, 2, 3, 5.23}));
  Tensor t = ones({3, 3}, DType::F64);
  t.tril_();
  EXPECT_EQ(vals(t), (V{1, 0, 0, 1, 1, 0, 1, 1, 1}));
  t.triu_(0);
  EXPECT_EQ(vals(t), (V{1, 0, 0, 0, 1, 0, 0, 0, 1}));
}

TEST(IndexOpsReference, IndexSelectAndIndexAdd) {
  // torch.index_select(x, 0, torch.tensor([3,0,3]))
  EXPECT_EQ(vals(index_select(x43(), 0, i64({3, 0, 3}, {3}))),
            (V{9, 10, 11, 0, 1, 2, 9, 10, 11}));
  // torch.index_select(x, 1, torch.tensor([2,0], dtype=torch.int32))
  const Tensor s1 = index_select(x43(), 1, cast(i64({2, 0}, {2}), DType::I32));
  EXPECT_EQ(s1.shape(), (Shape{4, 2}));
  EXPECT_EQ(vals(s1), (V{2, 0, 5, 3, 8, 6, 11, 9}));
  // torch.ones(5,3).index_add(0, torch.tensor([0,4,2,0]), torch.arange(1.,13).reshape(4,3),
  //                           alpha=2)
  EXPECT_EQ(vals(index_add(ones({5, 3}, DType::F64), 0, i64({0, 4, 2, 0}, {4}),
                           reshape(arange(1, 13, 1, DType::F64), {4, 3}), 2)),
            (V{23, 27, 31, 1, 1, 1, 15, 17, 19, 1, 1, 1, 9, 11, 13}));
}

TEST(IndexOpsReference, SortIsStableWithNanLast) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor s = f64({3, nan, 1, 2, 1, -inf, nan, 2}, {8});
  // torch.sort(s, stable=True)
  auto [v, i] = sort(s);
  const V got = vals(v);
  const V want{-inf, 1, 1, 2, 2, 3};
  EXPECT_EQ(V(got.begin(), got.begin() + 6), want);
  EXPECT_TRUE(std::isnan(got[6]) && std::isnan(got[7]));
  EXPECT_EQ(ints(i), (I{5, 2, 4, 3, 7, 0, 1, 6}));
  // torch.sort(s, descending=True, stable=True)
  auto [dv, di] = sort(s, -1, true);
  const V dgot = vals(dv);
  EXPECT_TRUE(std::isnan(dgot[0]) && std::isnan(dgot[1]));
  EXPECT_EQ(V(dgot.begin() + 2, dgot.end()), (V{3, 2, 2, 1, 1, -inf}));
  EXPECT_EQ(ints(di), (I{1, 6, 0, 3, 7, 2, 4, 5}));
  const Tensor y = f64({2, 1, 5, 1, 1, 0, 2, 3, -1}, {3, 3});
  // torch.sort(y, dim=0, stable=True)
  auto [yv, yi] = sort(y, 0);
  EXPECT_EQ(vals(yv), (V{1, 1, -1, 2, 1, 0, 2, 3, 5}));
  EXPECT_EQ(ints(yi), (I{1, 0, 2, 0, 1, 1, 2, 2, 0}));
  // torch.sort(y, dim=1, descending=True, stable=True)[1]
  EXPECT_EQ(ints(argsort(y, 1, true)), (I{2, 0, 1, 0, 1, 2, 1, 0, 2}));
  // Integers and bools sort too; bool as its integers.
  EXPECT_EQ(ints(sort(i64({3, -1, 2}, {3})).values), (I{-1, 2, 3}));
  const Tensor b = ne(i64({1, 0, 1, 0}, {4}), scalar(0, DType::I64));
  EXPECT_EQ(ints(argsort(b)), (I{1, 3, 0, 2}));
}

TEST(IndexOpsReference, TrilTriuFlipRoll) {
  const Tensor z = reshape(arange(1, 25, 1, DType::F64), {2, 3, 4});
  // torch.tril(z)
  EXPECT_EQ(vals(tril(z)), (V{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0,
                              13, 0, 0, 0, 17, 18, 0, 0, 21, 22, 23, 0}));
  // torch.tril(z, -1)
  EXPECT_EQ(vals(tril(z, -1)), (V{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0,
                                  0, 0, 0, 0, 17, 0, 0, 0, 21, 22, 0, 0}));
  // torch.triu(z, 1)
  EXPECT_EQ(vals(triu(z, 1)), (V{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12,
                                 0, 14, 15, 16, 0, 0, 19, 20, 0, 0, 0, 24}));
  // torch.triu(z, -1)
  EXPECT_EQ(vals(triu(z, -1)), (V{1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12,
                                  13, 14, 15, 16, 17, 18, 19, 20, 0, 22, 23, 24}));
  // torch.ones(3, 3, dtype=torch.bool).triu(1), and of i64: the dtype is kept.
  const Tensor mask = triu(ne(i64({1, 1, 1, 1, 1, 1, 1, 1, 1}, {3, 3}), scalar(0, DType::I64)), 1);
  EXPECT_EQ(mask.dtype(), DType::Bool);
  EXPECT_EQ(ints(mask), (I{0, 1, 1, 0, 0, 1, 0, 0, 0}));
  const Tensor lower = tril(i64({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(lower.dtype(), DType::I64);
  EXPECT_EQ(ints(lower), (I{1, 0, 3, 4}));
  // torch.flip(x, [0, 1])
  EXPECT_EQ(vals(flip(x43(), {0, 1})), (V{11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  // torch.flip(z, [-1])
  EXPECT_EQ(vals(flip(z, {-1})), (V{4, 3, 2, 1, 8, 7, 6, 5, 12, 11, 10, 9,
                                    16, 15, 14, 13, 20, 19, 18, 17, 24, 23, 22, 21}));
  // torch.roll(x, 1, 0)
  EXPECT_EQ(vals(roll(x43(), 1, 0)), (V{9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7, 8}));
  // torch.roll(x, [1, -2], [0, 1])
  EXPECT_EQ(vals(roll(x43(), {1, -2}, {0, 1})), (V{11, 9, 10, 2, 0, 1, 5, 3, 4, 8, 6, 7}));
  // torch.roll(x, 3)
  EXPECT_EQ(vals(roll(x43(), 3)), (V{9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7, 8}));
  // torch.roll(x, [-7], [0])
  EXPECT_EQ(vals(roll(x43(), {-7}, {0})), (V{9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(IndexOpsReference, StackSplitChunkUnbindNarrowSelect) {
  const Tensor a = f64({1, 2, 3, 4}, {2, 2}), b = f64({11, 12, 13, 14}, {2, 2});
  // torch.stack([a, b], 0), torch.stack([a, b], 1), torch.stack([a, b], -1)
  EXPECT_EQ(vals(stack({a, b}, 0)), (V{1, 2, 3, 4, 11, 12, 13, 14}));
  EXPECT_EQ(vals(stack({a, b}, 1)), (V{1, 2, 11, 12, 3, 4, 13, 14}));
  EXPECT_EQ(vals(stack({a, b}, -1)), (V{1, 11, 2, 12, 3, 13, 4, 14}));
  EXPECT_EQ(stack({a, b}, -1).shape(), (Shape{2, 2, 2}));
  const Tensor w = reshape(arange(0, 10, 1, DType::F64), {5, 2});
  // torch.split(w, 2, 0)
  const std::vector<Tensor> s2 = split(w, 2, 0);
  ASSERT_EQ(s2.size(), 3u);
  EXPECT_EQ(vals(s2[0]), (V{0, 1, 2, 3}));
  EXPECT_EQ(vals(s2[1]), (V{4, 5, 6, 7}));
  EXPECT_EQ(vals(s2[2]), (V{8, 9}));
  // torch.split(w, [1, 3, 1], 0)
  const std::vector<Tensor> ss = split(w, {1, 3, 1}, 0);
  ASSERT_EQ(ss.size(), 3u);
  EXPECT_EQ(vals(ss[1]), (V{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(ss[2].shape(), (Shape{1, 2}));
  // torch.chunk(w, 3, 0): chunks of ceil(5 / 3) = 2
  const std::vector<Tensor> c3 = chunk(w, 3, 0);
  ASSERT_EQ(c3.size(), 3u);
  EXPECT_EQ(c3[2].shape(), (Shape{1, 2}));
  // torch.chunk(torch.arange(6.), 4): three chunks of 2
  const std::vector<Tensor> c4 = chunk(arange(0, 6, 1, DType::F64), 4);
  ASSERT_EQ(c4.size(), 3u);
  EXPECT_EQ(vals(c4[2]), (V{4, 5}));
  // torch.chunk(torch.zeros(0), 3): three empty chunks; torch.split(torch.zeros(0), 2): one
  EXPECT_EQ(chunk(zeros({0}), 3).size(), 3u);
  EXPECT_EQ(split(zeros({0}), 2).size(), 1u);
  // torch.unbind(x, 1)
  const std::vector<Tensor> u = unbind(x43(), 1);
  ASSERT_EQ(u.size(), 3u);
  EXPECT_EQ(vals(u[0]), (V{0, 3, 6, 9}));
  EXPECT_EQ(vals(u[2]), (V{2, 5, 8, 11}));
  // torch.narrow(x, 1, 1, 2), torch.narrow(x, 0, -2, 2)
  EXPECT_EQ(vals(narrow(x43(), 1, 1, 2)), (V{1, 2, 4, 5, 7, 8, 10, 11}));
  EXPECT_EQ(vals(narrow(x43(), 0, -2, 2)), (V{6, 7, 8, 9, 10, 11}));
  // torch.select(x, 0, -1), torch.select(x, 1, 1)
  EXPECT_EQ(vals(select(x43(), 0, -1)), (V{9, 10, 11}));
  EXPECT_EQ(vals(select(x43(), 1, 1)), (V{1, 4, 7, 10}));
}

TEST(IndexOpsReference, BadIndicesGivePyTorchsMessages) {
  const Tensor x = x43();
  EXPECT_EQ(reason([&] { gather(x, 0, i64({5, 0, 0}, {1, 3})); }),
            "gather: index 5 is out of bounds for dimension 0 with size 4");
  EXPECT_EQ(reason([&] { gather(x, 1, i64({0, -1}, {1, 2})); }),
            "gather: index -1 is out of bounds for dimension 1 with size 3");
  EXPECT_EQ(reason([&] { gather(x, 0, f64({1, 0, 0}, {1, 3})); }),
            "gather: Expected dtype int64 for index (operands: f64[4,3], f64[1,3])");
  EXPECT_EQ(reason([&] { gather(x, 0, i64({1, 0, 0}, {3})); }),
            "gather: Index tensor must have the same number of dimensions as input tensor "
            "(operands: f64[4,3], i64[3])");
  EXPECT_EQ(reason([&] { gather(x, 0, zeros({4, 4}, DType::I64)); }),
            "gather: Size does not match at dimension 1 expected index [4, 4] to be smaller than "
            "self [4, 3] apart from dimension 0 (operands: f64[4,3], i64[4,4])");
  EXPECT_EQ(reason([&] { gather(x, 2, zeros({4, 3}, DType::I64)); }),
            "gather: Dimension out of range (expected to be in range of [-2, 1], but got 2) "
            "(operands: f64[4,3], i64[4,3])");
  EXPECT_EQ(reason([&] { scatter_add(x, 0, i64({5, 0, 0}, {1, 3}), ones({1, 3}, DType::F64)); }),
            "scatter_add: index 5 is out of bounds for dimension 0 with size 4");
  EXPECT_EQ(reason([&] { scatter(x, 0, i64({1, 0, 4}, {1, 3}), 2.0); }),
            "scatter: index 4 is out of bounds for dimension 0 with size 4");
  EXPECT_EQ(reason([&] { scatter_add(x, 0, i64({1, 0, 0}, {1, 3}), ones({1, 3})); }),
            "scatter_add: Expected self.dtype to be equal to src.dtype (operands: f64[4,3], "
            "i64[1,3], f32[1,3])");
  EXPECT_EQ(reason([&] { scatter(x, 0, i64({1, 0, 0}, {1, 3}), ones({1, 2}, DType::F64)); }),
            "scatter: Expected index [1, 3] to be smaller than self [4, 3] apart from dimension "
            "0 and to be smaller size than src [1, 2] (operands: f64[4,3], i64[1,3], f64[1,2])");
  EXPECT_EQ(reason([&] { scatter(x, 0, zeros({4}, DType::I64), ones({4, 3}, DType::F64)); }),
            "scatter: Index tensor must have the same number of dimensions as self tensor "
            "(operands: f64[4,3], i64[4], f64[4,3])");
  EXPECT_EQ(reason([&] { index_select(x, 0, i64({4}, {1})); }),
            "gather: index 4 is out of bounds for dimension 0 with size 4");
  EXPECT_EQ(reason([&] { index_select(x, 0, f64({1}, {1})); }),
            "index_select: Expected dtype int32 or int64 for index (operands: f64[4,3], f64[1])");
  EXPECT_EQ(reason([&] { index_select(x, 0, i64({1}, {1, 1})); }),
            "index_select: Index is supposed to be a vector (operands: f64[4,3], i64[1,1])");
  EXPECT_EQ(reason([&] { index_add(x, 0, i64({1}, {1}), ones({2, 3}, DType::F64)); }),
            "index_add: Number of indices (1) should be equal to source.size(dim): (2), for "
            "dim: 0 (operands: f64[4,3], i64[1], f64[2,3])");
  EXPECT_EQ(reason([&] { index_add(x, 0, i64({1}, {1}), ones({1, 2}, DType::F64)); }),
            "index_add: source [1, 2] must have self's sizes [4, 3] apart from dimension 0 "
            "(operands: f64[4,3], i64[1], f64[1,2])");
  EXPECT_EQ(reason([&] { index_add(x, 0, i64({1}, {1}), ones({1, 3})); }),
            "index_add: self (f64) and source (f32) must have the same scalar type (operands: "
            "f64[4,3], i64[1], f32[1,3])");
}

TEST(IndexOpsReference, BadPiecesGivePyTorchsMessages) {
  const Tensor x = x43();
  EXPECT_EQ(reason([&] { narrow(x, 0, 3, 2); }),
            "narrow: start (3) + length (2) exceeds dimension size (4). (operands: f64[4,3])");
  EXPECT_EQ(reason([&] { narrow(x, 0, -5, 1); }),
            "narrow: start out of range (expected to be in range of [-4, 4], but got -5) "
            "(operands: f64[4,3])");
  EXPECT_EQ(reason([&] { narrow(x, 0, 1, -1); }),
            "narrow: length must be non-negative. (operands: f64[4,3])");
  EXPECT_EQ(reason([&] { select(x, 0, 4); }),
            "select: index 4 out of range for tensor of size [4, 3] at dimension 0 (operands: "
            "f64[4,3])");
  EXPECT_EQ(reason([&] { select(x, 1, -4); }),
            "select: index -4 out of range for tensor of size [4, 3] at dimension 1 (operands: "
            "f64[4,3])");
  EXPECT_EQ(reason([&] { chunk(x, 0, 0); }),
            "chunk: expects `chunks` to be greater than 0, got: 0 (operands: f64[4,3])");
  EXPECT_EQ(reason([&] { split(x, 0, 0); }),
            "split: split_size can only be 0 if dimension size is 0, but got dimension size of 4 "
            "(operands: f64[4,3])");
  EXPECT_EQ(reason([&] { split(x, -1, 0); }),
            "split: expects split_size be non-negative, but got split_size=-1 (operands: "
            "f64[4,3])");
  EXPECT_EQ(reason([&] { split(x, {1, 2}, 0); }),
            "split_with_sizes: expects split_sizes to sum exactly to 4 (input tensor's size at "
            "dimension 0), but got split_sizes=[1, 2] (operands: f64[4,3])");
  EXPECT_EQ(reason([&] { split(x, {1, -1, 4}, 0); }),
            "split_with_sizes: expects split_sizes have only non-negative entries, but got "
            "split_sizes=[1, -1, 4] (operands: f64[4,3])");
  EXPECT_EQ(reason([&] { stack({x, slice(x, 0, 0, 2)}, 0); }),
            "stack: expects each tensor to be equal size, but got [4, 3] at entry 0 and [2, 3] "
            "at entry 1 (operands: f64[4,3], f64[2,3])");
  EXPECT_EQ(reason([&] { stack(std::vector<Tensor>{}, 0); }),
            "stack: expects a non-empty TensorList (operands: )");
  EXPECT_EQ(reason([&] { stack({x, x}, 3); }),
            "stack: Dimension out of range (expected to be in range of [-3, 2], but got 3) "
            "(operands: f64[4,3], f64[4,3])");
  EXPECT_EQ(reason([&] { flip(x, {0, -2}); }),
            "flip: dim 0 appears multiple times in the list of dims (operands: f64[4,3])");
  EXPECT_EQ(reason([&] { roll(x, {1, 2}, {0}); }),
            "roll: shifts and dimensions must align. shifts: 2, dims:1 (operands: f64[4,3])");
  EXPECT_EQ(reason([&] { tril(ones({3})); }),
            "tril: input tensor must have at least 2 dimensions (operands: f32[3])");
  EXPECT_EQ(reason([&] { unbind(x, 2); }),
            "unbind: Dimension out of range (expected to be in range of [-2, 1], but got 2) "
            "(operands: f64[4,3])");
}

TEST(IndexOpsReference, LazyIndexOutOfBoundsFailsTheStep) {
  const Tensor x = x43();
  ModeGuard lazy(Mode::Lazy);
  const Tensor y = gather(x, 1, i64({0, 3}, {1, 2}));
  EXPECT_THAT(error_of([] { mark_step(); }),
              StartsWith("gather: index 3 is out of bounds for dimension 1 with size 3"));
}

}  // namespace
}  // namespace lt
