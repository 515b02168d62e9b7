// lt::vision's files and draws: JPEG written and read back, corrupt files refused by name,
// ImageFolder's classes and order, RandomResizedCrop's boxes within torchvision's bounds, the
// flip and Normalize by their definitions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "lt/lt.h"
#include "lt/vision.h"
#include "tests/support/error_of.h"
#include "tests/support/scratch_dir.h"

namespace lt {
namespace {

using ::testing::HasSubstr;
using testing::error_of;

/// A smooth image (JPEG keeps it within a few levels).
vision::Image gradient(int64_t h, int64_t w, int tint) {
  vision::Image img{h, w, std::vector<uint8_t>(static_cast<size_t>(h * w * 3))};
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        img.rgb[static_cast<size_t>((y * w + x) * 3 + c)] =
            static_cast<uint8_t>(std::min<int64_t>(x * 4 + y * 3 + c * 30 + tint, 255));
  return img;
}

TEST(Jpeg, WrittenAndReadBackCloseToTheImage) {
  testing::ScratchDir dir;
  const vision::Image img = gradient(20, 30, 0);
  vision::write_jpeg(dir.path("a.jpg"), img, 95);
  const vision::Image back = vision::read_jpeg(dir.path("a.jpg"));
  ASSERT_EQ(back.height, 20);
  ASSERT_EQ(back.width, 30);
  double err = 0;
  for (size_t i = 0; i < img.rgb.size(); ++i) err += std::abs(int(img.rgb[i]) - int(back.rgb[i]));
  EXPECT_LT(err / static_cast<double>(img.rgb.size()), 3.0);
  EXPECT_EQ(dir.list(), std::vector<std::string>{"a.jpg"});  // no temporary left behind
}

TEST(Jpeg, CorruptAndMissingFilesNameTheFile) {
  testing::ScratchDir dir;
  {
    std::ofstream(dir.path("text.jpg")) << "not an image";
  }
  EXPECT_EQ(error_of([&] { vision::read_jpeg(dir.path("text.jpg")); }),
            dir.path("text.jpg") + ": not a JPEG file (no start-of-image marker)");
  EXPECT_EQ(error_of([&] { vision::read_jpeg(dir.path("none.jpg")); }),
            dir.path("none.jpg") + ": cannot open the file");
  // A real JPEG cut after its header: libjpeg's own words after the file's name.
  vision::write_jpeg(dir.path("whole.jpg"), gradient(16, 16, 1));
  std::ifstream in(dir.path("whole.jpg"), std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  bytes.resize(20);
  EXPECT_THAT(error_of([&] { vision::decode_jpeg(bytes, "cut.jpg"); }),
              ::testing::StartsWith("cut.jpg: cannot decode the JPEG: "));
  // Cut inside its data: libjpeg would finish it in grey; PIL calls it truncated.
  vision::write_jpeg(dir.path("big.jpg"), gradient(64, 64, 2));
  std::ifstream big(dir.path("big.jpg"), std::ios::binary);
  std::vector<uint8_t> data((std::istreambuf_iterator<char>(big)), {});
  data.resize(data.size() * 3 / 4);
  EXPECT_EQ(error_of([&] { vision::decode_jpeg(data, "part.jpg"); }),
            "part.jpg: cannot decode the JPEG: Premature end of JPEG file");
  EXPECT_EQ(error_of([&] { vision::write_jpeg(dir.path("q.jpg"), gradient(2, 2, 0), 0); }),
            "write_jpeg " + dir.path("q.jpg") + ": quality must be in [1, 100], got 0");
}

TEST(ImageFolder, ClassesSortedFilesSortedLabelsByClass) {
  testing::ScratchDir dir;
  for (const std::string cls : {"zebra", "ant", "moth"}) {
    std::filesystem::create_directories(dir.path(cls));
    for (const std::string f : {"b.JPG", "a.jpeg"})
      vision::write_jpeg(dir.path(cls + "/" + f), gradient(8, 12, int(cls[0])));
    std::ofstream(dir.path(cls + "/notes.txt")) << "skipped";
  }
  const vision::ImageFolder folder(dir.str());
  EXPECT_EQ(folder.classes(), (std::vector<std::string>{"ant", "moth", "zebra"}));
  ASSERT_EQ(folder.size(), 6);
  EXPECT_EQ(folder.sample(0).first, dir.path("ant/a.jpeg"));
  EXPECT_EQ(folder.sample(1).first, dir.path("ant/b.JPG"));
  EXPECT_EQ(folder.sample(5).first, dir.path("zebra/b.JPG"));
  const data::Example e = folder.get(3);
  EXPECT_EQ(e[0].shape(), (Shape{3, 8, 12}));
  EXPECT_EQ(e[1].item<int64_t>(), 1);
  EXPECT_EQ(e[1].dtype(), DType::I64);
  EXPECT_EQ(error_of([&] { folder.get(6); }),
            "ImageFolder: index 6 is out of range for 6 images");
}

TEST(ImageFolder, EmptyClassAndMissingRootAreRefused) {
  testing::ScratchDir dir;
  EXPECT_EQ(error_of([&] { vision::ImageFolder f(dir.path("none")); }),
            "ImageFolder: " + dir.path("none") + " is not a directory");
  EXPECT_EQ(error_of([&] { vision::ImageFolder f(dir.str()); }),
            "ImageFolder: " + dir.str() + " has no class folders (root/<class>/<image>)");
  std::filesystem::create_directories(dir.path("cat"));
  std::filesystem::create_directories(dir.path("dog"));
  vision::write_jpeg(dir.path("cat/1.jpg"), gradient(4, 4, 0));
  EXPECT_EQ(error_of([&] { vision::ImageFolder f(dir.str()); }),
            "ImageFolder: found no valid file for the class dog in " + dir.str() +
                " (supported extensions: .jpg, .jpeg)");
}

TEST(RandomResizedCrop, BoxesStayInTorchvisionsBounds) {
  std::set<std::vector<int64_t>> distinct;
  for (uint64_t i = 0; i < 500; ++i) {
    vision::Rng rng({3, i});
    const vision::CropBox b = vision::random_resized_crop_box(60, 80, rng);
    ASSERT_GE(b.top, 0);
    ASSERT_GE(b.left, 0);
    ASSERT_LE(b.top + b.height, 60);
    ASSERT_LE(b.left + b.width, 80);
    const double area = double(b.height * b.width) / (60.0 * 80.0);
    const double ratio = double(b.width) / double(b.height);
    // Rounding the sides to pixels moves the area and ratio a little past the drawn ones.
    EXPECT_GE(area, 0.08 * 0.8) << i;
    EXPECT_LE(ratio, 4.0 / 3.0 * 1.35) << i;
    EXPECT_GE(ratio, 3.0 / 4.0 / 1.35) << i;
    distinct.insert({b.top, b.left, b.height, b.width});
  }
  EXPECT_GT(distinct.size(), 400u);
  // Same draws, same box; a tall sliver that no draw fits falls back to a centred crop at the
  // nearest ratio in range.
  vision::Rng a({1, 2}), b({1, 2});
  const vision::CropBox x = vision::random_resized_crop_box(60, 80, a),
                        y = vision::random_resized_crop_box(60, 80, b);
  EXPECT_EQ(std::vector<int64_t>({x.top, x.left, x.height, x.width}),
            std::vector<int64_t>({y.top, y.left, y.height, y.width}));
  vision::Rng r({5});
  const vision::CropBox f = vision::random_resized_crop_box(100, 2, r, {0.9, 1.0}, {1.0, 1.0});
  EXPECT_EQ(std::vector<int64_t>({f.top, f.left, f.height, f.width}),
            std::vector<int64_t>({49, 0, 2, 2}));
}

TEST(Transforms, FlipAndNormalizeByDefinition) {
  const Tensor x = from_vector(std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, {3, 1, 2});
  int flipped = 0;
  for (uint64_t i = 0; i < 200; ++i) {
    vision::Rng rng({i});
    const std::vector<float> y = vision::random_horizontal_flip(x, rng).to_vector<float>();
    if (y[0] == 0.2f) {
      EXPECT_EQ(y, (std::vector<float>{0.2f, 0.1f, 0.4f, 0.3f, 0.6f, 0.5f}));
      ++flipped;
    } else {
      EXPECT_EQ(y, x.to_vector<float>());
    }
  }
  EXPECT_GT(flipped, 70);
  EXPECT_LT(flipped, 130);
  const std::vector<float> n = vision::normalize(x).to_vector<float>();
  EXPECT_FLOAT_EQ(n[0], (0.1f - 0.485f) / 0.229f);
  EXPECT_FLOAT_EQ(n[3], (0.4f - 0.456f) / 0.224f);
  EXPECT_FLOAT_EQ(n[5], (0.6f - 0.406f) / 0.225f);
  EXPECT_THAT(error_of([&] { vision::center_crop(x, 2); }),
              HasSubstr("center_crop: 2x2 does not fit in the 1x2 image"));
  EXPECT_THAT(error_of([&] { vision::resized_crop(x, {0, 1, 1, 2}, 4, 4); }),
              HasSubstr("resized_crop: box (top 0, left 1, 1x2) is not inside the 1x2 image"));
}

TEST(Rng, DrawsDependOnTheWholeSeed) {
  vision::Rng a({1, 2, 3}), b({1, 2, 3}), c({1, 2, 4}), d({1, 2});
  const uint64_t va = a.next();
  EXPECT_EQ(va, b.next());
  EXPECT_NE(va, c.next());
  EXPECT_NE(va, d.next());
  double sum = 0, sq = 0;
  vision::Rng n({9});
  for (int i = 0; i < 20000; ++i) {
    const double v = n.normal();
    sum += v;
    sq += v * v;
  }
  EXPECT_NEAR(sum / 20000, 0, 0.03);
  EXPECT_NEAR(sq / 20000, 1, 0.04);
}

}  // namespace
}  // namespace lt
