// An in-repo 64-bit hash for everything that must not change between compilers or standard
// libraries: ECMP path choice, random stream derivation. std::hash is implementation-defined, so it
// never decides anything observable. The mixer is the splitmix64 finalizer (Steele, Lea, Flood,
// OOPSLA'14): every input bit affects every output bit, which is what spreading flows over paths
// needs.
#pragma once

#include <cstdint>
#include <string_view>

namespace lockstep {

[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

[[nodiscard]] constexpr std::uint64_t hash_combine(std::uint64_t seed, std::uint64_t value) {
  return mix64(seed ^ mix64(value));
}

// Bytes are taken eight at a time, little-endian, and the length is folded in last so that strings
// that differ only by trailing zero bytes still differ.
[[nodiscard]] constexpr std::uint64_t hash_bytes(std::string_view bytes,
                                                 std::uint64_t seed = 0x6c6f636b73746570ULL) {
  std::uint64_t h = seed;
  std::size_t i = 0;
  while (i < bytes.size()) {
    std::uint64_t word = 0;
    for (std::size_t k = 0; k < 8 && i < bytes.size(); ++k, ++i) {
      word |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * k);
    }
    h = hash_combine(h, word);
  }
  return hash_combine(h, bytes.size());
}

}  // namespace lockstep
