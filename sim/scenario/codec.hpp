// Scalar values of a scenario: how each config type is read from its YAML text, written back (for
// the resolved scenario stored with every result), and named in messages and in
// scenarios/README.md. Numbers are parsed with from_chars, so the locale never changes what a
// scenario means.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/core/quantity.hpp"

namespace lockstep {

template <class T>
struct Codec;

template <>
struct Codec<Duration> {
  static constexpr std::string_view kTypeName = "duration";
  static Parsed<Duration> parse(std::string_view text) { return parse_duration(text); }
  static std::string format(Duration d) { return lockstep::format(d); }
};

template <>
struct Codec<Bytes> {
  static constexpr std::string_view kTypeName = "size";
  static Parsed<Bytes> parse(std::string_view text) { return parse_bytes(text); }
  static std::string format(Bytes b) { return lockstep::format(b); }
};

template <>
struct Codec<BitRate> {
  static constexpr std::string_view kTypeName = "rate";
  static Parsed<BitRate> parse(std::string_view text) { return parse_bit_rate(text); }
  static std::string format(BitRate r) { return lockstep::format(r); }
};

template <>
struct Codec<std::int64_t> {
  static constexpr std::string_view kTypeName = "integer";
  static Parsed<std::int64_t> parse(std::string_view text);
  static std::string format(std::int64_t v) { return std::to_string(v); }
};

// Endpoint ids and queue pairs are 32-bit in the models; their values are range-checked here.
template <>
struct Codec<std::int32_t> {
  static constexpr std::string_view kTypeName = "integer";
  static Parsed<std::int32_t> parse(std::string_view text);
  static std::string format(std::int32_t v) { return std::to_string(v); }
};

template <>
struct Codec<std::uint32_t> {
  static constexpr std::string_view kTypeName = "unsigned integer";
  static Parsed<std::uint32_t> parse(std::string_view text);
  static std::string format(std::uint32_t v) { return std::to_string(v); }
};

template <>
struct Codec<std::uint64_t> {
  static constexpr std::string_view kTypeName = "unsigned integer";
  static Parsed<std::uint64_t> parse(std::string_view text);
  static std::string format(std::uint64_t v) { return std::to_string(v); }
};

// Dimensionless numbers: factors and shares, "0.1" or "10%".
template <>
struct Codec<double> {
  static constexpr std::string_view kTypeName = "number";
  static Parsed<double> parse(std::string_view text);
  static std::string format(double v);
};

template <>
struct Codec<bool> {
  static constexpr std::string_view kTypeName = "boolean";
  static Parsed<bool> parse(std::string_view text);
  static std::string format(bool b) { return b ? "true" : "false"; }
};

template <>
struct Codec<std::string> {
  static constexpr std::string_view kTypeName = "text";
  static Parsed<std::string> parse(std::string_view text) { return {std::string(text), {}}; }
  static std::string format(const std::string& s) { return s; }
};

}  // namespace lockstep
