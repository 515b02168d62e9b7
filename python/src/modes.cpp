// Lazy mode, gradient mode and the generator: the state PyTorch's context managers switch; and
// what lt.debug reads (the debug log, settings, metrics, memory).
#include <memory>
#include <string>

#include "lt/checkpoint.h"
#include "lt/data_worker.h"
#include "lt/threads.h"
#include "python/src/bind.h"

namespace lt::py {
namespace {

/// A C++ guard held between a Python context manager's __enter__ and __exit__.
template <class Guard>
struct ScopedGuard {
  std::unique_ptr<Guard> guard;
  void enter() { guard = std::make_unique<Guard>(); }
  void exit() { guard.reset(); }
};

template <class Guard>
void bind_guard(pb::module_& m, const char* name) {
  pb::class_<ScopedGuard<Guard>>(m, name)
      .def(pb::init<>())
      .def("enter", &ScopedGuard<Guard>::enter)
      .def("exit", &ScopedGuard<Guard>::exit);
}

}  // namespace

void bind_modes(pb::module_& m) {
  const Loc& at = call_site();
  m.def("mark_step", [at]() {
    CallerNamed named;
    pb::gil_scoped_release release;  // compiling and running the step need no Python
    mark_step(at);
  });
  m.def("is_lazy", []() { return mode() == Mode::Lazy; });
  m.def("set_lazy", [](bool lazy) { set_mode(lazy ? Mode::Lazy : Mode::Eager); });
  m.def("is_pending", &is_pending);
  m.def("num_threads", &num_threads);
  m.def("set_num_threads", &set_num_threads);
  m.def("clear_graph_cache", &clear_graph_cache);
  m.def("grad_enabled", &grad_enabled);
  bind_guard<NoGradGuard>(m, "NoGradGuard");
  bind_guard<data::WorkerScope>(m, "DataWorkerScope");
  bind_guard<EnableGradGuard>(m, "EnableGradGuard");
  using Tensors = std::vector<Tensor>;
  // fn(*inputs) -> a tensor or a tuple of tensors, run again (with the GIL taken back) when the
  // backward pass reaches it.
  m.def("checkpoint", [at](pb::function fn, const Tensors& inputs) {
    // The backward keeps the function and may drop it without the GIL: it is let go with it.
    std::shared_ptr<pb::function> held(new pb::function(std::move(fn)), [](pb::function* f) {
      pb::gil_scoped_acquire gil;
      delete f;
    });
    const CheckpointBlock block = [held](std::span<const Tensor> in) {
      pb::gil_scoped_acquire gil;
      pb::tuple args(in.size());
      for (size_t i = 0; i < in.size(); ++i) args[i] = pb::cast(in[i]);
      const pb::object out = (*held)(*args);
      if (pb::isinstance<Tensor>(out)) return Tensors{out.cast<Tensor>()};
      return out.cast<Tensors>();
    };
    return checkpoint(block, inputs, at);
  });
  m.def("autograd_grad", [at](const Tensors& outputs, const Tensors& inputs,
                              const Tensors& grad_outputs, bool retain_graph, bool create_graph,
                              bool allow_unused) {
    CallerNamed named;
    pb::gil_scoped_release release;  // hooks written in Python take the GIL back
    return autograd::grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                          allow_unused, at);
  });
  m.def("autograd_backward", [at](const Tensors& tensors, const Tensors& grad_tensors,
                                  bool retain_graph, bool create_graph, const Tensors& inputs) {
    CallerNamed named;
    pb::gil_scoped_release release;
    autograd::backward(tensors, grad_tensors, retain_graph, create_graph, inputs, at);
  });
  m.def("graph_text", [](const std::vector<Tensor>& ts) {
    return debug::graph_text(std::span<const Tensor>(ts));
  });
  m.def("set_debug", [](bool on) {
    debug::set_enabled(on);
    name_every_call(on);  // the traced nodes name their Python lines, for recompile causes
  });
  m.def("name_every_call", &name_every_call);
  m.def("set_option", [](const std::string& name, const std::string& value) {
    set_option(name, value);
  });
  m.def("option", [](const std::string& name) { return option(name); });
  m.def("options_report", &options_report);
  m.def("metrics_report", &metrics::report);
  m.def("metrics_counter", [](const std::string& name) { return metrics::counter(name); });
  m.def("metrics_total_ns", [](const std::string& name) { return metrics::total_ns(name); });
  m.def("metrics_reset", &metrics::reset);
  m.def("memory_stats", []() {
    const MemoryStats s = memory_stats();
    return pb::make_tuple(s.current_bytes, s.peak_bytes);
  });
  m.def("reset_peak_memory", &reset_peak_memory);
  m.def("take_debug_log", &debug::take_log);
}

}  // namespace lt::py
