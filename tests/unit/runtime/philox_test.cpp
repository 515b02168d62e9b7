#include <gtest/gtest.h>

#include <cmath>

#include "runtime/philox.h"

namespace lt::rt {
namespace {

TEST(Philox, KnownAnswerZeroCounterZeroKey) {
  // Philox4x32-10 known-answer vector (Random123 kat_vectors: ctr 0, key 0).
  const auto r = philox4x32(0, 0);
  EXPECT_EQ(r[0], 0x6627e8d5u);
  EXPECT_EQ(r[1], 0xe169c58du);
  EXPECT_EQ(r[2], 0xbc57ac4cu);
  EXPECT_EQ(r[3], 0x9b00dbd8u);
}

TEST(Philox, ElementDependsOnlyOnKeyCounterIndex) {
  std::vector<float> a(100), b(40);
  philox_uniform(7, 10, a.data(), 100);
  philox_uniform(7, 20, b.data(), 40);  // counter 20 = element 40 of the first draw
  for (int i = 0; i < 40; ++i) EXPECT_EQ(a[40 + i], b[i]);
}

TEST(Philox, UniformAndNormalMoments) {
  const int n = 1 << 18;
  std::vector<double> u(n), z(n);
  philox_uniform(1, 0, u.data(), n);
  philox_normal(1, 0, z.data(), n);
  double su = 0, sz = 0, sz2 = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_GE(u[i], 0.0);
    ASSERT_LT(u[i], 1.0);
    su += u[i];
    sz += z[i];
    sz2 += z[i] * z[i];
  }
  EXPECT_NEAR(su / n, 0.5, 0.005);
  EXPECT_NEAR(sz / n, 0.0, 0.01);
  EXPECT_NEAR(sz2 / n, 1.0, 0.01);
}

}  // namespace
}  // namespace lt::rt
