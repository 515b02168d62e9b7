// Mixed precision: the autocast scope (lt/autocast.h) and GradScaler (lt/amp.h), whose steps take
// the C++ optimizer behind a Python one.
#include <memory>

#include "python/src/bind.h"

namespace lt::py {
namespace {

/// An AutocastGuard held between a Python context manager's __enter__ and __exit__.
struct AutocastScope {
  int dtype;
  bool enabled;
  std::unique_ptr<AutocastGuard> guard;
  void enter() { guard = std::make_unique<AutocastGuard>(dtype_of(dtype), enabled, call_site()); }
  void exit() { guard.reset(); }
};

}  // namespace

void bind_amp(pb::module_& m) {
  const Loc& at = call_site();
  pb::class_<AutocastScope>(m, "AutocastScope")
      .def(pb::init([](int dtype, bool enabled) {
        return std::make_unique<AutocastScope>(AutocastScope{dtype, enabled, nullptr});
      }))
      .def("enter", &AutocastScope::enter)
      .def("exit", &AutocastScope::exit);
  m.def("autocast_enabled", &autocast_enabled);
  m.def("autocast_dtype", []() { return static_cast<int>(autocast_dtype()); });

  using amp::GradScaler;
  pb::class_<GradScaler>(m, "GradScaler")
      .def(pb::init([at](double init_scale, double growth_factor, double backoff_factor,
                         int growth_interval, bool enabled) {
        return std::make_unique<GradScaler>(
            GradScaler::Options{init_scale, growth_factor, backoff_factor, growth_interval,
                                enabled, true},
            at);
      }))
      .def("scale", [at](GradScaler& s, const Tensor& loss) { return s.scale(loss, at); })
      .def("unscale_", [at](GradScaler& s, optim::Optimizer& o) { s.unscale_(o, at); })
      .def("step", [at](GradScaler& s, optim::Optimizer& o) {
        pb::gil_scoped_release release;
        s.step(o, at);
      })
      .def("update", [at](GradScaler& s) { s.update(at); })
      .def("update_to", [at](GradScaler& s, double v) { s.update(v, at); })
      .def("update_to_tensor", [at](GradScaler& s, const Tensor& v) { s.update(v, at); })
      .def("found_inf",
           [at](const GradScaler& s, const optim::Optimizer& o) { return s.found_inf(o, at); })
      .def("get_scale", &GradScaler::get_scale)
      .def("growth_tracker", &GradScaler::growth_tracker)
      .def("is_enabled", &GradScaler::is_enabled)
      .def("checkpoint",
           [](const GradScaler& s) {
             Checkpoint c = s.state_dict("scaler");
             return std::pair{c.tensors, c.metadata};
           })
      .def("load_checkpoint",
           [at](GradScaler& s, const TensorDict& tensors, const StringDict& metadata) {
             s.load_state_dict(Checkpoint{tensors, metadata}, "scaler", at);
           })
      .def("state_tensors", [](const GradScaler& s) { return s.state_dict().tensors; })
      .def("load_state_tensors", [at](GradScaler& s, const TensorDict& tensors) {
        Checkpoint c = s.state_dict();
        for (const auto& [name, t] : tensors) c.tensors[name] = t;
        s.load_state_dict(c, "scaler", at);
      });
}

}  // namespace lt::py
