// Checkpoint files (lt/serialize.h): named tensors and string metadata in safetensors.
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
}

}  // namespace lt::py
