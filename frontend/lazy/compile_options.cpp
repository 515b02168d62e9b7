// How lazy graphs are prepared (lt::CompileOptions): opt level, epilogues, verification.
#include <cstdlib>

#include "lt/lazy.h"

namespace lt {
namespace {

int64_t env_int(const char* name, int64_t fallback) {
  const char* s = std::getenv(name);
  return s && *s ? std::atoll(s) : fallback;
}

CompileOptions& options_storage() {
  static CompileOptions o = [] {
    CompileOptions d;
    d.opt_level = static_cast<int>(env_int("LT_OPT_LEVEL", 2));
    d.epilogues = env_int("LT_EPILOGUES", 1) != 0;
    d.verify = env_int("LT_VERIFY", 0) != 0;
    return d;
  }();
  return o;
}

}  // namespace

CompileOptions compile_options() { return options_storage(); }
void set_compile_options(const CompileOptions& o) { options_storage() = o; }

}  // namespace lt
