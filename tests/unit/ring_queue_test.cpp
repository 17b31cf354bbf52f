#include "sim/core/ring_queue.hpp"

#include <doctest/doctest.h>

#include <deque>
#include <memory>
#include <utility>

namespace lockstep {
namespace {

// Against std::deque through growth and wrap-around: the same elements come out in the same order.
TEST_CASE(
    "a ring queue hands its elements out first in, first out, across growth and wrap-around") {
  RingQueue<int> ring;
  std::deque<int> reference;
  CHECK(ring.empty());
  int next = 0;
  // Pushes outrun pops for a while (the queue grows past 8, 16 and 32 with its front mid-block),
  // then pops catch up.
  for (int round = 0; round < 200; ++round) {
    const int pushes = round < 100 ? 3 : 1;
    for (int i = 0; i < pushes; ++i) {
      ring.push_back(next);
      reference.push_back(next++);
    }
    for (int i = 0; i < 2 && !reference.empty(); ++i) {
      REQUIRE(ring.front() == reference.front());
      ring.pop_front();
      reference.pop_front();
    }
    REQUIRE(ring.size() == reference.size());
  }
  while (!reference.empty()) {
    REQUIRE(ring.front() == reference.front());
    ring.pop_front();
    reference.pop_front();
  }
  CHECK(ring.empty());
}

// A queue that never holds more than it once did keeps its room: it does not grow again.
TEST_CASE("a ring queue whose front keeps moving on keeps its room") {
  RingQueue<int> ring;
  for (int i = 0; i < 5; ++i) ring.push_back(i);
  const std::size_t room = ring.capacity();
  CHECK(room == 8);
  for (int i = 5; i < 100'000; ++i) {
    ring.pop_front();
    ring.push_back(i);
  }
  CHECK(ring.capacity() == room);
  CHECK(ring.size() == 5);
  CHECK(ring.front() == 99'995);
}

// Values that own something: a push moves them in, and clear() releases what the elements own
// (a slot is not left holding it until overwritten) while the room stays.
TEST_CASE("a ring queue moves owning values in and releases them when cleared") {
  RingQueue<std::shared_ptr<int>> ring;
  const auto owned = std::make_shared<int>(7);
  for (int i = 0; i < 10; ++i) {
    auto copy = owned;
    ring.push_back(std::move(copy));
    CHECK(copy == nullptr);
  }
  CHECK(owned.use_count() == 11);
  ring.pop_front();
  const std::size_t room = ring.capacity();
  ring.clear();
  CHECK(ring.empty());
  CHECK(ring.capacity() == room);
  // The one taken off still sits in its slot; the nine cleared are released.
  CHECK(owned.use_count() == 2);
  ring.push_back(std::make_shared<int>(8));
  CHECK(*ring.front() == 8);
}

}  // namespace
}  // namespace lockstep
