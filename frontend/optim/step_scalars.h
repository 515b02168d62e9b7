// Host numbers for one optimizer update, as 0-d device data of a chosen dtype (frontend-internal).
#pragma once
#include <map>
#include <string>
#include <utility>

#include "lt/tensor.h"

namespace lt::optim {

/// Each named number becomes one 0-d tensor of device data per dtype, made once per update and
/// shared by the group's parameters. Device data enters a lazy graph as a parameter, never as a
/// constant (not even 0 or 1), so the graph does not depend on the value and a changing
/// learning rate never recompiles. Names, not values, tell tensors apart: two options that
/// happen to be equal one step and differ the next keep the same graph.
class StepScalars {
 public:
  Tensor get(const std::string& name, double value, DType dtype);

 private:
  std::map<std::pair<std::string, DType>, Tensor> made_;
};

}  // namespace lt::optim
