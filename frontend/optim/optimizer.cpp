// What every optimizer shares: checking parameters, step() and zero_grad(), the state, and
// state_dict()/load_state_dict().
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <set>

#include "frontend/optim/option_text.h"
#include "frontend/optim/step_scalars.h"
#include "frontend/tensor_impl.h"
#include "frontend/views.h"
#include "ir/error.h"
#include "lt/autograd.h"
#include "lt/lazy.h"
#include "lt/ops.h"
#include "lt/optim.h"

namespace lt::optim {
namespace {

size_t read_count(const StringDict& meta, const std::string& key) {
  const double v = read_number(meta, key);
  if (v < 0 || v != std::floor(v)) throw Error(fmt::format("{} is not a count", key));
  return static_cast<size_t>(v);
}

/// The entries of `meta` under `prefix` (the prefix removed from their names).
StringDict under(const StringDict& meta, const std::string& prefix) {
  StringDict out;
  for (auto it = meta.lower_bound(prefix); it != meta.end() && it->first.starts_with(prefix); ++it)
    out.emplace(it->first.substr(prefix.size()), it->second);
  return out;
}

}  // namespace

Tensor StepScalars::get(size_t group, const std::string& name, double value, DType dtype) {
  Made& m = made_[{group, name, dtype}];
  if (!m.tensor.defined() || std::bit_cast<uint64_t>(m.value) != std::bit_cast<uint64_t>(value)) {
    ModeGuard eager(Mode::Eager);  // device data: a graph parameter, never a constant
    m = {value, scalar(value, dtype)};
  }
  return m.tensor;
}

Optimizer::Optimizer(std::string type, std::vector<std::vector<Tensor>> groups, const Loc& loc)
    : type_(std::move(type)),
      params_(std::move(groups)),
      scalars_(std::make_unique<StepScalars>()) {
  std::set<const TensorImpl*> seen;
  for (size_t g = 0; g < params_.size(); ++g) {
    for (size_t i = 0; i < params_[g].size(); ++i) {
      const Tensor& p = params_[g][i];
      if (!p.defined())
        throw Error(fmt::format("{}: parameter {} of group {} is an undefined tensor at {}", type_,
                                i, g, location_str(loc)));
      if (p.dtype() != DType::F32 && p.dtype() != DType::F64)
        throw Error(
            fmt::format("{}: parameter {} of group {} is {}; optimizers update f32 or "
                        "f64 tensors at {}",
                        type_, i, g, type_str(p.type()), location_str(loc)));
      if (!seen.insert(p.impl()).second)
        throw Error(fmt::format("{}: parameter {} of group {} appears more than once at {}", type_,
                                i, g, location_str(loc)));
    }
  }
  if (seen.empty())
    throw Error(fmt::format("{}: no parameters to optimize at {}", type_, location_str(loc)));
}

Optimizer::~Optimizer() = default;

Tensor Optimizer::scalar(size_t group, const std::string& name, double value, DType dtype) {
  return scalars_->get(group, name, value, dtype);
}

size_t Optimizer::checked(size_t group) const {
  if (group >= params_.size())
    throw Error(fmt::format("{}: no parameter group {} (it has {})", type_, group, params_.size()));
  return group;
}

const std::vector<Tensor>& Optimizer::params(size_t group) const { return params_[checked(group)]; }

void Optimizer::check_group(size_t group, const std::string& where, const Loc& loc) const {
  try {
    check_options(group);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: group {}: {} at {}", where, group, e.what(), location_str(loc)));
  }
}

void Optimizer::init(const Loc& loc) {
  for (size_t g = 0; g < params_.size(); ++g) check_group(g, type_, loc);
  init_state();
}

namespace {

constexpr const char* kStepSlot = "step";

Tensor zero_slot(const std::string& name, const Tensor& p) {
  ModeGuard eager(Mode::Eager);  // device data: the first step's graph reads it like later ones
  return name == kStepSlot ? zeros({}, DType::F32) : zeros(p.shape(), p.dtype());
}

/// A new slot of a group's parameter: zeros, the step count shared by the whole group.
Tensor new_slot(const std::string& name, const Tensor& p, Tensor& group_step) {
  if (name != kStepSlot) return zero_slot(name, p);
  if (!group_step.defined()) group_step = zero_slot(name, p);
  return group_step;
}

}  // namespace

void Optimizer::init_state(bool share_steps) {
  slot_names_.clear();
  state_.assign(params_.size(), {});
  for (size_t g = 0; g < params_.size(); ++g) {
    slot_names_.push_back(slot_names(g));
    Tensor group_step;
    for (const Tensor& p : params_[g]) {
      std::vector<Tensor>& slots = state_[g].emplace_back();
      for (const std::string& name : slot_names_[g]) {
        if (!share_steps) group_step = Tensor();
        slots.push_back(new_slot(name, p, group_step));
      }
    }
  }
}

int Optimizer::step_slot(size_t group) const {
  const std::vector<std::string>& names = slot_names_[group];
  const auto at = std::find(names.begin(), names.end(), kStepSlot);
  return at == names.end() ? -1 : static_cast<int>(at - names.begin());
}

void Optimizer::share_equal_steps() {
  for (size_t g = 0; g < params_.size(); ++g) {
    const int slot = step_slot(g);
    if (slot < 0) continue;
    // Few distinct counts (most often one): a linear search over them.
    std::vector<std::pair<uint32_t, Tensor>> seen;
    for (std::vector<Tensor>& slots : state_[g]) {
      Tensor& step = slots[slot];
      if (step.impl()->pending()) continue;  // a value only a sync would tell: kept apart
      const uint32_t bits = std::bit_cast<uint32_t>(step.item<float>());
      const auto same = std::find_if(seen.begin(), seen.end(),
                                     [&](const auto& s) { return s.first == bits; });
      if (same == seen.end()) seen.emplace_back(bits, step);
      else step = same->second;
    }
  }
}

void Optimizer::refresh_slots(size_t group) {
  std::vector<std::string> names = slot_names(group);
  const std::vector<std::string>& old = slot_names_[group];
  if (names == old) return;
  Tensor group_step;
  for (size_t i = 0; i < params_[group].size(); ++i) {
    std::vector<Tensor> slots;
    for (const std::string& name : names) {
      const auto at = std::find(old.begin(), old.end(), name);
      slots.push_back(at != old.end() ? state_[group][i][at - old.begin()]
                                      : new_slot(name, params_[group][i], group_step));
    }
    state_[group][i] = std::move(slots);
  }
  slot_names_[group] = std::move(names);
}

std::vector<Optimizer::Cohort> Optimizer::cohorts(size_t group) {
  const int slot = step_slot(group);
  LT_CHECK(slot >= 0, "{}: group {} keeps no step count", type_, group);
  std::vector<Cohort> out;
  const std::vector<Tensor>& params = params_[group];
  std::vector<std::vector<Tensor>>& state = state_[group];
  const auto cohort_of = [&](const Tensor& step) {
    return std::find_if(out.begin(), out.end(),
                        [&](const Cohort& c) { return c.step.impl() == step.impl(); });
  };
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].grad().defined()) continue;
    const Tensor& step = state[i][slot];
    if (auto c = cohort_of(step); c != out.end()) c->params.push_back(i);
    else out.push_back({step, {i}});
  }
  // Members without a gradient keep the current count, in a handle of their own (shared among
  // them) that the cohort's update does not rebind.
  std::vector<std::pair<const TensorImpl*, Tensor>> kept;
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor& step = state[i][slot];
    if (params[i].grad().defined() || cohort_of(step) == out.end()) continue;
    auto k = std::find_if(kept.begin(), kept.end(),
                          [&](const auto& e) { return e.first == step.impl(); });
    if (k == kept.end()) k = kept.insert(kept.end(), {step.impl(), snapshot(step)});
    step = k->second;
  }
  return out;
}

void Optimizer::assign(Tensor& target, const Tensor& value, const Tensor& skip) {
  target.copy_(skip.defined() ? where(skip, target, value) : value);
}

void Optimizer::step(const Tensor& skip, Loc loc) {
  if (skip.defined() && (skip.dtype() != DType::Bool || skip.rank() != 0))
    throw Error(fmt::format("{}.step: skip must be a 0-d bool tensor, got {} at {}", type_,
                            type_str(skip.type()), location_str(loc)));
  for (size_t g = 0; g < params_.size(); ++g) check_group(g, type_ + ".step", loc);
  NoGradGuard no_grad;
  for (size_t g = 0; g < params_.size(); ++g) {
    if (zero_stage_ != 0) {
      sharded_update(g, skip);
      continue;
    }
    refresh_slots(g);
    update(g, skip);
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (std::vector<Tensor>& group : params_) {
    for (Tensor& p : group) {
      if (set_to_none) {
        p.zero_grad();
      } else if (Tensor g = p.grad(); g.defined()) {
        g.zero_();  // g shares the parameter's gradient, which sees the zeros
      }
    }
  }
}

Checkpoint Optimizer::local_state_dict(const std::string& prefix) const {
  Checkpoint out;
  out.metadata[prefix + ".type"] = type_;
  out.metadata[prefix + ".groups"] = std::to_string(params_.size());
  for (size_t g = 0; g < params_.size(); ++g) {
    const std::string group = fmt::format("{}.{}.", prefix, g);
    out.metadata[group + "params"] = std::to_string(params_[g].size());
    for (const auto& [name, text] : options_text(g)) out.metadata[group + name] = text;
    const std::vector<std::string>& names = slot_names_[g];
    for (size_t i = 0; i < params_[g].size(); ++i)
      for (size_t s = 0; s < names.size(); ++s)
        out.tensors[fmt::format("{}{}.{}", group, i, names[s])] = state_[g][i][s];
  }
  return out;
}

void Optimizer::load_state_dict(const Checkpoint& state, const std::string& prefix, Loc loc) {
  const auto fail = [&](const std::string& what) {
    throw Error(fmt::format("{}.load_state_dict: {} at {}", type_, what, location_str(loc)));
  };
  const auto type = state.metadata.find(prefix + ".type");
  if (type == state.metadata.end())
    fail(fmt::format("no {}.type in the metadata (not an optimizer's state?)", prefix));
  if (type->second != type_)
    fail(fmt::format("the state is of optimizer type {}, this one is {}", type->second, type_));
  std::vector<StringDict> saved;
  for (size_t g = 0; g < params_.size(); ++g) saved.push_back(options_text(g));
  const auto restore_options = [&] {
    for (size_t g = 0; g < params_.size(); ++g) set_options_text(g, saved[g]);
  };
  try {
    if (const size_t n = read_count(state.metadata, prefix + ".groups"); n != params_.size())
      throw Error(
          fmt::format("the state has {} parameter groups, this optimizer {}", n, params_.size()));
    for (size_t g = 0; g < params_.size(); ++g) {
      const std::string group = fmt::format("{}.{}.", prefix, g);
      const size_t n = read_count(state.metadata, group + "params");
      if (n != params_[g].size())
        throw Error(fmt::format("{}params is {}, this optimizer's group {} has {}", group, n, g,
                                params_[g].size()));
      StringDict text = under(state.metadata, group);
      text.erase("params");
      try {
        set_options_text(g, text);
      } catch (const Error& e) {
        throw Error(group + e.what());  // the messages start with the option's name
      }
      const StringDict known = options_text(g);
      for (const auto& [name, _] : text)
        if (!known.contains(name))
          throw Error(fmt::format("{}{} is not an option of {}", group, name, type_));
    }
  } catch (const Error& e) {
    restore_options();
    fail(e.what());
  }
  // The new options may change the slots (amsgrad): fresh zeros, then the state's values.
  const std::vector<std::vector<std::vector<Tensor>>> old = std::move(state_);
  init_state(/*share_steps=*/false);
  TensorDict source;
  for (auto it = state.tensors.lower_bound(prefix + ".");
       it != state.tensors.end() && it->first.starts_with(prefix + "."); ++it)
    source.insert(*it);
  try {
    copy_state(local_state_dict(prefix).tensors, source, /*strict=*/true,
               type_ + ".load_state_dict", loc);
    share_equal_steps();
    if (zero_stage_ != 0) keep_own_chunks();
  } catch (const Error&) {
    state_ = old;
    restore_options();
    throw;
  }
}

}  // namespace lt::optim
