// The C++ optimizers (lt/optim.h), built from Python's param_groups: a list of (parameters,
// options dict). The Python side copies each group's dict into the C++ options before every
// step; the learning rate and the other numbers enter the step graph as data, so an edited
// g["lr"] changes the next step without recompiling it.
#include <memory>
#include <vector>

#include "python/src/bind.h"

namespace lt::py {
namespace {

template <class V>
void read(const pb::dict& d, const char* key, V& v) {
  if (d.contains(key)) v = d[key].cast<V>();
}

void read_options(const pb::dict& d, optim::SGDOptions& o) {
  read(d, "lr", o.lr);
  read(d, "momentum", o.momentum);
  read(d, "dampening", o.dampening);
  read(d, "weight_decay", o.weight_decay);
  read(d, "nesterov", o.nesterov);
}

template <class O>
void read_adam_options(const pb::dict& d, O& o) {
  read(d, "lr", o.lr);
  read(d, "betas", o.betas);
  read(d, "eps", o.eps);
  read(d, "weight_decay", o.weight_decay);
  read(d, "amsgrad", o.amsgrad);
}
void read_options(const pb::dict& d, optim::AdamOptions& o) { read_adam_options(d, o); }
void read_options(const pb::dict& d, optim::AdamWOptions& o) { read_adam_options(d, o); }

void read_options(const pb::dict& d, optim::RMSpropOptions& o) {
  read(d, "lr", o.lr);
  read(d, "alpha", o.alpha);
  read(d, "eps", o.eps);
  read(d, "weight_decay", o.weight_decay);
  read(d, "momentum", o.momentum);
  read(d, "centered", o.centered);
}

void read_options(const pb::dict& d, optim::AdagradOptions& o) {
  read(d, "lr", o.lr);
  read(d, "lr_decay", o.lr_decay);
  read(d, "weight_decay", o.weight_decay);
  read(d, "initial_accumulator_value", o.initial_accumulator_value);
  read(d, "eps", o.eps);
}

using Groups = std::vector<std::pair<std::vector<Tensor>, pb::dict>>;

template <class Opt, class Options>
void bind_optimizer(pb::module_& m, const char* name) {
  const Loc& at = call_site();
  pb::class_<Opt, optim::Optimizer>(m, name)
      .def(pb::init([at](const Groups& groups) {
        std::vector<optim::ParamGroup<Options>> gs;
        for (const auto& [params, options] : groups) {
          optim::ParamGroup<Options> g{params, {}};
          read_options(options, g.options);
          gs.push_back(std::move(g));
        }
        return std::make_unique<Opt>(std::move(gs), at);
      }))
      .def("set_options", [](Opt& opt, size_t group, const pb::dict& d) {
        read_options(d, opt.options(group));
      });
}

}  // namespace

void bind_optim(pb::module_& m) {
  const Loc& at = call_site();
  pb::class_<optim::Optimizer>(m, "Optimizer")
      .def("step", [at](optim::Optimizer& o) {
        pb::gil_scoped_release release;
        o.step({}, at);
      })
      .def("zero_grad", &optim::Optimizer::zero_grad)
      // State as lt/optim.h names it ("optim.<group>.<param>.<slot>"); the Python side maps it
      // to PyTorch's {"state", "param_groups"}.
      .def("state_tensors", [](const optim::Optimizer& o) { return o.state_dict().tensors; })
      .def("load_state_tensors", [at](optim::Optimizer& o, const TensorDict& tensors) {
        Checkpoint c = o.state_dict();
        for (const auto& [name, t] : tensors) c.tensors[name] = t;
        o.load_state_dict(c, "optim", at);
      })
      // The whole state in lt/optim.h's layout ("optim.*" tensors and metadata), as the C++
      // trainers' checkpoints hold it.
      .def("checkpoint",
           [](const optim::Optimizer& o) {
             Checkpoint c = o.state_dict("optim");
             return std::pair{c.tensors, c.metadata};
           })
      .def("load_checkpoint",
           [at](optim::Optimizer& o, const TensorDict& tensors, const StringDict& metadata) {
             o.load_state_dict(Checkpoint{tensors, metadata}, "optim", at);
           })
      .def("num_groups", &optim::Optimizer::num_groups)
      .def("shard_state", [at](optim::Optimizer& o, int stage) { o.shard_state(stage, at); })
      .def("zero_stage", &optim::Optimizer::zero_stage)
      .def("state_bytes", &optim::Optimizer::state_bytes);
  bind_optimizer<optim::SGD, optim::SGDOptions>(m, "SGD");
  bind_optimizer<optim::Adam, optim::AdamOptions>(m, "Adam");
  bind_optimizer<optim::AdamW, optim::AdamWOptions>(m, "AdamW");
  bind_optimizer<optim::RMSprop, optim::RMSpropOptions>(m, "RMSprop");
  bind_optimizer<optim::Adagrad, optim::AdagradOptions>(m, "Adagrad");
}

}  // namespace lt::py
