// lt::vision for lazytrain.vision: the ImageFolder dataset and the ImageNet transforms, host
// work that releases the GIL, so loader threads decode and crop in parallel.
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "lt/vision.h"
#include "python/src/bind.h"

namespace lt::py {

namespace {

/// The transforms' draws come from seeds the Python side chooses (lt.manual_seed's seed, the
/// transform object, a counter per call), so a run is reproducible from lt.manual_seed.
using Seeds = std::array<uint64_t, 3>;

const Tensor& image_of(const Tensor& image, const char* what, const Loc& loc) {
  if (!image.defined() || image.rank() != 3)
    throw Error(fmt::format("{}: needs an image [C, H, W], got {} at {}", what,
                            image.defined() ? type_str(image.type()) : "undefined",
                            location_str(loc)));
  return image;
}

}  // namespace

void bind_vision(pb::module_& m) {
  const Loc& at = call_site();
  pb::class_<vision::ImageFolder>(m, "ImageFolder")
      .def(pb::init([](const std::string& root) {
        pb::gil_scoped_release release;
        return std::make_unique<vision::ImageFolder>(root);
      }))
      .def("__len__", &vision::ImageFolder::size)
      .def("classes", &vision::ImageFolder::classes)
      .def("samples", [](const vision::ImageFolder& f) {
        std::vector<std::pair<std::string, int64_t>> out;
        for (int64_t i = 0; i < f.size(); ++i) out.push_back(f.sample(i));
        return out;
      })
      .def("get", [](const vision::ImageFolder& f, int64_t i) {
        data::Example e;
        {
          pb::gil_scoped_release release;
          e = f.get(i);
        }
        return pb::make_tuple(e[0], e[1].item<int64_t>());
      });
  m.def("vision_read_image", [](const std::string& path) {
    pb::gil_scoped_release release;
    return vision::to_tensor(vision::read_jpeg(path));
  });
  m.def("vision_resize", [at](const Tensor& image, int64_t size) {
    pb::gil_scoped_release release;
    return vision::resize(image, size, at);
  });
  m.def("vision_resize_to", [at](const Tensor& image, int64_t out_h, int64_t out_w) {
    image_of(image, "resize", at);
    pb::gil_scoped_release release;
    const vision::CropBox all{0, 0, image.shape()[1], image.shape()[2]};
    return vision::resized_crop(image, all, out_h, out_w, at);
  });
  m.def("vision_random_resized_crop",
        [at](const Tensor& image, int64_t out_h, int64_t out_w, std::pair<double, double> scale,
             std::pair<double, double> ratio, Seeds seeds) {
          image_of(image, "random_resized_crop", at);
          pb::gil_scoped_release release;
          vision::Rng rng({seeds[0], seeds[1], seeds[2]});
          const vision::CropBox box = vision::random_resized_crop_box(
              image.shape()[1], image.shape()[2], rng, scale, ratio);
          return vision::resized_crop(image, box, out_h, out_w, at);
        });
  m.def("vision_random_horizontal_flip",
        [at](const Tensor& image, double p, Seeds seeds) {
          pb::gil_scoped_release release;
          vision::Rng rng({seeds[0], seeds[1], seeds[2]});
          return vision::random_horizontal_flip(image, rng, p, at);
        });
  m.def("vision_normalize", [at](const Tensor& image, std::array<float, 3> mean,
                                 std::array<float, 3> std) {
    pb::gil_scoped_release release;
    return vision::normalize(image, mean, std, at);
  });
}

}  // namespace lt::py
