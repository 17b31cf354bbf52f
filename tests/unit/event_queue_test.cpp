#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
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

void other(void* target, std::uint64_t arg) {
  static_cast<std::vector<std::uint64_t>*>(target)->push_back(arg + 1000);
}

std::vector<std::uint64_t>* looked = nullptr;
void look(void* /*target*/, std::uint64_t arg) { looked->push_back(arg); }

// The second look (EventQueue::look_ahead_for) sees each event of its kind a few events before it
// runs, in running order, and never an event of another kind; the order of the run is unchanged.
TEST_CASE("events of the looked-at kind are seen ahead of running, once each, in order") {
  EventQueue queue;
  std::vector<std::uint64_t> fired;
  std::vector<std::uint64_t> seen;
  looked = &seen;
  queue.look_ahead_for(record, look);
  for (std::uint64_t i = 0; i < 32; ++i) {
    queue.push(Time::from_ps(100), Phase::kNormal, i % 3 == 0 ? other : record, &fired, i);
  }
  std::vector<std::size_t> fired_before_seen;
  while (!queue.empty()) {
    const std::size_t seen_before = seen.size();
    queue.pop().fire();
    if (seen.size() > seen_before) fired_before_seen.push_back(fired.size());
  }
  std::vector<std::uint64_t> expected_fired;
  std::vector<std::uint64_t> expected_seen;
  for (std::uint64_t i = 0; i < 32; ++i) {
    expected_fired.push_back(i % 3 == 0 ? i + 1000 : i);
    if (i % 3 != 0) expected_seen.push_back(i);
  }
  CHECK(fired == expected_fired);
  // Every event of the kind but those among the first few, which run before a look can reach
  // them, in running order.
  std::erase_if(expected_seen, [](std::uint64_t i) { return i < EventQueue::kLookAhead; });
  REQUIRE(!expected_seen.empty());
  CHECK(seen == expected_seen);
  // Seen while the event popped, kLookAhead - 1 before it, had yet to run.
  for (std::size_t k = 0; k < seen.size(); ++k) {
    CHECK(seen[k] == fired_before_seen[k] + EventQueue::kLookAhead - 1);
  }
  looked = nullptr;
}

// Where each look saw an event: its argument and how many events had run by then.
struct Sighting {
  std::uint64_t arg;
  std::size_t fired_before;
};
std::vector<std::uint64_t>* fired_now = nullptr;
std::vector<Sighting> first_of_record;
std::vector<Sighting> last_of_record;
std::vector<Sighting> first_of_other;
void first_look_record(void* /*target*/, std::uint64_t arg) {
  first_of_record.push_back({arg, fired_now->size()});
}
void last_look_record(void* /*target*/, std::uint64_t arg) {
  last_of_record.push_back({arg, fired_now->size()});
}
void first_look_other(void* /*target*/, std::uint64_t arg) {
  first_of_other.push_back({arg, fired_now->size()});
}
void unlooked(void* target, std::uint64_t arg) {
  static_cast<std::vector<std::uint64_t>*>(target)->push_back(arg + 2000);
}

// Several kinds, each with its own looks: a look sees only its kind, every event of it but the
// first few, in running order; the last look sees an event after the second look did and before it
// runs. Kinds without looks are never seen. The order of the run is unchanged.
TEST_CASE("each looked-at kind gets its own looks, the last one nearer to running") {
  EventQueue queue;
  std::vector<std::uint64_t> fired;
  fired_now = &fired;
  first_of_record.clear();
  last_of_record.clear();
  first_of_other.clear();
  queue.look_ahead_for(record, first_look_record, last_look_record);
  queue.look_ahead_for(other, first_look_other);
  constexpr std::uint64_t kEvents = 60;
  std::vector<std::uint64_t> expected_fired;
  std::vector<std::uint64_t> records;
  std::vector<std::uint64_t> others;
  for (std::uint64_t i = 0; i < kEvents; ++i) {
    const EventFn fn = i % 3 == 0 ? record : i % 3 == 1 ? other : unlooked;
    queue.push(Time::from_ps(100 + static_cast<std::int64_t>(i / 7)), Phase::kNormal, fn, &fired,
               i);
    expected_fired.push_back(i % 3 == 0 ? i : i % 3 == 1 ? i + 1000 : i + 2000);
    if (i % 3 == 0) records.push_back(i);
    if (i % 3 == 1) others.push_back(i);
  }
  while (!queue.empty()) queue.pop().fire();
  CHECK(fired == expected_fired);
  auto args = [](const std::vector<Sighting>& seen) {
    std::vector<std::uint64_t> out;
    for (const Sighting& s : seen) out.push_back(s.arg);
    return out;
  };
  // Every event of its kind from the look's distance on (the ones before it run before a look
  // can reach them), in running order.
  auto from = [](std::vector<std::uint64_t> kind, std::size_t distance) {
    std::erase_if(kind, [&](std::uint64_t i) { return i < distance; });
    return kind;
  };
  CHECK(args(first_of_record) == from(records, EventQueue::kLookAhead));
  CHECK(args(last_of_record) == from(records, EventQueue::kLastLook));
  CHECK(args(first_of_other) == from(others, EventQueue::kLookAhead));
  // Every event ran at its index: seen by the second look kLookAhead events before it ran, and by
  // the last kLastLook, later.
  for (const Sighting& s : first_of_record) CHECK(s.arg == s.fired_before + EventQueue::kLookAhead);
  for (const Sighting& s : first_of_other) CHECK(s.arg == s.fired_before + EventQueue::kLookAhead);
  for (const Sighting& s : last_of_record) {
    CHECK(s.arg == s.fired_before + EventQueue::kLastLook);
    const auto first = std::find_if(first_of_record.begin(), first_of_record.end(),
                                    [&](const Sighting& f) { return f.arg == s.arg; });
    if (first != first_of_record.end()) CHECK(first->fired_before < s.fired_before);
  }
  fired_now = nullptr;
}

TEST_CASE("a queue looks ahead for a few kinds of event at most") {
  EventQueue queue;
  const EventFn kinds[] = {record, other, unlooked, look};
  for (const EventFn fn : kinds) queue.look_ahead_for(fn, look);
  queue.look_ahead_for(record, look);  // asking again replaces
  CHECK_THROWS_AS(queue.look_ahead_for(first_look_record, look), std::logic_error);
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

// Replays random pushes and limited pops against a sorted reference. Delays span the slot in hand
// (picoseconds), the ring (nanoseconds to microseconds), the edge of its reach (2.1-4.2 us), the
// far wheel (up to 50 us, and the edge of its horizon at 8.59 ms) and the heap beyond it (up to 20
// ms), and the limits fall anywhere, a few far ahead, so every path between them is taken many
// times.
TEST_CASE("pops match a sorted reference across the slot, the ring and beyond, with limits") {
  EventQueue queue;
  RandomStream rng(11);
  using Key = std::tuple<std::int64_t, std::uint64_t>;  // (time, order)
  std::set<Key> pending;
  std::int64_t now = 0;
  std::uint64_t inserted = 0;
  struct Delays {
    std::int64_t from;
    std::uint64_t spread;
  };
  const Delays delays[] = {{0, 100},
                           {0, 5'000},
                           {0, 2'000'000},
                           {2'000'000, 2'200'000},
                           {4'180'000, 20'000},
                           {0, 50'000'000},
                           {8'585'000'000, 10'000'000},
                           {0, 20'000'000'000}};
  constexpr std::size_t kDelays = std::size(delays);
  for (int round = 0; round < 200'000; ++round) {
    if (rng.below(2) == 0) {
      const Delays& d = delays[rng.below(kDelays)];
      const std::int64_t at = now + d.from + static_cast<std::int64_t>(rng.below(d.spread));
      const auto phase = static_cast<Phase>(rng.below(3) * 100);
      queue.push(Time::from_ps(at), phase, nullptr, nullptr, inserted);
      pending.emplace(at, (static_cast<std::uint64_t>(phase) << Event::kSequenceBits) | inserted);
      ++inserted;
      continue;
    }
    if (queue.empty()) continue;
    const std::int64_t limit =
        now + static_cast<std::int64_t>(rng.below(rng.below(100) == 0 ? 5'000'000'000 : 3'000'000));
    const auto earliest = pending.begin();
    Event e{};
    const bool popped = queue.pop_not_after(Time::from_ps(limit), e);
    REQUIRE(popped == (std::get<0>(*earliest) <= limit));
    if (popped) {
      CHECK(Key{e.at.ps(), e.order} == *earliest);
      now = e.at.ps();
      pending.erase(earliest);
    } else {
      now = limit;
    }
    REQUIRE(queue.size() == pending.size());
  }
  for (const Key& expected : pending) {
    const Event e = queue.pop();
    REQUIRE(Key{e.at.ps(), e.order} == expected);
  }
  CHECK(queue.empty());
}

TEST_CASE("a burst of events at the instant in hand runs in phase and insertion order") {
  EventQueue queue;
  std::vector<std::uint64_t> fired;
  queue.push(Time::from_ps(7), Phase::kNormal, record, &fired, 0);
  (void)queue.pop();
  // As when every flow of a large all-to-all starts at once: 60,000 events scheduled at the
  // clock's own instant, the phases mixed so that many must run before ones already queued.
  const Phase phases[] = {Phase::kObserve, Phase::kNormal, Phase::kFirst};
  for (std::uint64_t i = 0; i < 60'000; ++i) {
    queue.push(Time::from_ps(7), phases[i % 3], record, &fired, i);
  }
  // And one later in the same slot, which all of them precede.
  queue.push(Time::from_ps(8), Phase::kFirst, record, &fired, 99'999'999);
  while (!queue.empty()) queue.pop().fire();
  REQUIRE(fired.size() == 60'001);
  for (std::size_t i = 0; i < 60'000; ++i) {
    // kFirst (i % 3 == 2) first, then kNormal (1), then kObserve (0), each in insertion order.
    const std::uint64_t group = i / 20'000;
    const std::uint64_t expected = 3 * (i % 20'000) + (2 - group);
    REQUIRE(fired[i] == expected);
  }
  CHECK(fired.back() == 99'999'999);
}

using TimePhaseArg = std::tuple<std::int64_t, int, std::uint64_t>;

// Empties the queue: each event's time, phase and argument, in the order they pop.
std::vector<TimePhaseArg> pop_all(EventQueue& queue) {
  std::vector<TimePhaseArg> popped;
  while (!queue.empty()) {
    const Event e = queue.pop();
    popped.emplace_back(e.at.ps(), static_cast<int>(e.phase()), e.arg);
  }
  return popped;
}

// A slot of the ring is sorted when the clock reaches it, by a key packing the picosecond within
// the slot above phase and sequence: ties at one picosecond of a later slot, in several chunks,
// with the phases pushed out of order, must still run by phase and then insertion.
TEST_CASE("ties in a later slot of the ring run by phase, then insertion") {
  EventQueue queue;
  queue.push(Time::from_ps(1), Phase::kNormal, nullptr, nullptr, 0);
  (void)queue.pop();
  std::vector<TimePhaseArg> expected;  // the argument is the order of insertion
  const Phase phases[] = {Phase::kObserve, Phase::kNormal, Phase::kFirst, Phase::kSettle};
  // 5,120 ps is the first picosecond of slot 5, 6,143 its last; 6,144 opens slot 6.
  const std::int64_t times[] = {6'143, 5'120, 5'500, 6'144, 5'120};
  for (std::uint64_t i = 0; i < 300; ++i) {
    const std::int64_t at = times[i % 5];
    const Phase phase = phases[(i / 5) % 4];
    queue.push(Time::from_ps(at), phase, nullptr, nullptr, i);
    expected.emplace_back(at, static_cast<int>(phase), i);
  }
  std::sort(expected.begin(), expected.end());
  CHECK(pop_all(queue) == expected);
}

// A crowded slot is sorted by time and phase, ties left in the order its events were added: those
// that waited beyond the horizon first, then the later pushes.
TEST_CASE("a crowded slot of events from beyond the horizon and later pushes runs in order") {
  EventQueue queue;
  RandomStream rng(5);
  std::vector<TimePhaseArg> expected;  // the argument is the order of insertion
  std::uint64_t inserted = 0;
  // Slot 10,000 opens at 10.24 us, past the ring's 4.2 us horizon until the clock passes 6.05 us.
  constexpr std::int64_t kSlotStart = 10'000 * 1'024;
  const auto push_into_slot = [&] {
    const std::int64_t at = kSlotStart + static_cast<std::int64_t>(rng.below(4)) * 300;
    const Phase phase = rng.below(2) == 0 ? Phase::kAhead : Phase::kNormal;
    queue.push(Time::from_ps(at), phase, nullptr, nullptr, inserted);
    expected.emplace_back(at, static_cast<int>(phase), inserted++);
  };
  for (int i = 0; i < 150; ++i) push_into_slot();
  queue.push(Time::from_ps(7'000'000), Phase::kNormal, nullptr, nullptr, inserted++);
  CHECK(queue.pop().at == Time::from_ps(7'000'000));  // brings the slot within the horizon
  for (int i = 0; i < 150; ++i) push_into_slot();
  std::sort(expected.begin(), expected.end());
  CHECK(pop_all(queue) == expected);
}

// A slot 20 ms ahead gets events while it lies past the far wheel's 8.6 ms horizon (the heap),
// then within it (the far wheel's bucket), then within the ring's reach: ties in it still run by
// phase, then in the order they were scheduled.
TEST_CASE("a crowded slot scheduled from the heap, the far wheel and the ring runs in order") {
  EventQueue queue;
  RandomStream rng(9);
  std::vector<TimePhaseArg> expected;  // the argument is the order of insertion
  std::uint64_t inserted = 0;
  constexpr std::int64_t kSlotStart = 20'000'000 * std::int64_t{1'024};  // 20.48 ms
  const auto push_into_slot = [&] {
    const std::int64_t at = kSlotStart + static_cast<std::int64_t>(rng.below(4)) * 300;
    const Phase phase = rng.below(2) == 0 ? Phase::kAhead : Phase::kNormal;
    queue.push(Time::from_ps(at), phase, nullptr, nullptr, inserted);
    expected.emplace_back(at, static_cast<int>(phase), inserted++);
  };
  const auto step_to = [&](std::int64_t at) {
    queue.push(Time::from_ps(at), Phase::kNormal, nullptr, nullptr, inserted++);
    CHECK(queue.pop().at == Time::from_ps(at));
  };
  for (int i = 0; i < 100; ++i) push_into_slot();
  step_to(15'000'000'000);  // 5.5 ms before the slot: within the far wheel's horizon
  for (int i = 0; i < 100; ++i) push_into_slot();
  step_to(kSlotStart - 1'000'000);  // 1 us before it: within the ring's reach
  for (int i = 0; i < 100; ++i) push_into_slot();
  std::sort(expected.begin(), expected.end());
  CHECK(pop_all(queue) == expected);
}

TEST_CASE("a periodic event far apart from the rest comes round the ring many times in order") {
  EventQueue queue;
  std::vector<std::uint64_t> fired;
  // 3 us apart: most of the ring's horizon between them, so the ring wraps every event or two.
  for (std::uint64_t i = 0; i < 2'000; ++i) {
    queue.push(Time::from_ps(static_cast<std::int64_t>(i) * 3'000'000), Phase::kNormal, record,
               &fired, i);
  }
  queue.push(Time::from_ps(1), Phase::kNormal, record, &fired, 9'999);
  while (!queue.empty()) queue.pop().fire();
  REQUIRE(fired.size() == 2'001);
  CHECK(fired[0] == 0);
  CHECK(fired[1] == 9'999);
  for (std::size_t i = 2; i < fired.size(); ++i) CHECK(fired[i] == i - 1);
}

}  // namespace
}  // namespace lockstep
