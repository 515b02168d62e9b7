// Writes a small ImageFolder of generated JPEGs for the ImageNet trainer's tests, in
// torchvision's ImageNet layout: DIR/{train,val}/class_<k>/<n>.jpg, images of varied sizes and
// aspect ratios whose colour says their class, with a texture drawn from (class, split, n).
//   make_image_folder DIR CLASSES TRAIN_PER_CLASS VAL_PER_CLASS
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "lt/vision.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    fmt::print(stderr, "usage: {} DIR CLASSES TRAIN_PER_CLASS VAL_PER_CLASS\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const int classes = std::atoi(argv[2]);
  const int per_split[2] = {std::atoi(argv[3]), std::atoi(argv[4])};
  const char* splits[2] = {"train", "val"};
  for (int s = 0; s < 2; ++s)
    for (int k = 0; k < classes; ++k) {
      const std::string folder = fmt::format("{}/{}/class_{:02}", dir, splits[s], k);
      std::filesystem::create_directories(folder);
      for (int n = 0; n < per_split[s]; ++n) {
        lt::vision::Rng rng({static_cast<uint64_t>(k), static_cast<uint64_t>(s),
                             static_cast<uint64_t>(n)});
        lt::vision::Image img;
        img.height = 40 + rng.below(40);
        img.width = 40 + rng.below(60);
        img.rgb.resize(static_cast<size_t>(img.height * img.width * 3));
        // The class's colour: a point on the hue circle; texture: stripes at a random angle.
        const double hue = 6.2831853 * k / classes, fx = rng.uniform(-0.5, 0.5),
                     fy = rng.uniform(-0.5, 0.5);
        for (int64_t y = 0; y < img.height; ++y)
          for (int64_t x = 0; x < img.width; ++x) {
            const double stripe = 40 * std::sin(fx * double(x) + fy * double(y));
            for (int c = 0; c < 3; ++c) {
              const double v = 128 + 80 * std::cos(hue + 2.0944 * c) + stripe +
                               rng.uniform(-10, 10);
              img.rgb[static_cast<size_t>((y * img.width + x) * 3 + c)] =
                  static_cast<uint8_t>(std::clamp(v, 0.0, 255.0));
            }
          }
        lt::vision::write_jpeg(fmt::format("{}/{:03}.jpg", folder, n), img, 90);
      }
    }
  fmt::print("{}: {} classes, {} train and {} val images each\n", dir, classes, per_split[0],
             per_split[1]);
  return 0;
}
