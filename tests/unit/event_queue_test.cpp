#include <doctest/doctest.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/random.hpp"

namespace lockstep {
namespace {

void record(void* target, std::uint64_t arg) {
  static_cast<std::vector<std::uint64_t>*>(target)->push_back(arg);
}

TEST_CASE("equal-time events run by phase, then in insertion order") {
  EventQueue queue;
  std::vector<std::uint64_t> fired;
  const Time t = Time::from_ps(100);
  queue.push(t, Phase::kObserve, record, &fired, 1);
  queue.push(t, Phase::kNormal, record, &fired, 2);
  queue.push(t, Phase::kFirst, record, &fired, 3);
  queue.push(t, Phase::kNormal, record, &fired, 4);
  queue.push(Time::from_ps(50), Phase::kObserve, record, &fired, 5);
  queue.push(t, Phase::kFirst, record, &fired, 6);
  while (!queue.empty()) queue.pop().fire();
  CHECK(fired == std::vector<std::uint64_t>{5, 3, 6, 2, 4, 1});
}

TEST_CASE("pops come out in (time, phase, insertion) order for random interleavings") {
  EventQueue queue;
  RandomStream rng(7);
  // Reference order: the same keys sorted.
  std::vector<std::tuple<std::int64_t, int, std::uint64_t>> expected;
  std::vector<std::tuple<std::int64_t, int, std::uint64_t>> got;
  std::uint64_t inserted = 0;
  std::int64_t now = 0;
  for (int round = 0; round < 20'000; ++round) {
    if (rng.below(3) != 0 || queue.empty()) {
      const std::int64_t at = now + 1 + static_cast<std::int64_t>(rng.below(50));
      const auto phase = static_cast<Phase>(rng.below(3) * 100);
      queue.push(Time::from_ps(at), phase, nullptr, nullptr, inserted);
      expected.emplace_back(at, static_cast<int>(phase), inserted++);
    } else {
      const Event e = queue.pop();
      now = e.at.ps();
      got.emplace_back(e.at.ps(), static_cast<int>(e.phase()), e.arg);
    }
  }
  while (!queue.empty()) {
    const Event e = queue.pop();
    got.emplace_back(e.at.ps(), static_cast<int>(e.phase()), e.arg);
  }
  std::sort(expected.begin(), expected.end());
  // Pushes land strictly after the last pop, so the whole pop sequence is the sorted key set.
  CHECK(got == expected);
}

}  // namespace
}  // namespace lockstep
