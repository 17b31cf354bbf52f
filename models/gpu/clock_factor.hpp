// The fraction of its nominal SM clock a GPU runs at: 1 normally, less when it throttles (thermal
// or power limits, DVFS; reference.md section 7 notes a 1-2% diurnal swing and hosts ~10% slower).
// It scales arithmetic throughput, not HBM bandwidth, which has its own clock. Held as an integer
// count of parts per million so that work done at one clock and left at another stays exact
// (gpu.hpp); a millionth is far finer than any DVFS step (tens of MHz on a ~2 GHz clock).
#pragma once

#include <cassert>
#include <compare>
#include <cstdint>
#include <stdexcept>

#include "sim/core/time.hpp"

namespace lockstep {

class ClockFactor {
 public:
  static constexpr std::int64_t kFull = 1'000'000;

  [[nodiscard]] static constexpr ClockFactor full() { return ClockFactor(kFull); }
  // Throws std::invalid_argument unless 0 < parts <= 1'000'000.
  [[nodiscard]] static constexpr ClockFactor ppm(std::int64_t parts) {
    if (parts <= 0 || parts > kFull) {
      throw std::invalid_argument("a clock factor lies in (0, 1]");
    }
    return ClockFactor(parts);
  }

  [[nodiscard]] constexpr std::int64_t ppm() const { return ppm_; }

  constexpr auto operator<=>(const ClockFactor&) const = default;

 private:
  constexpr explicit ClockFactor(std::int64_t parts) : ppm_(parts) {}
  std::int64_t ppm_ = kFull;
};

// How long work that takes `at_full_clock` takes at `clock`, rounded up to the next picosecond.
[[nodiscard]] constexpr Duration at_clock(Duration at_full_clock, ClockFactor clock) {
  assert(at_full_clock.ps() >= 0);
  __extension__ using Wide = unsigned __int128;
  const Wide numerator = static_cast<Wide>(at_full_clock.ps()) * ClockFactor::kFull;
  const Wide denominator = static_cast<Wide>(clock.ppm());
  return Duration::ps_from_wide((numerator + denominator - 1) / denominator);
}

}  // namespace lockstep
