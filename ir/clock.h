// The monotonic clock every timing in lazytrain reads (pass times, metrics, profiles).
#pragma once
#include <chrono>
#include <cstdint>

namespace lt::ir {

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace lt::ir
