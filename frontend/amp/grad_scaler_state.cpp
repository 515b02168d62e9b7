// GradScaler's state_dict()/load_state_dict(): the scale and the growth tracker as tensors, the
// options as metadata, so that a resumed run scales, skips and grows exactly as the
// uninterrupted one.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>

#include "frontend/amp/option_check.h"
#include "frontend/optim/option_text.h"
#include "lt/amp.h"

namespace lt::amp {
namespace {

using optim::read_bool;
using optim::read_number;

GradScalerOptions read_options(const StringDict& meta, const std::string& prefix) {
  GradScalerOptions o;
  o.init_scale = read_number(meta, prefix + "init_scale");
  o.growth_factor = read_number(meta, prefix + "growth_factor");
  o.backoff_factor = read_number(meta, prefix + "backoff_factor");
  const std::string interval = prefix + "growth_interval";
  const double n = read_number(meta, interval);
  if (n != std::floor(n) || n < 1 || n > std::numeric_limits<int>::max())
    throw Error(fmt::format("{} is {}, not an integer from 1 to {}", interval, n,
                            std::numeric_limits<int>::max()));
  o.growth_interval = static_cast<int>(n);
  o.enabled = read_bool(meta, prefix + "enabled");
  o.dynamic = read_bool(meta, prefix + "dynamic");
  if (const std::string problem = option_problem(o); !problem.empty())
    throw Error(prefix + problem);  // the problem starts with the option's name
  return o;
}

}  // namespace

Checkpoint GradScaler::state_dict(const std::string& prefix) const {
  const std::string p = prefix + ".";
  Checkpoint out;
  out.tensors[p + "scale"] = scale_;
  out.tensors[p + "growth_tracker"] = growth_tracker_;
  out.metadata[p + "init_scale"] = optim::number_text(options_.init_scale);
  out.metadata[p + "growth_factor"] = optim::number_text(options_.growth_factor);
  out.metadata[p + "backoff_factor"] = optim::number_text(options_.backoff_factor);
  out.metadata[p + "growth_interval"] = std::to_string(options_.growth_interval);
  out.metadata[p + "enabled"] = optim::bool_text(options_.enabled);
  out.metadata[p + "dynamic"] = optim::bool_text(options_.dynamic);
  return out;
}

void GradScaler::load_state_dict(const Checkpoint& state, const std::string& prefix, Loc loc) {
  const std::string p = prefix + ".";
  Options options;
  try {
    options = read_options(state.metadata, p);
  } catch (const Error& e) {
    throw Error(fmt::format("GradScaler.load_state_dict: {} at {}", e.what(), location_str(loc)));
  }
  TensorDict source;
  for (auto it = state.tensors.lower_bound(p);
       it != state.tensors.end() && it->first.starts_with(p); ++it)
    source.insert(*it);
  // Strict: any missing, unexpected or misshapen tensor throws before a target changes.
  copy_state({{p + "scale", scale_}, {p + "growth_tracker", growth_tracker_}}, source,
             /*strict=*/true, "GradScaler.load_state_dict", loc);
  options_ = options;
}

}  // namespace lt::amp
