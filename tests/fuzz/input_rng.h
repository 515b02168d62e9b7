// Every choice a fuzz check makes beyond the input itself (lowering options, parameter data) is
// drawn from a hash of the input, so a saved crash input replays the same way anywhere.
#pragma once
#include <cstdint>
#include <string_view>

namespace lt::fuzz {

/// FNV-1a over the input bytes.
uint64_t hash_input(std::string_view bytes);

/// SplitMix64: small, fast and the same on every platform.
class InputRng {
 public:
  explicit InputRng(uint64_t seed) : state_(seed) {}
  uint64_t next();
  /// Uniform in [lo, hi] (hi >= lo).
  int64_t range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1p-53; }
  bool coin(double p) { return unit() < p; }

 private:
  uint64_t state_;
};

}  // namespace lt::fuzz
