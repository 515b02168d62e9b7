// What a fuzz check throws when the code under test broke a promise without crashing: an
// internal error escaped, a plan failed its verifier, compiled code disagreed with the reference
// interpreter. Never an lt::Error: rejecting bad input with lt::Error is an accepted outcome.
#pragma once
#include <stdexcept>

namespace lt::fuzz {

class CheckFailure : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace lt::fuzz
