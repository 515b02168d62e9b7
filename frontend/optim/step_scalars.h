// Host numbers for one optimizer update, as 0-d device data of a chosen dtype (frontend-internal).
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <tuple>

#include "lt/tensor.h"

namespace lt::optim {

/// Each named number of a parameter group becomes one 0-d tensor of device data per dtype,
/// shared by the group's parameters and kept until the number changes (a learning rate under a
/// schedule: every step; betas: never). Device data enters a lazy graph as a parameter, never as
/// a constant (not even 0 or 1), so the graph does not depend on the value and a changing
/// learning rate never recompiles. Names, not values, tell tensors apart: two options that
/// happen to be equal one step and differ the next keep the same graph.
class StepScalars {
 public:
  Tensor get(size_t group, const std::string& name, double value, DType dtype);

 private:
  struct Made {
    double value;
    Tensor tensor;
  };
  std::map<std::tuple<size_t, std::string, DType>, Made> made_;
};

}  // namespace lt::optim
