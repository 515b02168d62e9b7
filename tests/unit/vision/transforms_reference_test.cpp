// lt::vision against torchvision 0.14 and PIL (tests/data/vision_cases.json, made by
// vision_cases.py): resized_crop, resize and center_crop of a fixed image to 1e-5, and the
// decoding of a JPEG file PIL wrote, pixel for pixel within libjpeg's IDCT rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lt/lt.h"
#include "lt/vision.h"

namespace lt {
namespace {

using json = nlohmann::json;

const json& all() {
  static const json a = [] {
    std::ifstream f(LT_VISION_CASES);
    return json::parse(f);
  }();
  return a;
}

Tensor tensor(const json& t) {
  return from_vector(t["values"].get<std::vector<float>>(), t["shape"].get<Shape>());
}

void expect_close(const Tensor& got, const json& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want["shape"].get<Shape>()) << what;
  const std::vector<float> g = got.to_vector<float>(), w = want["values"].get<std::vector<float>>();
  float worst = 0;
  for (size_t i = 0; i < g.size(); ++i) worst = std::max(worst, std::abs(g[i] - w[i]));
  EXPECT_LE(worst, 1e-5f) << what;
}

TEST(VisionReference, TransformsMatchTorchvision) {
  const Tensor image = tensor(all()["image"]);
  int checked = 0;
  for (const json& c : all()["cases"]) {
    const std::string op = c["op"];
    if (op == "resized_crop") {
      const auto b = c["box"].get<std::vector<int64_t>>();
      const auto out = c["out"].get<std::vector<int64_t>>();
      expect_close(vision::resized_crop(image, {b[0], b[1], b[2], b[3]}, out[0], out[1]),
                   c["output"], c.dump());
    } else if (op == "resize") {
      expect_close(vision::resize(image, c["size"].get<int64_t>()), c["output"], c.dump());
    } else {
      expect_close(vision::center_crop(image, c["size"].get<int64_t>()), c["output"], c.dump());
    }
    ++checked;
  }
  EXPECT_EQ(checked, 12);
}

TEST(VisionReference, DecodesAJpegAsPillowDoes) {
  const json& j = all()["jpeg"];
  const auto bytes = j["bytes"].get<std::vector<uint8_t>>();
  const vision::Image img = vision::decode_jpeg(bytes, "case.jpg");
  ASSERT_EQ(img.height, j["height"].get<int64_t>());
  ASSERT_EQ(img.width, j["width"].get<int64_t>());
  const auto want = j["decoded_rgb"].get<std::vector<int>>();
  const auto source = j["source_rgb"].get<std::vector<int>>();
  ASSERT_EQ(img.rgb.size(), want.size());
  int worst = 0, worst_source = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(int(img.rgb[i]) - want[i]));
    worst_source = std::max(worst_source, std::abs(int(img.rgb[i]) - source[i]));
  }
  EXPECT_LE(worst, 1);  // the same library; its DCT method may differ by a rounding step
  EXPECT_GT(worst_source, 0);  // lossy: the check above compares decoders, not images
  // to_tensor: channels first, in [0, 1].
  const std::vector<float> t = vision::to_tensor(img).to_vector<float>();
  const int64_t plane = img.height * img.width;
  EXPECT_FLOAT_EQ(t[static_cast<size_t>(2 * plane + 5)], img.rgb[5 * 3 + 2] / 255.f);
}

}  // namespace
}  // namespace lt
