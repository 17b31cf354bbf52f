// Simulated time. Integer picoseconds: a byte at 800 Gb/s is exactly 10 ps, so serialization times
// of every common link rate stay exact where nanoseconds would truncate. int64 spans about 106
// days.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace lockstep {

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

  [[nodiscard]] constexpr std::int64_t ps() const { return ps_; }
  [[nodiscard]] constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }

  constexpr auto operator<=>(const Duration&) const = default;
  constexpr Duration operator+(Duration o) const { return Duration(ps_ + o.ps_); }
  constexpr Duration operator-(Duration o) const { return Duration(ps_ - o.ps_); }
  constexpr Duration operator*(std::int64_t k) const { return Duration(ps_ * k); }
  constexpr Duration& operator+=(Duration o) {
    ps_ += o.ps_;
    return *this;
  }
  constexpr Duration& operator-=(Duration o) {
    ps_ -= o.ps_;
    return *this;
  }

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
  constexpr Time operator+(Duration d) const { return Time(ps_ + d.ps()); }
  constexpr Time operator-(Duration d) const { return Time(ps_ - d.ps()); }
  constexpr Duration operator-(Time o) const { return Duration::ps(ps_ - o.ps_); }
  constexpr Time& operator+=(Duration d) {
    ps_ += d.ps();
    return *this;
  }

 private:
  constexpr explicit Time(std::int64_t v) : ps_(v) {}
  std::int64_t ps_ = 0;
};

}  // namespace lockstep
