#include "sim/core/flat_hash_map.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <unordered_map>

#include "sim/core/random.hpp"

namespace lockstep {
namespace {

// Four homes for every key: long runs of collisions, so that erasing from the middle of a run
// must move the entries after it back for lookups to find them, wrapping past the last slot too.
struct CrowdedHash {
  std::size_t operator()(std::uint64_t key) const { return static_cast<std::size_t>(key % 4) * 5; }
};

template <class Hash>
void check_against_unordered_map(std::uint64_t seed) {
  FlatHashMap<std::uint64_t, std::int64_t, Hash> map;
  std::unordered_map<std::uint64_t, std::int64_t> reference;
  RandomStream random(seed);
  for (int i = 0; i < 20'000; ++i) {
    const std::uint64_t key = random.below(201);
    switch (random.below(4)) {
      case 0: {
        const auto [value, inserted] = map.insert(key, i);
        const auto [expected, expected_inserted] = reference.emplace(key, i);
        REQUIRE(inserted == expected_inserted);
        REQUIRE(*value == expected->second);
        break;
      }
      case 1:
        map[key] += 1;
        reference[key] += 1;
        break;
      case 2:
        REQUIRE(map.erase(key) == (reference.erase(key) == 1));
        break;
      default: {
        const std::optional<std::int64_t> taken = map.take(key);
        const auto found = reference.find(key);
        REQUIRE(taken.has_value() == (found != reference.end()));
        if (taken) {
          REQUIRE(*taken == found->second);
          reference.erase(found);
        }
      }
    }
    REQUIRE(map.size() == reference.size());
  }
  for (std::uint64_t key = 0; key <= 200; ++key) {
    const auto found = reference.find(key);
    const std::int64_t* value = map.find(key);
    REQUIRE((value != nullptr) == (found != reference.end()));
    if (value != nullptr) CHECK(*value == found->second);
  }
}

TEST_CASE("a flat hash map holds what std::unordered_map holds through inserts and erases") {
  check_against_unordered_map<Mix64Hash>(1);
  check_against_unordered_map<CrowdedHash>(2);
}

TEST_CASE("a flat hash map's at() names a missing key with an exception") {
  FlatHashMap<std::uint64_t, int> map;
  CHECK_THROWS_AS((void)map.at(3), std::out_of_range);
  map[3] = 7;
  CHECK(map.at(3) == 7);
  CHECK(map.find(4) == nullptr);
}

}  // namespace
}  // namespace lockstep
