// lt::save / lt::load: round trips of every dtype, the exact bytes of the format, lazy tensors,
// copy_state / load_into reports, and finding the latest checkpoint of a run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "frontend/tensor_impl.h"
#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/error_of.h"

namespace lt {
namespace {

using testing::read_bytes;
using testing::ScratchDir;

using testing::error_of;

std::string raw_bytes(const Tensor& t) {
  return std::string(static_cast<const char*>(t.impl()->data()), t.type().bytes());
}

std::string le64(uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s += static_cast<char>(v >> (8 * i));
  return s;
}

TEST(Serialize, RoundTripsEveryDtypeScalarsAndEmptyTensors) {
  ScratchDir dir;
  TensorDict tensors;
  tensors["f32"] = from_vector<float>({1.5f, -0.0f, 3e-39f, 1e30f, -7.25f, 0.1f}, {2, 3});
  tensors["f64"] = from_vector<double>({0.1, -1e300, 5e-324}, {3, 1});
  tensors["i32"] = from_vector<int32_t>({INT32_MIN, -1, 0, INT32_MAX}, {4});
  tensors["i64"] = from_vector<int64_t>({INT64_MIN, INT64_MAX}, {1, 2});
  tensors["bool"] = from_vector<bool>({true, false, false, true, true}, {5});
  tensors["f16"] =
      cast(from_vector<float>({1.0f, -0.5f, 65504.0f, 0.099975586f}, {2, 2}), DType::F16);
  tensors["bf16"] = cast(from_vector<float>({1.0f, -2.5f, 3.0e38f}, {3}), DType::BF16);
  tensors["scalar"] = scalar(42.0, DType::F64);
  tensors["empty"] = zeros({0, 4});
  tensors["empty.bool"] = zeros({3, 0}, DType::Bool);
  const StringDict metadata = {{"step", "20"}, {"config", "{\"lr\": 0.1}\n"}, {"empty", ""}};
  save(dir.path("a.safetensors"), tensors, metadata);

  const Checkpoint back = load(dir.path("a.safetensors"));
  EXPECT_EQ(back.metadata, metadata);
  ASSERT_EQ(back.tensors.size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(back.tensors.contains(name));
    const Tensor& b = back.tensors.at(name);
    EXPECT_EQ(b.type(), t.type());
    EXPECT_EQ(raw_bytes(b), raw_bytes(t));  // bit-exact, -0.0 and denormals included
    EXPECT_FALSE(is_pending(b));
  }
  // Values through the ordinary API too, not only bytes.
  EXPECT_EQ(back.tensors.at("i64").to_vector<int64_t>(),
            (std::vector<int64_t>{INT64_MIN, INT64_MAX}));
  EXPECT_EQ(cast(back.tensors.at("bf16"), DType::F32).to_vector<float>()[1], -2.5f);
  EXPECT_EQ(back.tensors.at("scalar").item<double>(), 42.0);
}

TEST(Serialize, ExactBytesOfASmallFile) {
  ScratchDir dir;
  TensorDict tensors;
  tensors["b"] = from_vector<float>({1.0f, 2.0f}, {2});
  tensors["a"] = full({}, 7, DType::I64);
  tensors["d"] = cast(from_vector<float>({1.0f}, {1}), DType::BF16);
  tensors["c"] = from_vector<bool>({true, false, true}, {3});
  save(dir.path("x.safetensors"), tensors, {{"step", "3"}, {"epoch", "1"}});

  // Metadata first with sorted keys; tensors by dtype alignment (I64, F32, BF16, BOOL), then
  // name; compact JSON padded with spaces to 264 = 8 * 33 bytes.
  const std::string header = R"({"__metadata__":{"epoch":"1","step":"3"},)"
                             R"("a":{"dtype":"I64","shape":[],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
                             R"("d":{"dtype":"BF16","shape":[1],"data_offsets":[16,18]},)"
                             R"("c":{"dtype":"BOOL","shape":[3],"data_offsets":[18,21]}}     )";
  ASSERT_EQ(header.size(), 264u);
  const std::string data(
      "\x07\0\0\0\0\0\0\0"      // a = 7
      "\0\0\x80\x3f\0\0\0\x40"  // b = 1.0f, 2.0f
      "\x80\x3f"                // d = bf16 1.0
      "\x01\x00\x01",           // c
      21);
  EXPECT_EQ(read_bytes(dir.path("x.safetensors")),
            std::string("\x08\x01\0\0\0\0\0\0", 8) + header + data);
}

// The byte vectors of the `safetensors` library's own serialization tests.
TEST(Serialize, MatchesTheSafetensorsLibrarysTestVectors) {
  ScratchDir dir;
  const Tensor t = from_vector<float>({0, 1, 2, 3, 4, 5}, {1, 2, 3});
  const std::string data = raw_bytes(t);
  save(dir.path("1.safetensors"), {{"attn.0", t}});
  EXPECT_EQ(
      read_bytes(dir.path("1.safetensors")),
      le64(64) + R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})" + data);
  // A shorter name: 7 spaces keep the data 8-byte aligned.
  save(dir.path("2.safetensors"), {{"attn0", reshape(t, {1, 1, 2, 3})}});
  EXPECT_EQ(read_bytes(dir.path("2.safetensors")),
            le64(72) +
                R"({"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}       )" +
                data);
  save(dir.path("3.safetensors"), {});
  EXPECT_EQ(read_bytes(dir.path("3.safetensors")), le64(8) + "{}      ");
  save(dir.path("4.safetensors"), {}, {{"framework", "pt"}});
  EXPECT_EQ(read_bytes(dir.path("4.safetensors")),
            le64(40) + R"({"__metadata__":{"framework":"pt"}}     )");
}

TEST(Serialize, NamesAreEscapedAsJsonStrings) {
  ScratchDir dir;
  const std::string odd = "q\"uote\\back\nline\x01 \xc3\xa9";  // quote, backslash, controls, é
  save(dir.path("n.safetensors"), {{odd, zeros({1})}}, {{"k\t", "v\x7f"}});
  const std::string bytes = read_bytes(dir.path("n.safetensors"));
  EXPECT_NE(bytes.find(R"("q\"uote\\back\nline\u0001 )"
                       "\xc3\xa9"
                       R"(":{)"),
            std::string::npos);
  EXPECT_NE(bytes.find("{\"__metadata__\":{\"k\\t\":\"v\x7f\"}"), std::string::npos);
  const Checkpoint back = load(dir.path("n.safetensors"));
  EXPECT_TRUE(back.tensors.contains(odd));
  EXPECT_EQ(back.metadata.at("k\t"), "v\x7f");
}

TEST(Serialize, SavingSeveralPendingLazyTensorsRunsOneGraph) {
  ScratchDir dir;
  ModeGuard lazy(Mode::Lazy);
  Tensor x = from_vector<float>({1, 2, 3}, {3});
  Tensor a = x * 2.0;
  Tensor b = a + 1.0;  // shares a's pending work
  Tensor c = exp(x);
  metrics::reset();
  save(dir.path("m.safetensors"), {{"a", a}, {"b", b}, {"c", c}, {"c_again", c}});
  EXPECT_EQ(metrics::counter("sync"), 1);
  EXPECT_EQ(metrics::counter("graphs_run"), 1);
  EXPECT_FALSE(is_pending(a) || is_pending(b) || is_pending(c));
  const Checkpoint back = load(dir.path("m.safetensors"));
  EXPECT_EQ(back.tensors.at("a").to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(back.tensors.at("b").to_vector<float>(), (std::vector<float>{3, 5, 7}));
  const std::vector<float> e = {std::exp(1.0f), std::exp(2.0f), std::exp(3.0f)};
  const std::vector<float> got = back.tensors.at("c").to_vector<float>();
  for (size_t i = 0; i < e.size(); ++i) EXPECT_NEAR(got[i], e[i], 1e-6f * e[i]);
  EXPECT_EQ(back.tensors.at("c_again").to_vector<float>(), got);
}

TEST(Serialize, CopyingPendingSourcesRunsOneGraph) {
  ModeGuard lazy(Mode::Lazy);
  Tensor x = from_vector<float>({1, 2}, {2});
  Tensor p = zeros({2}), q = zeros({2});
  metrics::reset();
  const LoadReport r = copy_state({{"p", p}, {"q", q}}, {{"p", x * 3.0}, {"q", x - 1.0}},
                                  /*strict=*/true, "test");
  EXPECT_TRUE(r.clean());
  EXPECT_EQ(metrics::counter("graphs_run"), 1);
  mark_step();
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{3, 6}));
  EXPECT_EQ(q.to_vector<float>(), (std::vector<float>{0, 1}));
}

TEST(Serialize, SavingAPendingLazyTensorIsOneCountedSync) {
  ScratchDir dir;
  ModeGuard lazy(Mode::Lazy);
  Tensor x = from_vector<float>({1, 2, 3}, {3});
  Tensor y = x * 2.0;
  ASSERT_TRUE(is_pending(y));
  metrics::reset();
  const int line = __LINE__ + 1;
  save(dir.path("l.safetensors"), {{"x", x}, {"y", y}});
  EXPECT_EQ(metrics::counter("sync"), 1);
  EXPECT_EQ(metrics::counter("sync: save at serialize_test.cpp:" + std::to_string(line)), 1);
  EXPECT_FALSE(is_pending(y));
  const Checkpoint back = load(dir.path("l.safetensors"));
  EXPECT_EQ(back.tensors.at("y").to_vector<float>(), (std::vector<float>{2, 4, 6}));
  // Loaded tensors are device data: lazy ops read them as graph parameters.
  Tensor z = back.tensors.at("y") + back.tensors.at("x");
  mark_step();
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{3, 6, 9}));
}

TEST(Serialize, OverwritingLeavesOnlyTheNewFile) {
  ScratchDir dir;
  save(dir.path("c.safetensors"), {{"w", full({2}, 1.0)}});
  save(dir.path("c.safetensors"), {{"w", full({3}, 2.0)}});
  EXPECT_EQ(dir.list(), (std::vector<std::string>{"c.safetensors"}));
  EXPECT_EQ(load(dir.path("c.safetensors")).tensors.at("w").to_vector<float>(),
            (std::vector<float>{2, 2, 2}));
}

TEST(Serialize, SaveErrorsNameTheFileAndTheProblem) {
  ScratchDir dir;
  const std::string path = dir.path("e.safetensors");
  int line = __LINE__ + 1;
  EXPECT_EQ(error_of([&] {
              save(path, {{"w", Tensor()}});
            }),
            "save: " + path +
                ": tensor \"w\" is undefined at serialize_test.cpp:" + std::to_string(line));
  line = __LINE__ + 1;
  EXPECT_EQ(error_of([&] {
              save(path, {{"__metadata__", zeros({1})}});
            }),
            "save: " + path +
                ": the tensor name \"__metadata__\" is the format's metadata key "
                "at serialize_test.cpp:" +
                std::to_string(line));
  line = __LINE__ + 1;
  EXPECT_EQ(error_of([&] {
              save(path, {{"bad\xff", zeros({1})}});
            }),
            "save: " + path + ": tensor name bad\\xff is not valid UTF-8 at serialize_test.cpp:" +
                std::to_string(line));
  line = __LINE__ + 1;
  EXPECT_EQ(error_of([&] {
              save(path, {}, {{"k", "\xc3"}});
            }),
            "save: " + path + ": metadata value \\xc3 is not valid UTF-8 at serialize_test.cpp:" +
                std::to_string(line));
  const std::string missing = dir.path("no/such/dir/e.safetensors");
  line = __LINE__ + 1;
  EXPECT_EQ(error_of([&] { save(missing, {}); }),
            "save: " + missing + ": cannot create " + dir.path("no/such/dir/.e.safetensors.tmp.") +
                std::to_string(getpid()) +
                ": No such file or directory at serialize_test.cpp:" + std::to_string(line));
  EXPECT_EQ(dir.list(), std::vector<std::string>{});  // nothing written, no temporary left
}

// --- copy_state / load_into ---------------------------------------------------------------

TEST(CopyState, StrictMatchCopiesValuesIntoTheCallersTensors) {
  Tensor w = zeros({2, 2}), b = zeros({2});
  w.requires_grad_();
  const TensorDict source = {{"w", from_vector<float>({1, 2, 3, 4}, {2, 2})},
                             {"b", from_vector<double>({0.5, -0.5}, {2})}};  // cast to f32
  const LoadReport r = copy_state({{"w", w}, {"b", b}}, source, /*strict=*/true);
  EXPECT_TRUE(r.clean());
  EXPECT_EQ(r.str(), "");
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_TRUE(w.requires_grad());
  EXPECT_EQ(b.dtype(), DType::F32);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{0.5f, -0.5f}));
  // The target holds its own copy: a lazy in-place update of it (which may reuse its buffer)
  // leaves the source as it was.
  EXPECT_NE(w.impl()->buffer, source.at("w").impl()->buffer);
  {
    ModeGuard lazy(Mode::Lazy);
    NoGradGuard no_grad;
    w.add_(1.0);
    mark_step();
  }
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(source.at("w").to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
}

TEST(CopyState, StrictMismatchListsEveryProblemAndChangesNothing) {
  Tensor w = zeros({2, 3}), b = zeros({3}), extra = zeros({1});
  const TensorDict source = {{"w", zeros({3, 2})}, {"b", ones({3})}, {"u", ones({1})}};
  const int line = __LINE__ + 1;
  EXPECT_EQ(error_of([&] {
              copy_state({{"w", w}, {"b", b}, {"z", extra}}, source, true);
            }),
            "state: tensors do not match (missing: z; unexpected: u; shape mismatch: w: expected "
            "[2,3], found [3,2]) at serialize_test.cpp:" +
                std::to_string(line));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{0, 0, 0}));  // not half-loaded
}

TEST(CopyState, NonStrictCopiesWhatMatchesAndReportsTheRest) {
  Tensor w = zeros({2, 3}), b = zeros({3}), z = zeros({1});
  const TensorDict source = {{"w", zeros({3, 2})}, {"b", ones({3})}, {"u", ones({1})}};
  const LoadReport r = copy_state({{"w", w}, {"b", b}, {"z", z}}, source, /*strict=*/false);
  EXPECT_EQ(r.missing, std::vector<std::string>{"z"});
  EXPECT_EQ(r.unexpected, std::vector<std::string>{"u"});
  ASSERT_EQ(r.shape_mismatch.size(), 1u);
  EXPECT_EQ(r.shape_mismatch[0].name, "w");
  EXPECT_EQ(r.str(), "missing: z\nunexpected: u\nshape mismatch: w: expected [2,3], found [3,2]\n");
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(w.shape(), (Shape{2, 3}));
  EXPECT_EQ(w.to_vector<float>(), std::vector<float>(6, 0.0f));
}

TEST(CopyState, LoadIntoReadsTheFileAndNamesItInErrors) {
  ScratchDir dir;
  const std::string path = dir.path("m.safetensors");
  save(path, {{"w", from_vector<float>({1, 2}, {2})}});
  Tensor w = zeros({2}), v = zeros({1});
  EXPECT_TRUE(load_into(path, {{"w", w}}).clean());
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, 2}));
  const int line = __LINE__ + 1;
  EXPECT_EQ(error_of([&] {
              load_into(path, {{"w", w}, {"v", v}});
            }),
            "load_into: " + path + ": tensors do not match (missing: v) at serialize_test.cpp:" +
                std::to_string(line));
}

// --- checkpoint names ---------------------------------------------------------------------

TEST(Checkpoints, LatestTakesTheHighestStepAndOnlyCheckpointNames) {
  ScratchDir dir;
  EXPECT_EQ(checkpoint_path(dir.str(), 20), dir.path("step-20.safetensors"));
  EXPECT_EQ(latest_checkpoint(dir.str()), std::nullopt);
  EXPECT_EQ(latest_checkpoint(dir.path("missing")), std::nullopt);
  for (const char* name : {"step-2.safetensors", "step-10.safetensors", "step-9.safetensors",
                           ".step-11.safetensors.tmp.123", "step-12.safetensors.bak",
                           "step-x.safetensors", "step--13.safetensors", "step-.safetensors",
                           "xstep-14.safetensors", "step-99999999999999999999.safetensors"})
    testing::write_bytes(dir.path(name), "");
  std::filesystem::create_directory(dir.path("step-15.safetensors"));  // not a file
  EXPECT_EQ(latest_checkpoint(dir.str()), dir.path("step-10.safetensors"));
  EXPECT_EQ(error_of([&] { checkpoint_path(dir.str(), -1); }), "checkpoint_path: negative step -1");
}

}  // namespace
}  // namespace lt
