#include "sim/core/check.hpp"

#include "sim/core/quantity.hpp"

namespace lockstep {

InvariantViolation::InvariantViolation(Time at, std::string_view component,
                                       std::string_view message)
    : std::runtime_error("invariant violated at t=" + format(at) + " in " + std::string(component) +
                         ": " + std::string(message)),
      at_(at),
      component_(component) {}

void fail_invariant(Time at, std::string_view component, std::string_view message) {
  throw InvariantViolation(at, component, message);
}

}  // namespace lockstep
