// What layer constructors share: checking their arguments (an lt::Error naming the layer) and
// creating their tensors as eager device data, whatever the mode, so building a model traces
// nothing.
#pragma once
#include <fmt/format.h>

#include <string_view>

#include "lt/lazy.h"
#include "lt/tensor.h"

namespace lt::nn {

template <class... Args>
void require(bool ok, std::string_view layer, fmt::format_string<Args...> what, Args&&... args) {
  if (!ok)
    throw Error(fmt::format("{}: {}", layer, fmt::format(what, std::forward<Args>(args)...)));
}

inline Tensor eager_full(Shape shape, double value, DType dtype = DType::F32) {
  ModeGuard eager(Mode::Eager);
  return full(std::move(shape), value, dtype);
}

}  // namespace lt::nn
