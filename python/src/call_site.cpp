#include "python/src/call_site.h"

namespace lt::py {

const Loc& call_site() {
  static const Loc loc = Loc::current();
  return loc;
}

const std::string& call_site_text() {
  static const std::string text = location_str(call_site());
  return text;
}

}  // namespace lt::py
