#include "ir/error.h"

#include <cstring>
#include <string_view>

#include "ir/location_namer.h"

namespace lt {
namespace {

struct Namer {
  const char* file = nullptr;
  uint_least32_t line = 0;
  std::function<std::string()> name;
};

Namer& namer() {
  static Namer n;
  return n;
}

}  // namespace

void set_location_namer(const std::source_location& site, std::function<std::string()> name) {
  namer() = {site.file_name(), site.line(), std::move(name)};
}

std::string location_str(const std::source_location& loc) {
  const Namer& n = namer();
  if (n.name && loc.line() == n.line && std::strcmp(loc.file_name(), n.file) == 0)
    if (std::string s = n.name(); !s.empty()) return s;
  std::string_view f = loc.file_name();
  if (auto pos = f.find_last_of('/'); pos != std::string_view::npos) f = f.substr(pos + 1);
  return fmt::format("{}:{}", f, loc.line());
}

}  // namespace lt
