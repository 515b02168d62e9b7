#include "ir/error.h"

#include <string_view>

namespace lt {

std::string location_str(const std::source_location& loc) {
  std::string_view f = loc.file_name();
  if (auto pos = f.find_last_of('/'); pos != std::string_view::npos) f = f.substr(pos + 1);
  return fmt::format("{}:{}", f, loc.line());
}

}  // namespace lt
