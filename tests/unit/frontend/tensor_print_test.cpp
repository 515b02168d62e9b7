// Tensor::str prints as repr(tensor) does in PyTorch 1.13: each expected string is PyTorch's for
// the torch expression in its comment, with lazytrain's dtype names (dtype=f64 for
// dtype=torch.float64) and grad_fn names (MulBackward for MulBackward0), the suffix wrapped at
// the line width for the shorter name as PyTorch wraps it.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"

namespace lt {
namespace {

struct Case {
  std::string name;
  Tensor t;
  std::string want;
};

std::vector<Case> cases() {
  return {
      {"1d",  // torch.tensor([0.1, 0.2, 0.3])
       from_vector<float>({0.1f, 0.2f, 0.3f}, {3}),
       "tensor([0.1000, 0.2000, 0.3000])"},
      {"2d",  // torch.tensor([[0.1, 0.2], [0.3, 0.4]])
       from_vector<float>({0.1f, 0.2f, 0.3f, 0.4f}, {2, 2}),
       "tensor([[0.1000, 0.2000],\n"
       "        [0.3000, 0.4000]])"},
      {"3d",  // torch.arange(24, dtype=torch.float32).reshape(2, 3, 4) / 8
       reshape(arange(0, 24, 1, DType::F32), {2, 3, 4}) / 8.0,
       "tensor([[[0.0000, 0.1250, 0.2500, 0.3750],\n"
       "         [0.5000, 0.6250, 0.7500, 0.8750],\n"
       "         [1.0000, 1.1250, 1.2500, 1.3750]],\n"
       "\n"
       "        [[1.5000, 1.6250, 1.7500, 1.8750],\n"
       "         [2.0000, 2.1250, 2.2500, 2.3750],\n"
       "         [2.5000, 2.6250, 2.7500, 2.8750]]])"},
      {"integer-valued floats",  // torch.tensor([1., 2., -3.])
       from_vector<float>({1, 2, -3}, {3}),
       "tensor([ 1.,  2., -3.])"},
      {"empty",  // torch.zeros(0)
       zeros({0}),
       "tensor([])"},
      {"empty 2-d",  // torch.zeros(2, 0)
       zeros({2, 0}),
       "tensor([], size=(2, 0))"},
      {"empty i64",  // torch.zeros(0, dtype=torch.int64)
       zeros({0}, DType::I64),
       "tensor([], dtype=i64)"},
      {"empty bool 2-d",  // torch.zeros(0, 3, dtype=torch.bool)
       zeros({0, 3}, DType::Bool),
       "tensor([], size=(0, 3), dtype=bool)"},
      {"0-d",  // torch.tensor(3.5)
       scalar(3.5),
       "tensor(3.5000)"},
      {"0-d i64",  // torch.tensor(7)
       scalar(7, DType::I64),
       "tensor(7)"},
      {"bool",  // torch.tensor([True, False, True])
       from_vector<bool>({true, false, true}, {3}),
       "tensor([ True, False,  True])"},
      {"i64",  // torch.tensor([[1, -20], [300, 4]])
       from_vector<int64_t>({1, -20, 300, 4}, {2, 2}),
       "tensor([[  1, -20],\n"
       "        [300,   4]])"},
      {"i32",  // torch.tensor([1, 2], dtype=torch.int32)
       from_vector<int32_t>({1, 2}, {2}),
       "tensor([1, 2], dtype=i32)"},
      {"f64",  // torch.tensor([0.5, 1.25], dtype=torch.float64)
       from_vector<double>({0.5, 1.25}, {2}),
       "tensor([0.5000, 1.2500], dtype=f64)"},
      {"bf16",  // torch.tensor([0.1, 2.0], dtype=torch.bfloat16)
       cast(from_vector<float>({0.1f, 2}, {2}), DType::BF16),
       "tensor([0.1001, 2.0000], dtype=bf16)"},
      {"summarized 2-d",  // torch.arange(2000, dtype=torch.float32).reshape(40, 50)
       reshape(arange(0, 2000, 1, DType::F32), {40, 50}),
       "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n"
       "         4.9000e+01],\n"
       "        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,\n"
       "         9.9000e+01],\n"
       "        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,\n"
       "         1.4900e+02],\n"
       "        ...,\n"
       "        [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n"
       "         1.8990e+03],\n"
       "        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,\n"
       "         1.9490e+03],\n"
       "        [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
       "         1.9990e+03]])"},
      {"summarized 1-d i64",  // torch.arange(1001)
       arange(0, 1001),
       "tensor([   0,    1,    2,  ...,  998,  999, 1000])"},
      {"summarized 3-d",  // torch.arange(1200, dtype=torch.float32).reshape(10, 10, 12) / 7
       reshape(arange(0, 1200, 1, DType::F32), {10, 10, 12}) / 7.0,
       "tensor([[[0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 1.2857e+00,\n"
       "          1.4286e+00, 1.5714e+00],\n"
       "         [1.7143e+00, 1.8571e+00, 2.0000e+00,  ..., 3.0000e+00,\n"
       "          3.1429e+00, 3.2857e+00],\n"
       "         [3.4286e+00, 3.5714e+00, 3.7143e+00,  ..., 4.7143e+00,\n"
       "          4.8571e+00, 5.0000e+00],\n"
       "         ...,\n"
       "         [1.2000e+01, 1.2143e+01, 1.2286e+01,  ..., 1.3286e+01,\n"
       "          1.3429e+01, 1.3571e+01],\n"
       "         [1.3714e+01, 1.3857e+01, 1.4000e+01,  ..., 1.5000e+01,\n"
       "          1.5143e+01, 1.5286e+01],\n"
       "         [1.5429e+01, 1.5571e+01, 1.5714e+01,  ..., 1.6714e+01,\n"
       "          1.6857e+01, 1.7000e+01]],\n"
       "\n"
       "        [[1.7143e+01, 1.7286e+01, 1.7429e+01,  ..., 1.8429e+01,\n"
       "          1.8571e+01, 1.8714e+01],\n"
       "         [1.8857e+01, 1.9000e+01, 1.9143e+01,  ..., 2.0143e+01,\n"
       "          2.0286e+01, 2.0429e+01],\n"
       "         [2.0571e+01, 2.0714e+01, 2.0857e+01,  ..., 2.1857e+01,\n"
       "          2.2000e+01, 2.2143e+01],\n"
       "         ...,\n"
       "         [2.9143e+01, 2.9286e+01, 2.9429e+01,  ..., 3.0429e+01,\n"
       "          3.0571e+01, 3.0714e+01],\n"
       "         [3.0857e+01, 3.1000e+01, 3.1143e+01,  ..., 3.2143e+01,\n"
       "          3.2286e+01, 3.2429e+01],\n"
       "         [3.2571e+01, 3.2714e+01, 3.2857e+01,  ..., 3.3857e+01,\n"
       "          3.4000e+01, 3.4143e+01]],\n"
       "\n"
       "        [[3.4286e+01, 3.4429e+01, 3.4571e+01,  ..., 3.5571e+01,\n"
       "          3.5714e+01, 3.5857e+01],\n"
       "         [3.6000e+01, 3.6143e+01, 3.6286e+01,  ..., 3.7286e+01,\n"
       "          3.7429e+01, 3.7571e+01],\n"
       "         [3.7714e+01, 3.7857e+01, 3.8000e+01,  ..., 3.9000e+01,\n"
       "          3.9143e+01, 3.9286e+01],\n"
       "         ...,\n"
       "         [4.6286e+01, 4.6429e+01, 4.6571e+01,  ..., 4.7571e+01,\n"
       "          4.7714e+01, 4.7857e+01],\n"
       "         [4.8000e+01, 4.8143e+01, 4.8286e+01,  ..., 4.9286e+01,\n"
       "          4.9429e+01, 4.9571e+01],\n"
       "         [4.9714e+01, 4.9857e+01, 5.0000e+01,  ..., 5.1000e+01,\n"
       "          5.1143e+01, 5.1286e+01]],\n"
       "\n"
       "        ...,\n"
       "\n"
       "        [[1.2000e+02, 1.2014e+02, 1.2029e+02,  ..., 1.2129e+02,\n"
       "          1.2143e+02, 1.2157e+02],\n"
       "         [1.2171e+02, 1.2186e+02, 1.2200e+02,  ..., 1.2300e+02,\n"
       "          1.2314e+02, 1.2329e+02],\n"
       "         [1.2343e+02, 1.2357e+02, 1.2371e+02,  ..., 1.2471e+02,\n"
       "          1.2486e+02, 1.2500e+02],\n"
       "         ...,\n"
       "         [1.3200e+02, 1.3214e+02, 1.3229e+02,  ..., 1.3329e+02,\n"
       "          1.3343e+02, 1.3357e+02],\n"
       "         [1.3371e+02, 1.3386e+02, 1.3400e+02,  ..., 1.3500e+02,\n"
       "          1.3514e+02, 1.3529e+02],\n"
       "         [1.3543e+02, 1.3557e+02, 1.3571e+02,  ..., 1.3671e+02,\n"
       "          1.3686e+02, 1.3700e+02]],\n"
       "\n"
       "        [[1.3714e+02, 1.3729e+02, 1.3743e+02,  ..., 1.3843e+02,\n"
       "          1.3857e+02, 1.3871e+02],\n"
       "         [1.3886e+02, 1.3900e+02, 1.3914e+02,  ..., 1.4014e+02,\n"
       "          1.4029e+02, 1.4043e+02],\n"
       "         [1.4057e+02, 1.4071e+02, 1.4086e+02,  ..., 1.4186e+02,\n"
       "          1.4200e+02, 1.4214e+02],\n"
       "         ...,\n"
       "         [1.4914e+02, 1.4929e+02, 1.4943e+02,  ..., 1.5043e+02,\n"
       "          1.5057e+02, 1.5071e+02],\n"
       "         [1.5086e+02, 1.5100e+02, 1.5114e+02,  ..., 1.5214e+02,\n"
       "          1.5229e+02, 1.5243e+02],\n"
       "         [1.5257e+02, 1.5271e+02, 1.5286e+02,  ..., 1.5386e+02,\n"
       "          1.5400e+02, 1.5414e+02]],\n"
       "\n"
       "        [[1.5429e+02, 1.5443e+02, 1.5457e+02,  ..., 1.5557e+02,\n"
       "          1.5571e+02, 1.5586e+02],\n"
       "         [1.5600e+02, 1.5614e+02, 1.5629e+02,  ..., 1.5729e+02,\n"
       "          1.5743e+02, 1.5757e+02],\n"
       "         [1.5771e+02, 1.5786e+02, 1.5800e+02,  ..., 1.5900e+02,\n"
       "          1.5914e+02, 1.5929e+02],\n"
       "         ...,\n"
       "         [1.6629e+02, 1.6643e+02, 1.6657e+02,  ..., 1.6757e+02,\n"
       "          1.6771e+02, 1.6786e+02],\n"
       "         [1.6800e+02, 1.6814e+02, 1.6829e+02,  ..., 1.6929e+02,\n"
       "          1.6943e+02, 1.6957e+02],\n"
       "         [1.6971e+02, 1.6986e+02, 1.7000e+02,  ..., 1.7100e+02,\n"
       "          1.7114e+02, 1.7129e+02]]])"},
      {"tiny",  // torch.tensor([1e-5, 2.5e-6])
       from_vector<float>({1e-5f, 2.5e-6f}, {2}),
       "tensor([1.0000e-05, 2.5000e-06])"},
      {"huge",  // torch.tensor([1e10, -3.0e9, 0.5])
       from_vector<float>({1e10f, -3e9f, 0.5f}, {3}),
       "tensor([ 1.0000e+10, -3.0000e+09,  5.0000e-01])"},
      {"huge integers",  // torch.tensor([1e10, 2.0])
       from_vector<float>({1e10f, 2}, {2}),
       "tensor([1.0000e+10, 2.0000e+00])"},
      {"wide range",  // torch.tensor([1e-3, 10.0, 123.456])
       from_vector<float>({1e-3f, 10, 123.456f}, {3}),
       "tensor([1.0000e-03, 1.0000e+01, 1.2346e+02])"},
      {"nonfinite integers",  // torch.tensor([1., float('nan'), float('inf'), -float('inf'), 0.])
       from_vector<float>({1, NAN, INFINITY, -INFINITY, 0}, {5}),
       "tensor([1., nan, inf, -inf, 0.])"},
      {"nonfinite",  // torch.tensor([0.5, float('nan'), -float('inf')])
       from_vector<float>({0.5f, NAN, -INFINITY}, {3}),
       "tensor([0.5000,    nan,   -inf])"},
      {"zeros",  // torch.zeros(2, 2)
       zeros({2, 2}),
       "tensor([[0., 0.],\n"
       "        [0., 0.]])"},
      {"negative zero",  // torch.tensor([-0.0, 1.5])
       from_vector<float>({-0.0f, 1.5f}, {2}),
       "tensor([-0.0000, 1.5000])"},
      {"line wrap",  // torch.arange(30, dtype=torch.float32) / 3
       arange(0, 30, 1, DType::F32) / 3.0,
       "tensor([0.0000, 0.3333, 0.6667, 1.0000, 1.3333, 1.6667, 2.0000, 2.3333, 2.6667,\n"
       "        3.0000, 3.3333, 3.6667, 4.0000, 4.3333, 4.6667, 5.0000, 5.3333, 5.6667,\n"
       "        6.0000, 6.3333, 6.6667, 7.0000, 7.3333, 7.6667, 8.0000, 8.3333, 8.6667,\n"
       "        9.0000, 9.3333, 9.6667])"},
      {"line wrap 2-d",  // (torch.arange(40, dtype=torch.float32) / 3).reshape(2, 20)
       reshape(arange(0, 40, 1, DType::F32) / 3.0, {2, 20}),
       "tensor([[ 0.0000,  0.3333,  0.6667,  1.0000,  1.3333,  1.6667,  2.0000,  2.3333,\n"
       "          2.6667,  3.0000,  3.3333,  3.6667,  4.0000,  4.3333,  4.6667,  5.0000,\n"
       "          5.3333,  5.6667,  6.0000,  6.3333],\n"
       "        [ 6.6667,  7.0000,  7.3333,  7.6667,  8.0000,  8.3333,  8.6667,  9.0000,\n"
       "          9.3333,  9.6667, 10.0000, 10.3333, 10.6667, 11.0000, 11.3333, 11.6667,\n"
       "         12.0000, 12.3333, 12.6667, 13.0000]])"},
      {"suffix wraps",  // torch.arange(25, dtype=torch.float64) / 7
       arange(0, 25, 1, DType::F64) / 7.0,
       "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
       "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
       "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286], dtype=f64)"},
      {"suffix on the last line",  // torch.arange(9, dtype=torch.float64).reshape(1, 9) / 7
       reshape(arange(0, 9, 1, DType::F64), {1, 9}) / 7.0,
       "tensor([[0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429]],\n"
       "       dtype=f64)"},
      {"suffix past the line",  // torch.arange(10, dtype=torch.float64).reshape(1, 10) / 7
       reshape(arange(0, 10, 1, DType::F64), {1, 10}) / 7.0,
       "tensor([[0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
       "         1.2857]], dtype=f64)"},
      {"requires grad",  // torch.tensor([1.0, 2.0], requires_grad=True)
       from_vector<float>({1, 2}, {2}).requires_grad_(),
       "tensor([1., 2.], requires_grad=True)"},
      {"0-d requires grad",  // torch.tensor(2.5, requires_grad=True)
       scalar(2.5).requires_grad_(),
       "tensor(2.5000, requires_grad=True)"},
      {"grad_fn",  // torch.tensor([1.0, 2.0], requires_grad=True) * 2
       from_vector<float>({1, 2}, {2}).requires_grad_() * 2.0,
       "tensor([2., 4.], grad_fn=<MulBackward>)"},
  };
}

TEST(TensorPrint, MatchesPyTorch) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.t.str(), c.want);
  }
}

TEST(TensorPrint, SummarizesPastAThousandElements) {
  EXPECT_EQ(arange(0, 1000).str().find("..."), std::string::npos);
  EXPECT_EQ(arange(0, 1001).str(), "tensor([   0,    1,    2,  ...,  998,  999, 1000])");
}

TEST(TensorPrint, StreamAndUndefined) {
  std::ostringstream os;
  os << from_vector<float>({0.25f}, {1});
  EXPECT_EQ(os.str(), "tensor([0.2500])");
  EXPECT_EQ(Tensor().str(), "Tensor(undefined)");
}

// Printing a pending lazy tensor runs its graph (one sync, as PyTorch/XLA's print) and prints
// the values eager mode prints.
TEST(TensorPrint, PendingLazyTensorIsMaterialized) {
  const Tensor x = from_vector<float>({0.5f, -1.25f, 3}, {3});
  const std::string eager = (x * 2.0).str();
  ModeGuard lazy(Mode::Lazy);
  const Tensor y = x * 2.0;
  metrics::reset();
  EXPECT_EQ(y.str(), eager);
  EXPECT_EQ(eager, "tensor([ 1.0000, -2.5000,  6.0000])");
  EXPECT_EQ(metrics::counter("sync"), 1);
  EXPECT_EQ(y.str(), eager);  // now device data: no second sync
  EXPECT_EQ(metrics::counter("sync"), 1);
}

}  // namespace
}  // namespace lt
