// Checkpoint files (lt/serialize.h): named tensors and string metadata in safetensors; and the
// data helpers the Python loaders share with the C++ ones (lt/data.h), so that both read the
// same values in the same order.
#include <string>

#include "python/src/bind.h"

namespace lt::py {

void bind_io(pb::module_& m) {
  const Loc& at = call_site();
  m.def("save", [at](const std::string& path, const TensorDict& tensors,
                     const StringDict& metadata) {
    pb::gil_scoped_release release;  // materializes pending tensors, then writes
    save(path, tensors, metadata, at);
  });
  m.def("load", [at](const std::string& path) {
    Checkpoint c;
    {
      pb::gil_scoped_release release;
      c = load(path, at);
    }
    return pb::make_tuple(c.tensors, c.metadata);
  });
  m.def("shuffled_indices", &data::shuffled_indices);
  m.def("load_fashion_mnist", [](bool train, const std::string& dir, int64_t limit,
                                 bool normalize) {
    data::TensorDataset d;
    {
      pb::gil_scoped_release release;
      d = data::load_fashion_mnist(train ? data::Split::Train : data::Split::Test,
                                   {.dir = dir, .limit = limit, .normalize = normalize});
    }
    return pb::make_tuple(d.images, d.labels);
  });
}

}  // namespace lt::py
