// Arithmetic work as an integer count of floating-point operations (a multiply-add is two, as
// GEMM benchmarks count it: 2 M N K), and arithmetic throughput as integer FLOP/s. The one way to
// turn work into time is compute_time, which rounds up to the next picosecond with a 128-bit
// intermediate, for the reason tx_time does (sim/core/bit_rate.hpp): a per-FLOP constant would
// drift over a large kernel, and rounding down would make a GPU faster than its rate.
#pragma once

#include <cassert>
#include <compare>
#include <cstdint>

#include "sim/core/time.hpp"

namespace lockstep {

class Flops {
 public:
  constexpr Flops() = default;
  constexpr explicit Flops(std::int64_t count) : count_(count) {}

  [[nodiscard]] constexpr std::int64_t count() const { return count_; }

  constexpr auto operator<=>(const Flops&) const = default;

 private:
  std::int64_t count_ = 0;
};

class FlopRate {
 public:
  constexpr FlopRate() = default;
  [[nodiscard]] static constexpr FlopRate per_second(std::int64_t v) { return FlopRate(v); }
  [[nodiscard]] static constexpr FlopRate gflops(std::int64_t v) {
    return FlopRate(v * 1'000'000'000);
  }
  [[nodiscard]] static constexpr FlopRate tflops(std::int64_t v) {
    return FlopRate(v * 1'000'000'000'000);
  }

  [[nodiscard]] constexpr std::int64_t per_second() const { return per_second_; }

  constexpr auto operator<=>(const FlopRate&) const = default;

 private:
  constexpr explicit FlopRate(std::int64_t v) : per_second_(v) {}
  std::int64_t per_second_ = 0;
};

[[nodiscard]] constexpr Duration compute_time(Flops work, FlopRate rate) {
  assert(rate.per_second() > 0 && work.count() >= 0);
  __extension__ using Wide = unsigned __int128;
  constexpr Wide kPsPerSecond = 1'000'000'000'000;
  const Wide numerator = static_cast<Wide>(work.count()) * kPsPerSecond;
  const Wide denominator = static_cast<Wide>(rate.per_second());
  return Duration::ps_from_wide((numerator + denominator - 1) / denominator);
}

// The rate that does `work` in `time` (rounded down), e.g. what a benchmark reports. time > 0.
[[nodiscard]] constexpr FlopRate achieved_rate(Flops work, Duration time) {
  assert(time.ps() > 0 && work.count() >= 0);
  __extension__ using Wide = unsigned __int128;
  constexpr Wide kPsPerSecond = 1'000'000'000'000;
  return FlopRate::per_second(static_cast<std::int64_t>(
      static_cast<Wide>(work.count()) * kPsPerSecond / static_cast<Wide>(time.ps())));
}

}  // namespace lockstep
