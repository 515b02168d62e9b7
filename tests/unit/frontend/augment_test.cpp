// pad_images and random_crop_flip against direct definitions: padding by index arithmetic, and
// every augmented image matched to one shift in [-pad, pad]^2 (and mirror) of its input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "lt/data.h"
#include "lt/lt.h"

namespace lt {
namespace {

Tensor ramp(int64_t n, int64_t c, int64_t h, int64_t w) {
  std::vector<float> v(static_cast<size_t>(n * c * h * w));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) + 1;
  return from_vector(v, {n, c, h, w});
}

TEST(Augment, PadImagesPlacesTheImageInAFilledBorder) {
  const Tensor x = ramp(2, 1, 3, 4);
  const std::vector<float> in = x.to_vector<float>(), out =
      data::pad_images(x, 2, -0.5).to_vector<float>();
  ASSERT_EQ(out.size(), 2u * 7 * 8);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t y = 0; y < 7; ++y)
      for (int64_t xx = 0; xx < 8; ++xx) {
        const bool inside = y >= 2 && y < 5 && xx >= 2 && xx < 6;
        const float want = inside ? in[static_cast<size_t>((i * 3 + y - 2) * 4 + xx - 2)] : -0.5f;
        EXPECT_EQ(out[static_cast<size_t>((i * 7 + y) * 8 + xx)], want) << i << " " << y << " " << xx;
      }
}

/// The shift (dy, dx, mirror) that turns image i of `in` into image i of `out`, or -99.
std::vector<int> find_shift(const std::vector<float>& in, const std::vector<float>& out, int64_t i,
                            int64_t c, int64_t h, int64_t w, int64_t pad, float fill) {
  for (int mirror = 0; mirror < 2; ++mirror)
    for (int64_t dy = -pad; dy <= pad; ++dy)
      for (int64_t dx = -pad; dx <= pad; ++dx) {
        bool same = true;
        for (int64_t ch = 0; ch < c && same; ++ch)
          for (int64_t y = 0; y < h && same; ++y)
            for (int64_t x = 0; x < w && same; ++x) {
              const int64_t sy = y + dy, sx = (mirror ? w - 1 - x : x) + dx;
              const float want = sy >= 0 && sy < h && sx >= 0 && sx < w
                                     ? in[static_cast<size_t>(((i * c + ch) * h + sy) * w + sx)]
                                     : fill;
              same = out[static_cast<size_t>(((i * c + ch) * h + y) * w + x)] == want;
            }
        if (same) return {static_cast<int>(dy), static_cast<int>(dx), mirror};
      }
  return {-99, -99, -99};
}

TEST(Augment, RandomCropFlipShiftsAndMirrorsEachImageWithinThePad) {
  const int64_t n = 64, c = 2, h = 5, w = 6, pad = 2;
  const Tensor x = ramp(n, c, h, w);
  const std::vector<float> in = x.to_vector<float>();
  const std::vector<float> out =
      data::random_crop_flip(x, pad, /*flip=*/true, 0.f, /*seed=*/9, /*epoch=*/1, /*batch=*/3)
          .to_vector<float>();
  int mirrored = 0;
  std::vector<int> shifts_seen(25, 0);
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<int> s = find_shift(in, out, i, c, h, w, pad, 0.f);
    ASSERT_NE(s[0], -99) << "image " << i << " is no shift of its input";
    mirrored += s[2];
    ++shifts_seen[static_cast<size_t>((s[0] + 2) * 5 + s[1] + 2)];
  }
  EXPECT_GT(mirrored, 16);  // about half of 64
  EXPECT_LT(mirrored, 48);
  int distinct = 0;
  for (int k : shifts_seen) distinct += k > 0;
  EXPECT_GT(distinct, 12);  // 64 draws over 25 shifts
}

TEST(Augment, RandomCropFlipDependsOnSeedEpochAndBatchOnly) {
  const Tensor x = ramp(8, 1, 6, 6);
  auto run = [&](uint64_t seed, int64_t epoch, int64_t batch) {
    return data::random_crop_flip(x, 2, true, 0.f, seed, epoch, batch).to_vector<float>();
  };
  EXPECT_EQ(run(1, 2, 3), run(1, 2, 3));
  EXPECT_NE(run(1, 2, 3), run(1, 2, 4));
  EXPECT_NE(run(1, 2, 3), run(1, 3, 3));
  EXPECT_NE(run(1, 2, 3), run(2, 2, 3));
  // No pad, no flip: the identity.
  EXPECT_EQ(data::random_crop_flip(x, 0, false, 0.f, 1, 2, 3).to_vector<float>(),
            x.to_vector<float>());
}

TEST(Augment, RandomCropFlipOfSomeRowsIsThoseRowsOfTheWholeBatch) {
  const Tensor x = ramp(8, 2, 5, 5);
  const std::vector<float> whole =
      data::random_crop_flip(x, 2, true, 0.f, 4, 1, 7).to_vector<float>();
  const int64_t per_row = 2 * 5 * 5;
  for (int64_t first : {0, 3, 6}) {
    const std::vector<float> part =
        data::random_crop_flip(slice(x, 0, first, first + 2), 2, true, 0.f, 4, 1, 7, first)
            .to_vector<float>();
    const std::vector<float> want(whole.begin() + first * per_row,
                                  whole.begin() + (first + 2) * per_row);
    EXPECT_EQ(part, want) << "rows from " << first;
  }
  EXPECT_THROW(data::random_crop_flip(x, 2, true, 0.f, 4, 1, 7, -1), Error);
}

TEST(Augment, BadInputsNameTheProblem) {
  try {
    data::pad_images(ones({2, 3}), 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()),
                ::testing::StartsWith("pad_images: needs f32 images [N, C, H, W], got f32[2,3]"));
  }
  EXPECT_THROW(data::random_crop_flip(ramp(1, 1, 2, 2), -1, false, 0, 0, 0, 0), Error);
}

}  // namespace
}  // namespace lt
