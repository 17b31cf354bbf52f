// Link and NIC rates as integer bits per second, and the one way to turn bytes into time on a wire.
// tx_time rounds up to the next picosecond with a 128-bit intermediate: a per-byte constant would
// accumulate rounding error over a multi-gigabyte transfer, and rounding down would make a link
// faster than its rate.
#pragma once

#include <cassert>
#include <compare>
#include <cstdint>

#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

class BitRate {
 public:
  constexpr BitRate() = default;
  [[nodiscard]] static constexpr BitRate bps(std::int64_t v) { return BitRate(v); }
  [[nodiscard]] static constexpr BitRate gbps(std::int64_t v) { return BitRate(v * 1'000'000'000); }

  [[nodiscard]] constexpr std::int64_t bps() const { return bps_; }

  constexpr auto operator<=>(const BitRate&) const = default;

 private:
  constexpr explicit BitRate(std::int64_t v) : bps_(v) {}
  std::int64_t bps_ = 0;
};

[[nodiscard]] constexpr Duration tx_time(Bytes size, BitRate rate) {
  assert(rate.bps() > 0 && size.count() >= 0);
  // Up to 2 MiB, the exact product fits in 64 bits, whose division is several times cheaper than a
  // 128-bit one (a library call): the per-packet case.
  constexpr std::int64_t kNarrowBytes = std::int64_t{2} << 20;
  if (size.count() <= kNarrowBytes) {
    const auto numerator = static_cast<std::uint64_t>(size.bits()) * 1'000'000'000'000U;
    const auto denominator = static_cast<std::uint64_t>(rate.bps());
    const std::uint64_t rounded_up =
        numerator / denominator + (numerator % denominator != 0 ? 1 : 0);
    return Duration::ps_from_wide(rounded_up);
  }
  __extension__ using Wide = unsigned __int128;
  constexpr Wide kPsPerSecond = 1'000'000'000'000;
  const Wide numerator = static_cast<Wide>(size.bits()) * kPsPerSecond;
  const Wide denominator = static_cast<Wide>(rate.bps());
  return Duration::ps_from_wide((numerator + denominator - 1) / denominator);
}

// The picoseconds a byte takes at `rate` when they are a whole number (100 Gb/s: 80), else 0.
// Where whole, tx_time is that many per byte exactly, and a wire that sends a frame per event can
// multiply instead of divide.
[[nodiscard]] constexpr std::int64_t whole_ps_per_byte(BitRate rate) {
  constexpr std::int64_t kPsPerByteSecond = 8'000'000'000'000;
  assert(rate.bps() > 0);
  return kPsPerByteSecond % rate.bps() == 0 ? kPsPerByteSecond / rate.bps() : 0;
}

}  // namespace lockstep
