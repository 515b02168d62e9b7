// Samples of the library family. Convolution and pooling configurations are listed once and
// shared by the forward op and its gradient ops (which are differentiable ops of their own).
#include "tests/support/op_samples_builders.h"

namespace lt::testing::samples {
namespace {

struct ConvCase {
  const char* name;
  Shape x, w;
  ir::ConvAttrs attrs;
};

std::vector<ConvCase> conv_cases() {
  return {
      {"3x3 pad 1", {1, 2, 4, 4}, {3, 2, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, 1, {}}},
      {"groups 2, stride (2,1), pad (1,0), dilation (1,2)", {2, 4, 5, 6}, {6, 2, 3, 3},
       {{2, 1}, {1, 0}, {1, 2}, 2, {}}},
      {"1x1 stride 2 (input rows skipped)", {2, 3, 5, 5}, {4, 3, 1, 1},
       {{2, 2}, {0, 0}, {1, 1}, 1, {}}},
      {"depthwise 2x2", {1, 3, 4, 4}, {3, 1, 2, 2}, {{1, 1}, {0, 0}, {1, 1}, 3, {}}},
      {"pointwise 1x1 groups 2 (no im2col), 3 images", {3, 4, 3, 3}, {6, 2, 1, 1},
       {{1, 1}, {0, 0}, {1, 1}, 2, {}}},
      {"pad 3 stride 3 (windows entirely in padding)", {1, 2, 4, 5}, {2, 2, 3, 3},
       {{3, 3}, {3, 3}, {1, 1}, 1, {}}},
      {"4 images of [16,16,16], 16 filters (split over images)", {4, 16, 16, 16}, {16, 16, 3, 3},
       {{1, 1}, {1, 1}, {1, 1}, 1, {}}},
      // Channels-last: x is [N, H, W, C].
      {"channels-last 3x3 pad 1, 16 channels (oneDNN's path)", {2, 5, 6, 16}, {16, 16, 3, 3},
       {{1, 1}, {1, 1}, {1, 1}, 1, {}, true}},
      {"channels-last groups 2, stride (2,1), dilation (1,2) (NCHW paths)", {2, 5, 6, 4},
       {6, 2, 3, 3}, {{2, 1}, {1, 0}, {1, 2}, 2, {}, true}},
      {"channels-last 1x1 stride 2, 32 to 16 channels", {2, 5, 5, 32}, {16, 32, 1, 1},
       {{2, 2}, {0, 0}, {1, 1}, 1, {}, true}},
      {"channels-last groups 2 of 16 channels, pad 1", {2, 4, 5, 32}, {32, 16, 3, 3},
       {{1, 1}, {1, 1}, {1, 1}, 2, {}, true}},
  };
}

Shape conv_out(const ConvCase& c) {
  const bool cl = c.attrs.channels_last;
  const int64_t h = cl ? 1 : 2;  // the first spatial dim of x and of the output
  Shape o = cl ? Shape{c.x[0], 0, 0, c.w[0]} : Shape{c.x[0], c.w[0], 0, 0};
  for (int i = 0; i < 2; ++i)
    o[h + i] = (c.x[h + i] + 2 * c.attrs.padding[i] - c.attrs.dilation[i] * (c.w[2 + i] - 1) - 1) /
                   c.attrs.stride[i] + 1;
  return o;
}

struct PoolCase {
  const char* name;
  Shape x;
  ir::PoolAttrs attrs;
};

std::vector<PoolCase> pool_cases() {
  return {
      {"3x3 stride 2 pad 1 (overlapping)", {2, 3, 5, 5}, {{3, 3}, {2, 2}, {1, 1}, {}}},
      {"2x2 stride 2", {1, 2, 4, 6}, {{2, 2}, {2, 2}, {0, 0}, {}}},
      {"3x2 stride (1,2) pad (1,1)", {1, 1, 5, 4}, {{3, 2}, {1, 2}, {1, 1}, {}}},
      {"large [2,3,17,19] 3x3 stride 2 pad 1", {2, 3, 17, 19}, {{3, 3}, {2, 2}, {1, 1}, {}}},
      {"ceil_mode 3x3 stride 2 on 6x7 (last windows overhang)", {1, 2, 6, 7},
       {{3, 3}, {2, 2}, {0, 0}, {}, true, true}},
      {"ceil_mode pad 1, count_include_pad=false", {2, 1, 5, 6},
       {{3, 3}, {2, 2}, {1, 1}, {}, true, false}},
      {"2x2 stride 2 ceil_mode on odd 5x7", {1, 2, 5, 7}, {{2, 2}, {2, 2}, {0, 0}, {}, true, true}},
      {"3x3 stride 1 pad 1, count_include_pad=false", {1, 2, 4, 5},
       {{3, 3}, {1, 1}, {1, 1}, {}, false, false}},
  };
}

// PyTorch's output size: with ceil_mode rounded up, less a last window that would start past
// the input and its left padding.
Shape pool_out(const PoolCase& c) {
  Shape o = c.x;
  const ir::PoolAttrs& a = c.attrs;
  for (int i = 0; i < 2; ++i) {
    const int64_t span = c.x[2 + i] + 2 * a.padding[i] - a.kernel[i];
    int64_t n = (a.ceil_mode ? (span + a.stride[i] - 1) : span) / a.stride[i] + 1;
    if (a.ceil_mode && (n - 1) * a.stride[i] >= c.x[2 + i] + a.padding[i]) --n;
    o[2 + i] = n;
  }
  return o;
}

std::vector<OpSample> matmul_samples(Rng& r) {
  auto mm = [&](const char* name, Shape a, Shape b, bool ta, bool tb) {
    return make(ir::Op::MatMul, name, {uniform(r, std::move(a)), uniform(r, std::move(b))},
                ir::MatMulAttrs{ta, tb});
  };
  return {
      mm("[3,4] x [4,5]", {3, 4}, {4, 5}, false, false),
      mm("batch [2,3,4] x [4,5]", {2, 3, 4}, {4, 5}, false, false),
      mm("broadcast batch [2,1,3,4] x [3,4,2]", {2, 1, 3, 4}, {3, 4, 2}, false, false),
      mm("transpose_a [2,4,3] x [4,5]", {2, 4, 3}, {4, 5}, true, false),
      mm("transpose_b [3,4] x [2,5,4]", {3, 4}, {2, 5, 4}, false, true),
      mm("both transposed [4,3] x [5,4]", {4, 3}, {5, 4}, true, true),
      mm("vector-like [1,7] x [7,1]", {1, 7}, {7, 1}, false, false),
      mm("batch of 6 small [6,5,7] x [6,7,3]", {6, 5, 7}, {6, 7, 3}, false, false),
      mm("large [64,128] x [128,300] (split GEMM)", {64, 128}, {128, 300}, false, false),
      mm("large transposed [128,64]^T x [300,128]^T", {128, 64}, {300, 128}, true, true),
  };
}

}  // namespace

std::vector<OpSample> library_samples(ir::Op op, Rng& r) {
  using enum ir::LibraryOp;
  std::vector<OpSample> out;
  const ir::LibraryOp e = *ir::as_library(op);
  switch (e) {
    case MatMul: return matmul_samples(r);
    case Conv2d: case Conv2dInputGrad: case Conv2dWeightGrad:
      for (const ConvCase& c : conv_cases()) {
        ir::ConvAttrs a = c.attrs;
        if (e == Conv2d) {
          out.push_back(make(op, c.name, {uniform(r, c.x), uniform(r, c.w)}, a));
        } else if (e == Conv2dInputGrad) {  // (grad_out, w) -> grad_x
          a.grad_shape = c.x;
          out.push_back(make(op, c.name, {uniform(r, conv_out(c)), uniform(r, c.w)}, a));
        } else {  // (x, grad_out) -> grad_w
          a.grad_shape = c.w;
          out.push_back(make(op, c.name, {uniform(r, c.x), uniform(r, conv_out(c))}, a));
        }
      }
      return out;
    case MaxPool2d: case MaxPool2dGrad: case AvgPool2d: case AvgPool2dGrad:
      for (const PoolCase& c : pool_cases()) {
        ir::PoolAttrs a = c.attrs;
        if (e == MaxPool2d) {  // distinct values: no ties inside a window
          out.push_back(make(op, c.name, {distinct1(r, c.x)}, a));
        } else if (e == MaxPool2dGrad) {
          out.push_back(make(op, c.name, {distinct1(r, c.x), uniform(r, pool_out(c))}, a));
          a.through_relu = true;  // windows whose maximum is not above 0 pass nothing
          out.push_back(make(op, std::string(c.name) + ", through_relu",
                             {distinct1(r, c.x), uniform(r, pool_out(c))}, a));
        } else if (e == AvgPool2d) {
          out.push_back(make(op, c.name, {uniform(r, c.x)}, a));
        } else {
          a.grad_shape = c.x;
          out.push_back(make(op, c.name, {uniform(r, pool_out(c))}, a));
        }
      }
      return out;
  }
  return out;
}

}  // namespace lt::testing::samples
