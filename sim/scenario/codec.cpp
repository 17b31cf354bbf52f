#include "sim/scenario/codec.hpp"

#include <charconv>
#include <cmath>
#include <system_error>

namespace lockstep {
namespace {

template <class Integer>
Parsed<Integer> parse_integer(std::string_view text) {
  Integer value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range) {
    return {std::nullopt, "'" + std::string(text) + "' is out of range"};
  }
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    return {std::nullopt, "'" + std::string(text) + "' is not a whole number"};
  }
  return {value, {}};
}

template <class Unsigned>
Parsed<Unsigned> parse_unsigned(std::string_view text) {
  if (text.starts_with('-')) {
    return {std::nullopt,
            "'" + std::string(text) + "' is negative; expected a whole number of 0 or more"};
  }
  return parse_integer<Unsigned>(text);
}

}  // namespace

Parsed<std::int64_t> Codec<std::int64_t>::parse(std::string_view text) {
  return parse_integer<std::int64_t>(text);
}

Parsed<std::int32_t> Codec<std::int32_t>::parse(std::string_view text) {
  return parse_integer<std::int32_t>(text);
}

Parsed<std::uint32_t> Codec<std::uint32_t>::parse(std::string_view text) {
  return parse_unsigned<std::uint32_t>(text);
}

Parsed<std::uint64_t> Codec<std::uint64_t>::parse(std::string_view text) {
  return parse_unsigned<std::uint64_t>(text);
}

Parsed<double> Codec<double>::parse(std::string_view text) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string_view number = percent ? text.substr(0, text.size() - 1) : text;
  double value = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (error != std::errc() || end != number.data() + number.size() || number.empty() ||
      !std::isfinite(value)) {
    return {std::nullopt, "'" + std::string(text) + "' is not a number (write e.g. 0.1 or 10%)"};
  }
  return {percent ? value / 100.0 : value, {}};
}

std::string Codec<double>::format(double v) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}

Parsed<bool> Codec<bool>::parse(std::string_view text) {
  if (text == "true") return {true, {}};
  if (text == "false") return {false, {}};
  return {std::nullopt, "'" + std::string(text) + "' is not true or false"};
}

}  // namespace lockstep
