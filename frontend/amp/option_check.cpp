#include "frontend/amp/option_check.h"

#include <fmt/format.h>

#include <cmath>

namespace lt::amp {

std::string scale_problem(const std::string& name, double v) {
  // The scale is f32 device data: a double that rounds to 0 or inf there is no scale.
  const auto f = static_cast<float>(v);
  if (f > 0 && std::isfinite(f)) return {};
  return fmt::format("{} must be > 0 and finite in f32, got {}", name, v);
}

std::string option_problem(const GradScalerOptions& o) {
  if (std::string p = scale_problem("init_scale", o.init_scale); !p.empty()) return p;
  if (!(o.growth_factor > 1 && std::isfinite(o.growth_factor)))
    return fmt::format("growth_factor must be > 1 and finite, got {}", o.growth_factor);
  if (!(o.backoff_factor > 0 && o.backoff_factor < 1))
    return fmt::format("backoff_factor must be in (0, 1), got {}", o.backoff_factor);
  if (o.growth_interval < 1)
    return fmt::format("growth_interval must be >= 1, got {}", o.growth_interval);
  return {};
}

}  // namespace lt::amp
