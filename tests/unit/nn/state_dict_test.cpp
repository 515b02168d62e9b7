// state_dict / load_state_dict: round trips through a safetensors file, the exact strict error
// (which changes nothing), the non-strict report (which loads what matches, whole tensors only),
// buffers and non-persistent buffers.
#include <gtest/gtest.h>

#include "tests/support/scratch_dir.h"
#include "tests/unit/nn/nn_testing.h"

namespace lt {
namespace {

using testing::error_of;
using testing::snapshot;

std::shared_ptr<nn::Sequential> make_net(uint64_t seed) {
  manual_seed(seed);
  return std::make_shared<nn::Sequential>(
      std::make_shared<nn::Conv2d>(1, 2, 3), std::make_shared<nn::BatchNorm2d>(2),
      std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(8, 3));
}

TEST(StateDict, SaveThenLoadIntoADifferentlyInitializedModel) {
  testing::ScratchDir dir;
  auto a = make_net(1), b = make_net(2);
  manual_seed(9);
  const Tensor x = randn({4, 1, 4, 4});
  a->forward(x);  // running statistics and num_batches_tracked move away from their defaults
  save(dir.path("a.safetensors"), a->state_dict());
  ASSERT_NE(snapshot(a->state_dict()), snapshot(b->state_dict()));
  const LoadReport r = b->load_state_dict(load(dir.path("a.safetensors")).tensors);
  EXPECT_TRUE(r.clean());
  EXPECT_EQ(snapshot(b->state_dict()), snapshot(a->state_dict()));
  EXPECT_EQ(b->at<nn::BatchNorm2d>(1)->num_batches_tracked.item<int64_t>(), 1);
  EXPECT_EQ(b->at<nn::BatchNorm2d>(1)->num_batches_tracked.dtype(), DType::I64);
  a->eval();
  b->eval();
  EXPECT_EQ(a->forward(x).to_vector<float>(), b->forward(x).to_vector<float>());
  // Loaded parameters stay trainable leaves.
  for (const Tensor& p : b->parameters()) EXPECT_TRUE(p.requires_grad());
}

TEST(StateDict, StrictMismatchThrowsListingEverythingAndChangesNothing) {
  auto net = make_net(1);
  const auto before = snapshot(net->state_dict());
  TensorDict source = make_net(2)->state_dict();
  source.erase("3.bias");
  source["3.b"] = zeros({3});
  source["3.weight"] = zeros({8, 3});
  source["1.running_var"] = ones({3});
  const int line = __LINE__ + 1;
  EXPECT_EQ(error_of([&] { net->load_state_dict(source); }),
            "load_state_dict: tensors do not match (missing: 3.bias; unexpected: 3.b; shape "
            "mismatch: 1.running_var: expected [2], found [3]; shape mismatch: 3.weight: "
            "expected [3,8], found [8,3]) at state_dict_test.cpp:" +
                std::to_string(line));
  // Nothing changed, the tensors that did match included.
  EXPECT_EQ(snapshot(net->state_dict()), before);
}

TEST(StateDict, NonStrictLoadsWholeMatchingTensorsAndReportsTheRest) {
  auto net = make_net(1);
  const auto before = snapshot(net->state_dict());
  TensorDict source = make_net(2)->state_dict();
  const auto other = snapshot(source);
  source.erase("3.bias");
  source["3.b"] = zeros({3});
  source["3.weight"] = zeros({8, 3});  // transposed: skipped whole, never half-copied
  const LoadReport r = net->load_state_dict(source, /*strict=*/false);
  EXPECT_EQ(r.missing, std::vector<std::string>{"3.bias"});
  EXPECT_EQ(r.unexpected, std::vector<std::string>{"3.b"});
  ASSERT_EQ(r.shape_mismatch.size(), 1u);
  EXPECT_EQ(r.shape_mismatch[0].name, "3.weight");
  EXPECT_EQ(r.shape_mismatch[0].expected, (Shape{3, 8}));
  EXPECT_EQ(r.shape_mismatch[0].found, (Shape{8, 3}));
  EXPECT_EQ(r.str(),
            "missing: 3.bias\nunexpected: 3.b\nshape mismatch: 3.weight: expected [3,8], found "
            "[8,3]\n");
  const auto after = snapshot(net->state_dict());
  for (const auto& [name, v] : after) {
    SCOPED_TRACE(name);
    if (name == "3.bias" || name == "3.weight")
      EXPECT_EQ(v, before.at(name));
    else
      EXPECT_EQ(v, other.at(name));
  }
}

TEST(StateDict, LoadCastsToTheModuleDtype) {
  auto net = make_net(1);
  TensorDict source;
  for (const auto& [name, t] : make_net(2)->state_dict())
    source[name] = is_float(t.dtype()) ? cast(t, DType::F64) : t;
  net->load_state_dict(source);
  for (const auto& [name, t] : net->state_dict()) {
    SCOPED_TRACE(name);
    EXPECT_EQ(t.dtype(), name.ends_with("num_batches_tracked") ? DType::I64 : DType::F32);
    EXPECT_EQ(testing::values(t), testing::values(source.at(name)));
  }
}

TEST(StateDict, NonPersistentBuffersAreNotSaved) {
  nn::Module m;
  m.register_buffer("kept", zeros({2}));
  m.register_buffer("scratch", zeros({2}), /*persistent=*/false);
  m.register_parameter("w", zeros({2}));
  EXPECT_EQ(m.buffers().size(), 2u);
  const TensorDict state = m.state_dict();
  EXPECT_EQ(state.size(), 2u);
  EXPECT_TRUE(state.contains("kept"));
  EXPECT_TRUE(state.contains("w"));
  EXPECT_TRUE(m.load_state_dict({{"kept", ones({2})}, {"w", ones({2})}}).clean());
}

}  // namespace
}  // namespace lt
