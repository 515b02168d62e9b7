#include "tests/dist/dist_main.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "lt/dist.h"

namespace lt::testing {
namespace {

int g_expected_world = 1;

}  // namespace

int expected_world() { return g_expected_world; }

}  // namespace lt::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--world") == 0)
      lt::testing::g_expected_world = std::atoi(argv[i + 1]);
  lt::dist::init();
  return RUN_ALL_TESTS();
}
