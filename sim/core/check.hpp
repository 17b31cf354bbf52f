// Invariant checks inside the event loop. A broken invariant is a bug in a model, not bad input, so
// it is reported with the simulated time and the component that noticed it, and the program exits 3
// (the CLI catches InvariantViolation; tests can catch it too).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "sim/core/time.hpp"

namespace lockstep {

class InvariantViolation : public std::runtime_error {
 public:
  InvariantViolation(Time at, std::string_view component, std::string_view message);

  [[nodiscard]] Time at() const { return at_; }
  [[nodiscard]] const std::string& component() const { return component_; }

 private:
  Time at_;
  std::string component_;
};

[[noreturn]] void fail_invariant(Time at, std::string_view component, std::string_view message);

}  // namespace lockstep

// The message expression is evaluated only when the check fails.
#define LOCKSTEP_CHECK(condition, at, component, message)       \
  do {                                                          \
    if (!(condition)) [[unlikely]] {                            \
      ::lockstep::fail_invariant((at), (component), (message)); \
    }                                                           \
  } while (false)
