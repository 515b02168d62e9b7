// The message a call throws, for tests that assert exact error text.
#pragma once
#include <functional>
#include <string>

#include "ir/error.h"

namespace lt::testing {

/// What `f` throws as an `E` (lt::Error unless a test needs the narrower type), or "no error"
/// when it throws nothing.
template <class E = Error>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace lt::testing
