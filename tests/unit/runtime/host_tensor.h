// Host-side tensors for the runtime kernel tests: a type, a std::vector of data, and random fill.
#pragma once
#include <cstddef>
#include <new>
#include <random>
#include <type_traits>
#include <vector>

#include "ir/shape.h"
#include "runtime/buffer.h"
#include "runtime/kernels/kernel.h"

namespace lt::testing {

/// Bitwise comparisons of kernels need the production alignment (rt::Aligned64 says why).
using rt::Aligned64;

template <class T>
struct HostTensor {
  TensorType type;
  std::vector<T> data;
  rt::TensorRef ref() { return {data.data(), &type}; }
};

template <class T>
constexpr DType dtype_of = std::is_same_v<T, double> ? DType::F64 : DType::F32;

/// Uniform values in [-1, 1).
template <class T>
HostTensor<T> random_tensor(const Shape& s, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  HostTensor<T> t{{dtype_of<T>, s}, std::vector<T>(numel(s))};
  for (T& x : t.data) x = static_cast<T>(u(rng));
  return t;
}

}  // namespace lt::testing
