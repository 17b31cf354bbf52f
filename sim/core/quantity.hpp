// Text form of dimensioned quantities, as written in scenarios and printed in messages.
// Durations: ps ns us ms s min h. Sizes: B KB MB GB TB (powers of 1000), KiB MiB GiB TiB (powers of
// 1024), and the same with a lowercase b for bits. Rates: bps Kbps Mbps Gbps Tbps (also written
// b/s, Kb/s, ...) and byte rates B/s KB/s MB/s GB/s TB/s KiB/s MiB/s GiB/s. Values may carry a
// decimal fraction ("1.5us") as long as the result is a whole number of the base unit (ps, byte,
// bit/s): the conversion is exact decimal arithmetic, never floating point.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sim/core/bit_rate.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

template <class T>
struct Parsed {
  std::optional<T> value;
  std::string error;  // set exactly when value is empty

  [[nodiscard]] explicit operator bool() const { return value.has_value(); }
};

[[nodiscard]] Parsed<Duration> parse_duration(std::string_view text);
[[nodiscard]] Parsed<Bytes> parse_bytes(std::string_view text);
[[nodiscard]] Parsed<BitRate> parse_bit_rate(std::string_view text);

// An exact spelling that reads well ("1.5us", "4KiB", "400Gbps"); parsing it back gives the
// same value.
[[nodiscard]] std::string format(Duration d);
[[nodiscard]] std::string format(Time t);
[[nodiscard]] std::string format(Bytes b);
[[nodiscard]] std::string format(BitRate r);

// For people, not for files: four significant digits ("10.74s", "103.6ms"); not exact.
[[nodiscard]] std::string format_rounded(Duration d);

}  // namespace lockstep
