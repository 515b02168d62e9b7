// The format against an independent implementation: tests/support/read_safetensors.py (only
// Python's json and struct) reads what lt::save writes, and lt::load reads what it writes.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "lt/lt.h"
#include "tests/support/scratch_dir.h"

namespace lt {
namespace {

using nlohmann::json;
using testing::ScratchDir;

/// Runs the script with `mode` on `path` and parses what it prints.
json run_script(const std::string& mode, const std::string& path) {
  const std::string cmd =
      std::string(LT_PYTHON) + " '" + LT_SAFETENSORS_SCRIPT + "' " + mode + " '" + path + "'";
  FILE* pipe = popen(cmd.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  if (!pipe) return {};
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  EXPECT_EQ(pclose(pipe), 0) << cmd;
  return json::parse(out);
}

const char* format_dtype(DType t) {
  switch (t) {
    case DType::Bool: return "BOOL";
    case DType::I32: return "I32";
    case DType::I64: return "I64";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::F32: return "F32";
    case DType::F64: return "F64";
  }
  return "?";
}

/// The script's account of one tensor equals the tensor, bit for bit (NaN aside).
void expect_same(const json& seen, const Tensor& t) {
  EXPECT_EQ(seen.at("dtype"), format_dtype(t.dtype()));
  EXPECT_EQ(seen.at("shape").get<Shape>(), t.shape());
  const json& values = seen.at("values");
  ASSERT_EQ(values.size(), static_cast<size_t>(t.numel()));
  if (is_float(t.dtype())) {
    const auto v = cast(t, DType::F64).to_vector<double>();  // exact from every float type
    for (size_t i = 0; i < v.size(); ++i) {
      const double e = std::strtod(values[i].get<std::string>().c_str(), nullptr);
      EXPECT_EQ(std::bit_cast<uint64_t>(e), std::bit_cast<uint64_t>(v[i]))
          << "element " << i << ": script " << values[i] << ", lazytrain " << v[i];
    }
  } else if (t.dtype() == DType::Bool) {
    EXPECT_EQ(values.get<std::vector<bool>>(), t.to_vector<bool>());
  } else {
    EXPECT_EQ(values.get<std::vector<int64_t>>(), t.to_vector<int64_t>());
  }
}

TEST(SafetensorsInterop, AnIndependentReaderReadsWhatSaveWrites) {
  ScratchDir dir;
  TensorDict tensors;
  tensors["layer.0.weight"] =
      from_vector<float>({0.5f, -0.0f, 1e-40f, 3.4e38f, -1.25f, 7.0f}, {2, 3});
  tensors["layer.0.bias"] = from_vector<double>({0.1, -1e-300, 2.5}, {3});
  tensors["ids"] = from_vector<int32_t>({INT32_MIN, 0, INT32_MAX}, {3, 1});
  tensors["optim.0.step"] = from_vector<int64_t>({INT64_MIN + 1, INT64_MAX}, {2});
  tensors["mask"] = from_vector<bool>({true, false, true}, {3});
  tensors["half"] = cast(from_vector<float>({1.0f, -2.0f, 0.333251953125f}, {3}), DType::F16);
  tensors["brain"] = cast(from_vector<float>({1.0f, -2.0f, 3.140625f, 1e20f}, {2, 2}), DType::BF16);
  tensors["lr"] = scalar(0.001);
  tensors["nothing"] = zeros({0, 5}, DType::I64);
  tensors["caf\xc3\xa9"] = ones({1});
  const StringDict metadata = {{"step", "40"}, {"rng", "key=1,counter=2"}, {"z", "\xc3\xa9"}};
  const std::string path = dir.path("model.safetensors");
  save(path, tensors, metadata);

  const json seen = run_script("read", path);
  EXPECT_EQ(seen.at("metadata").get<StringDict>(), metadata);
  ASSERT_EQ(seen.at("tensors").size(), tensors.size());
  for (const auto& [name, t] : tensors) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(seen.at("tensors").contains(name));
    expect_same(seen.at("tensors").at(name), t);
  }
}

TEST(SafetensorsInterop, LoadReadsWhatAnIndependentWriterWrites) {
  ScratchDir dir;
  const std::string path = dir.path("python.safetensors");
  const json written = run_script("write", path);
  const Checkpoint c = load(path);
  EXPECT_EQ(c.metadata, written.at("metadata").get<StringDict>());
  ASSERT_EQ(c.tensors.size(), written.at("tensors").size());
  for (const auto& [name, seen] : written.at("tensors").items()) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(c.tensors.contains(name));
    expect_same(seen, c.tensors.at(name));
  }
}

}  // namespace
}  // namespace lt
