// Simulated time. Integer picoseconds: a byte at 800 Gb/s is exactly 10 ps, so serialization times
// of every common link rate stay exact where nanoseconds would truncate. int64 spans about 106
// days; arithmetic that would leave that range throws ClockOverflow instead of wrapping around.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace lockstep {

// A time or duration past what the clock holds. Only a scenario's input gets there (a link of
// 1 b/s, a step of years), so it is reported as bad input, not as a model's bug.
class ClockOverflow : public std::overflow_error {
 public:
  ClockOverflow()
      : std::overflow_error(
            "the run would pass the longest simulated time, about 106 days (2^63 ps)") {}
};

namespace detail {
[[nodiscard]] constexpr std::int64_t checked_sum(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) [[unlikely]]
    throw ClockOverflow();
  return sum;
}
[[nodiscard]] constexpr std::int64_t checked_difference(std::int64_t a, std::int64_t b) {
  std::int64_t difference = 0;
  if (__builtin_sub_overflow(a, b, &difference)) [[unlikely]]
    throw ClockOverflow();
  return difference;
}
[[nodiscard]] constexpr std::int64_t checked_product(std::int64_t a, std::int64_t b) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) [[unlikely]]
    throw ClockOverflow();
  return product;
}
}  // namespace detail

class Duration {
 public:
  constexpr Duration() = default;
  [[nodiscard]] static constexpr Duration ps(std::int64_t v) { return Duration(v); }
  [[nodiscard]] static constexpr Duration ns(std::int64_t v) { return Duration(v * 1'000); }
  [[nodiscard]] static constexpr Duration us(std::int64_t v) { return Duration(v * 1'000'000); }
  [[nodiscard]] static constexpr Duration ms(std::int64_t v) { return Duration(v * 1'000'000'000); }
  [[nodiscard]] static constexpr Duration s(std::int64_t v) {
    return Duration(v * 1'000'000'000'000);
  }
  [[nodiscard]] static constexpr Duration max() {
    return Duration(std::numeric_limits<std::int64_t>::max());
  }
  // Picoseconds worked out in a wider type (a 128-bit quotient, a double), onto the clock.
  template <class Wide>
  [[nodiscard]] static constexpr Duration ps_from_wide(Wide v) {
    if (!(v <= static_cast<Wide>(std::numeric_limits<std::int64_t>::max()))) [[unlikely]]
      throw ClockOverflow();
    return Duration(static_cast<std::int64_t>(v));
  }

  [[nodiscard]] constexpr std::int64_t ps() const { return ps_; }
  [[nodiscard]] constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }

  constexpr auto operator<=>(const Duration&) const = default;
  constexpr Duration operator+(Duration o) const {
    return Duration(detail::checked_sum(ps_, o.ps_));
  }
  constexpr Duration operator-(Duration o) const {
    return Duration(detail::checked_difference(ps_, o.ps_));
  }
  constexpr Duration operator*(std::int64_t k) const {
    return Duration(detail::checked_product(ps_, k));
  }
  constexpr Duration& operator+=(Duration o) { return *this = *this + o; }
  constexpr Duration& operator-=(Duration o) { return *this = *this - o; }

 private:
  constexpr explicit Duration(std::int64_t v) : ps_(v) {}
  std::int64_t ps_ = 0;
};

// A point on the simulated clock, measured from time zero of the run.
class Time {
 public:
  constexpr Time() = default;
  [[nodiscard]] static constexpr Time zero() { return Time(); }
  [[nodiscard]] static constexpr Time from_ps(std::int64_t v) { return Time(v); }
  [[nodiscard]] static constexpr Time max() {
    return Time(std::numeric_limits<std::int64_t>::max());
  }

  [[nodiscard]] constexpr std::int64_t ps() const { return ps_; }
  [[nodiscard]] constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }
  [[nodiscard]] constexpr Duration since_start() const { return Duration::ps(ps_); }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Duration d) const { return Time(detail::checked_sum(ps_, d.ps())); }
  constexpr Time operator-(Duration d) const {
    return Time(detail::checked_difference(ps_, d.ps()));
  }
  constexpr Duration operator-(Time o) const {
    return Duration::ps(detail::checked_difference(ps_, o.ps_));
  }
  constexpr Time& operator+=(Duration d) { return *this = *this + d; }

 private:
  constexpr explicit Time(std::int64_t v) : ps_(v) {}
  std::int64_t ps_ = 0;
};

}  // namespace lockstep
