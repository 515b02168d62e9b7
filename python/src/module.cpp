// lazytrain._C: the compiled core of the Python package. It binds the C++ API as it is; the
// PyTorch-style argument handling lives in the pure-Python modules over it.
#include "python/src/bind.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "lazytrain's compiled core; use the package lazytrain";
  lt::py::register_caller_namer();
  lt::py::bind_errors(m);
  lt::py::bind_tensor(m);
  lt::py::bind_ops(m);
  lt::py::bind_ops_nn(m);
  lt::py::bind_modes(m);
  lt::py::bind_optim(m);
  lt::py::bind_amp(m);
  lt::py::bind_io(m);
  lt::py::bind_dist(m);
  lt::py::bind_vision(m);
  lt::py::bind_function(m);
}
