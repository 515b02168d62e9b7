// Vectors of 8 doubles for the norm kernels' sums, in the GCC and clang vector extensions:
// written as plain loops over a double array GCC 12 ran them scalar, one conversion and one add
// per element, even at -O3 (the widening from float defeats its vectorizer). Kernel-internal.
#pragma once
#include <cstring>

namespace lt::rt {

inline constexpr int kVec = 8;  // doubles per vector
using VecD = double __attribute__((vector_size(kVec * sizeof(double))));
using VecF = float __attribute__((vector_size(kVec * sizeof(float))));

// p[0, kVec) as doubles. Vectors go by reference: passing one by value would change the calling
// convention on CPUs without AVX-512 (and GCC warns about it).
inline void load_wide(const float* p, VecD& out) {
  VecF v;
  std::memcpy(&v, p, sizeof v);
  out = __builtin_convertvector(v, VecD);
}
inline void load_wide(const double* p, VecD& out) { std::memcpy(&out, p, sizeof out); }

}  // namespace lt::rt
