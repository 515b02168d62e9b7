// GroupNorm and BatchNorm1d: values, running statistics and names against PyTorch 1.13's,
// gradients of the parameters and the input against central differences, lazy against eager,
// and bad arguments.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "tests/support/all_close.h"
#include "tests/unit/nn/nn_testing.h"

namespace lt {
namespace {

using testing::AllClose;
using testing::error_of;
using testing::values;
using V = std::vector<double>;

/// sin(0), sin(1), ... (torch.sin(torch.arange(n, dtype=torch.float64))), or cos(k * step).
Tensor wave(Shape shape, bool cosine = false, double step = 1) {
  V v(static_cast<size_t>(numel(shape)));
  for (size_t k = 0; k < v.size(); ++k) {
    const double a = static_cast<double>(k) * step;
    v[k] = cosine ? std::cos(a) : std::sin(a);
  }
  return from_vector<double>(v, std::move(shape));
}

Tensor t(const V& v, Shape shape) { return from_vector<double>(v, std::move(shape)); }

std::set<std::string> keys(const nn::Module& m) {
  std::set<std::string> out;
  for (const auto& [k, _] : m.state_dict()) out.insert(k);
  return out;
}

// gn = nn.GroupNorm(2, 4).double(), weight [0.5, -1.5, 2, 1], bias [0.25, 0, -1, 0.5], applied to
// torch.sin(torch.arange(24.)).reshape(2, 4, 3); nn.GroupNorm(4, 4, eps=1e-3, affine=False).
TEST(GroupNorm, GivesPyTorchsValues) {
  nn::GroupNorm gn(2, 4);
  EXPECT_EQ(values(gn.weight), V(4, 1));
  EXPECT_EQ(values(gn.bias), V(4, 0));
  EXPECT_EQ(keys(gn), (std::set<std::string>{"weight", "bias"}));
  EXPECT_EQ(gn.str(), "GroupNorm(2, 4, eps=1e-05, affine=true)");
  gn.to(DType::F64);
  testing::set_values(gn.weight, {0.5, -1.5, 2, 1});
  testing::set_values(gn.bias, {0.25, 0, -1, 0.5});
  const Tensor x = wave({2, 4, 3});
  EXPECT_TRUE(AllClose(
      gn.forward(x),
      t({0.2293829128992952,  0.8202724946161162,  0.8679009199294131,  -0.23543650276763312,
         1.656154753525932,   2.0819507315761747,  -1.909453143317016,  0.7636329752284958,
         1.7124326854559018,  1.0323119546980852,  -0.3324027817504478, -0.983215431631328,
         -0.17156660924349762, 0.520918853382908,  0.9338018171592224,  -1.3124387678905352,
         0.724740929642126,   2.187160022144307,   -3.3327820930429817, -0.7055216881241084,
         1.519872416647865,   1.6486915721381576,  0.41578305285889783, -0.8052589427374429},
        {2, 4, 3}),
      1e-12, 1e-12));
  nn::GroupNorm plain(4, 4, 1e-3, false);
  EXPECT_TRUE(keys(plain).empty());
  EXPECT_EQ(plain.str(), "GroupNorm(4, 4, eps=0.001, affine=false)");
  EXPECT_TRUE(AllClose(
      plain.forward(x),
      t({-1.4069339408860746, 0.6217080215749885,   0.7852259193110864,  1.3899541065314882,
         -0.4840576331907664, -0.9058964733407218,  -1.3659887944483795, 0.3741646399529269,
         0.9918241544954524,  1.3396488799938682,   -0.28293184214557754, -1.0567170378482906,
         -1.312420023483859,  0.20410775333091463,  1.108312270152944,   1.28455596739788,
         -0.1333468851381637, -1.1512090822597163,  -1.255760491568549,  0.06746705388742194,
         1.1882934376811272,  1.225416868039061,    -0.003944126464104787, -1.221472741574956},
        {2, 4, 3}),
      1e-12, 1e-12));
}

/// A module whose input is a parameter too, so that expect_gradients_match checks its gradient.
template <class Layer>
struct WithInput : nn::Module {
  WithInput(std::shared_ptr<Layer> layer, const Tensor& x) : layer(layer) {
    register_module("layer", layer);
    input = register_parameter("input", x.detach());
  }
  Tensor forward() { return layer->forward(input); }
  std::shared_ptr<Layer> layer;
  Tensor input;
};

TEST(GroupNorm, GradientsMatchCentralDifferences) {
  manual_seed(5);
  auto gn = std::make_shared<nn::GroupNorm>(3, 6);
  gn->to(DType::F64);
  testing::set_values(gn->weight, values(randn({6}, DType::F64)));
  testing::set_values(gn->bias, values(randn({6}, DType::F64)));
  WithInput<nn::GroupNorm> m(gn, randn({2, 6, 2, 2}, DType::F64));
  testing::expect_gradients_match(m, [&] { return m.forward(); });
}

TEST(GroupNorm, LazyMatchesEager) {
  manual_seed(6);
  nn::GroupNorm gn(2, 4);
  testing::set_values(gn.weight, {0.5, -1.5, 2, 1});
  const Tensor x = randn({3, 4, 5});
  const std::vector<float> eager = gn.forward(x).to_vector<float>();
  ModeGuard lazy(Mode::Lazy);
  const Tensor y = gn.forward(x);
  mark_step();
  EXPECT_TRUE(AllClose(y, from_vector<float>(eager, {3, 4, 5}), 1e-5, 1e-5));
}

TEST(GroupNorm, BadArguments) {
  EXPECT_EQ(error_of([] { nn::GroupNorm(3, 4); }),
            "GroupNorm: num_channels must be divisible by num_groups");
  EXPECT_EQ(error_of([] { nn::GroupNorm(0, 4); }), "GroupNorm: num_groups must be >= 1, got 0");
  nn::GroupNorm gn(2, 4);
  const std::string e = error_of([&] { gn.forward(zeros({2, 3, 4})); });
  EXPECT_EQ(e.substr(0, e.find(" at ")),
            "GroupNorm(num_groups=2, num_channels=4): input f32[2,3,4] is not [N, 4, *]");
}

// bn = nn.BatchNorm1d(3, momentum=0.2).double(), weight [0.5, -1.5, 2], bias [0.25, 0, -1]; in
// training mode on x2 = torch.cos(torch.arange(12.)).reshape(4, 3), then on
// x3 = torch.cos(torch.arange(24.) * 0.7).reshape(2, 3, 4); then bn.eval() on x2.
TEST(BatchNorm1d, GivesPyTorchsValuesAndRunningStatistics) {
  nn::BatchNorm1d bn(3, {.momentum = 0.2});
  EXPECT_EQ(keys(bn), (std::set<std::string>{"weight", "bias", "running_mean", "running_var",
                                             "num_batches_tracked"}));
  EXPECT_EQ(bn.str(),
            "BatchNorm1d(3, eps=1e-05, momentum=0.2, affine=true, track_running_stats=true)");
  bn.to(DType::F64);
  testing::set_values(bn.weight, {0.5, -1.5, 2});
  testing::set_values(bn.bias, {0.25, 0, -1});
  const Tensor x2 = wave({4, 3}, true), x3 = wave({2, 3, 4}, true, 0.7);
  EXPECT_TRUE(AllClose(bn.forward(x2),
                       t({0.7600454321528564, -1.257171637401904, -3.748382912265569,
                          -0.27014875583944575, 1.2871896842796748, 1.7823257756074753,
                          0.7394260884757877, -1.712364318280736, -1.6094155995108252,
                          -0.22932276478919825, 1.6823462714029653, -0.42452726383108086},
                         {4, 3}),
                       1e-12, 1e-12));
  EXPECT_TRUE(AllClose(
      bn.forward(x3),
      t({1.0987521130594335,  0.9296613798570118,  0.5019151941904335,  0.016689270897210236,
         2.089634094054373,   2.0777150272225797,  1.155315084355852,   -0.2437466285189074,
         0.9907754062056346,  1.6071108810611585,  0.9312457976055386,  -0.7189499347288023,
         0.00630432446948105, -0.3017613122673081, -0.2893250678518495, 0.03776409764558743,
         -0.27784079444393095, -1.4831848204726112, -1.9242628835702298, -1.3936290786271244,
         -0.7646658725602999, -2.60664681084843,   -3.7590322231624627, -3.6798372435723365},
        {2, 3, 4}),
      1e-12, 1e-12));
  EXPECT_TRUE(AllClose(bn.running_mean,
                       t({-0.03371335464248201, 0.005780362368027311, -0.0007231658278481629},
                         {3}),
                       1e-14, 1e-12));
  EXPECT_TRUE(AllClose(bn.running_var,
                       t({0.9495203906366267, 0.8660321663722329, 0.7747392289930581}, {3}),
                       1e-14, 1e-12));
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 2);
  bn.eval();
  EXPECT_TRUE(AllClose(bn.forward(x2),
                       t({0.7804148771059357, -0.861563474506141, -1.9439318890144455,
                          -0.24068214247462294, 1.0628854906227267, -0.3538153437732048,
                          0.7599776133164807, -1.205852265640788, -1.3289641686571612,
                          -0.20021666686941425, 1.3617654801403638, -0.9883006744906848},
                         {4, 3}),
                       1e-12, 1e-12));
}

TEST(BatchNorm1d, GradientsMatchCentralDifferences) {
  manual_seed(7);
  auto bn = std::make_shared<nn::BatchNorm1d>(3);
  bn->to(DType::F64);
  testing::set_values(bn->weight, {0.5, 2, -1});
  WithInput<nn::BatchNorm1d> m(bn, randn({4, 3, 5}, DType::F64));
  testing::expect_gradients_match(m, [&] { return m.forward(); });
}

TEST(BatchNorm1d, BadArgumentsAndSyncConversion) {
  nn::BatchNorm1d bn(3);
  const std::string rank = error_of([&] { bn.forward(zeros({2, 3, 4, 5})); });
  EXPECT_EQ(rank.substr(0, rank.find(" at ")),
            "BatchNorm1d: expected 2D or 3D input (got 4D input)");
  const std::string ch = error_of([&] { bn.forward(zeros({2, 4})); });
  EXPECT_EQ(ch.substr(0, ch.find(" at ")),
            "BatchNorm1d(num_features=3): input f32[2,4] is not [N, 3] or [N, 3, L]");
  EXPECT_EQ(error_of([] { nn::BatchNorm1d(0); }), "BatchNorm1d: num_features must be >= 1, got 0");
  EXPECT_EQ(nn::convert_sync_batchnorm(bn), 1);
  EXPECT_EQ(bn.name(), "SyncBatchNorm");
}

}  // namespace
}  // namespace lt
