// The shared buffer's admission rules with round numbers: a 1,000,000 B buffer, two ports with
// 100,000 B of headroom each for the lossless class 3, alpha 1/8. Class 0 is lossy.
#include <doctest/doctest.h>

#include "models/fabric/shared_buffer.hpp"

namespace lockstep {
namespace {

SwitchConfig small_switch() {
  SwitchConfig c;
  c.buffer = Bytes(1'000'000);
  c.pfc.lossless.set(3);
  c.pfc.alpha = 1.0 / 8;
  c.lossy_alpha = 1.0 / 8;
  return c;
}

// The shared pool is what the headroom leaves: 1,000,000 - 2 x 100,000 = 800,000 B.
constexpr std::int64_t kPacket = 1'000;

TEST_CASE("a lossless ingress class takes alpha of the free shared pool, then its headroom") {
  const SwitchConfig config = small_switch();
  SharedBuffer buffer(config, {Bytes(100'000), Bytes(100'000)});
  // Holding s, the class may grow while s + 1000 <= (800,000 - s) / 8, i.e. s <= 88,000.
  std::int64_t shared = 0;
  while (buffer.admit(0, 3, kPacket, 0) == SharedBuffer::Admission::kShared) shared += kPacket;
  CHECK(shared == 89'000);
  CHECK(buffer.over_xoff(0, 3));
  // The packet that did not fit went to headroom, as do the next 99, and the one after drops.
  for (int i = 0; i < 99; ++i) {
    CHECK(buffer.admit(0, 3, kPacket, 0) == SharedBuffer::Admission::kHeadroom);
  }
  CHECK(buffer.admit(0, 3, kPacket, 0) == SharedBuffer::Admission::kDrop);
  // The other port's class is not held back by this one beyond the smaller free pool.
  CHECK(buffer.admit(1, 3, kPacket, 0) == SharedBuffer::Admission::kShared);
}

TEST_CASE("a lossy class drops by the egress queue it would join, not by what its ingress holds") {
  const SwitchConfig config = small_switch();
  SharedBuffer buffer(config, {Bytes(100'000), Bytes(100'000)});
  // Port 0's lossy class takes 200,000 B bound for short queues, far past an ingress threshold.
  for (int i = 0; i < 200; ++i) {
    REQUIRE(buffer.admit(0, 0, kPacket, 0) == SharedBuffer::Admission::kShared);
  }
  // Free pool 600,000 B: a queue may hold 75,000 B, so one holding 74,000 B takes one more.
  CHECK(buffer.admit(0, 0, kPacket, 74'000) == SharedBuffer::Admission::kShared);
  CHECK(buffer.admit(0, 0, kPacket, 75'000) == SharedBuffer::Admission::kDrop);
  // No headroom for lossy classes: even an empty queue takes nothing once alpha x (free pool) is
  // less than a packet, which with u used is (800,000 - u) / 8 < 1,000, past u = 792,000.
  std::int64_t used = 201 * kPacket;
  while (buffer.admit(1, 0, kPacket, 0) == SharedBuffer::Admission::kShared) used += kPacket;
  CHECK(used == 793'000);
}

}  // namespace
}  // namespace lockstep
