// What is wrong with a GradScaler's options, shared by the constructor and load_state_dict
// (frontend-internal).
#pragma once
#include <string>

#include "lt/amp.h"

namespace lt::amp {

/// "<name> must be > 0 and finite in f32, got <value>", or "" when `v` is a valid scale.
std::string scale_problem(const std::string& name, double v);
/// The first bad option as "<name> must be ..., got <value>", or "" when all are valid.
std::string option_problem(const GradScalerOptions& o);

}  // namespace lt::amp
