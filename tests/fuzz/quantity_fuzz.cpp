// libFuzzer target: the quantity parser. Whatever the text, parsing returns a value or an error
// (no crash, no undefined behaviour), and a value, written back exactly, parses to itself.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sim/core/quantity.hpp"

namespace {

template <class Quantity>
void round_trips(const lockstep::Parsed<Quantity>& parsed,
                 lockstep::Parsed<Quantity> (*parse)(std::string_view)) {
  if (!parsed) {
    if (parsed.error.empty()) __builtin_trap();  // a refusal always says why
    return;
  }
  const lockstep::Parsed<Quantity> again = parse(lockstep::format(*parsed.value));
  if (!again || !(*again.value == *parsed.value)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  round_trips(lockstep::parse_duration(text), &lockstep::parse_duration);
  round_trips(lockstep::parse_bytes(text), &lockstep::parse_bytes);
  round_trips(lockstep::parse_bit_rate(text), &lockstep::parse_bit_rate);
  return 0;
}
