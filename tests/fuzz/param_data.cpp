#include "tests/fuzz/param_data.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace lt::fuzz {
namespace {

template <class T>
void store(rt::Buffer& b, int64_t i, T v) {
  std::memcpy(static_cast<char*>(b.data()) + static_cast<size_t>(i) * sizeof(T), &v, sizeof(T));
}

template <class T>
T load(const rt::Buffer& b, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(b.data()) + static_cast<size_t>(i) * sizeof(T),
              sizeof(T));
  return v;
}

double half_to_double(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0x1f) {
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (exp == 0) {
    v = std::ldexp(mant, -24);
  } else {
    v = std::ldexp(mant + 1024, exp - 25);
  }
  return sign ? -v : v;
}

double draw_float(InputRng& rng, bool specials) {
  if (specials && rng.coin(0.2)) {
    static constexpr double kSpecial[] = {-0.0,  0.0,   1e-310, -3e-39, 1e30,  -1e300,
                                          1e-30, 65504, INFINITY, -INFINITY, NAN, 1.0};
    return kSpecial[rng.range(0, static_cast<int64_t>(std::size(kSpecial)) - 1)];
  }
  return -2 + 4 * rng.unit();
}

}  // namespace

std::shared_ptr<rt::Buffer> random_buffer(const TensorType& t, InputRng& rng, bool specials) {
  auto b = rt::Buffer::allocate(t.bytes());
  const bool ids = rng.coin(0.3);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t k = ids ? rng.range(0, 3) : rng.range(-9, 9);
    switch (t.dtype) {
      case DType::Bool: store<uint8_t>(*b, i, rng.coin(0.5)); break;
      case DType::I32: store(*b, i, static_cast<int32_t>(k)); break;
      case DType::I64: store(*b, i, k); break;
      case DType::F16: {  // sign, a biased exponent in [10, 20] (about 2^-5 to 2^5), mantissa
        const uint64_t r = rng.next();
        store(*b, i, static_cast<uint16_t>((r & 0x83ff) | (rng.range(10, 20) << 10)));
        break;
      }
      case DType::BF16: {  // the upper half of an f32
        const float f = static_cast<float>(draw_float(rng, specials));
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        store(*b, i, static_cast<uint16_t>(bits >> 16));
        break;
      }
      case DType::F32: store(*b, i, static_cast<float>(draw_float(rng, specials))); break;
      case DType::F64: store(*b, i, draw_float(rng, specials)); break;
    }
  }
  return b;
}

double element(DType dt, const rt::Buffer& b, int64_t i) {
  switch (dt) {
    case DType::Bool: return load<uint8_t>(b, i) != 0;
    case DType::I32: return load<int32_t>(b, i);
    case DType::I64: return static_cast<double>(load<int64_t>(b, i));
    case DType::F16: return half_to_double(load<uint16_t>(b, i));
    case DType::BF16: {
      const uint32_t bits = uint32_t{load<uint16_t>(b, i)} << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case DType::F32: return load<float>(b, i);
    case DType::F64: return load<double>(b, i);
  }
  return 0;
}

std::shared_ptr<rt::Buffer> copy_of(const rt::Buffer& b) {
  auto c = rt::Buffer::allocate(b.bytes());
  if (b.bytes() > 0) std::memcpy(c->data(), b.data(), b.bytes());
  return c;
}

}  // namespace lt::fuzz
