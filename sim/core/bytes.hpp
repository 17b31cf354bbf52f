// Data sizes as an integer count of bytes. KB = 1000 B and KiB = 1024 B (see quantity.hpp for
// text).
#pragma once

#include <compare>
#include <cstdint>

namespace lockstep {

class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(std::int64_t count) : count_(count) {}

  [[nodiscard]] constexpr std::int64_t count() const { return count_; }
  [[nodiscard]] constexpr std::int64_t bits() const { return count_ * 8; }

  constexpr auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes o) const { return Bytes(count_ + o.count_); }
  constexpr Bytes operator-(Bytes o) const { return Bytes(count_ - o.count_); }
  constexpr Bytes operator*(std::int64_t k) const { return Bytes(count_ * k); }
  constexpr Bytes& operator+=(Bytes o) {
    count_ += o.count_;
    return *this;
  }
  constexpr Bytes& operator-=(Bytes o) {
    count_ -= o.count_;
    return *this;
  }

 private:
  std::int64_t count_ = 0;
};

}  // namespace lockstep
