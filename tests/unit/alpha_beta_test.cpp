#include <doctest/doctest.h>

#include "models/collective/alpha_beta.hpp"

namespace lockstep {
namespace {

const AlphaBeta kCost{Duration::us(10), BitRate::gbps(100)};
const Bytes k4MB(4'000'000);

// Ring, p = 4, n = 4 MB: 2(p-1) alpha + 2 n (p-1)/p beta = 60 us + 6 MB x 8 / 100 Gb/s = 540 us.
TEST_CASE("ring all-reduce matches the alpha-beta closed form") {
  CHECK(ring_collective_time(CollectiveOp::kAllReduce, 4, k4MB, kCost) == Duration::us(540));
}

// Reduce-scatter and all-gather are each half of it: (p-1) alpha + n (p-1)/p beta = 270 us.
TEST_CASE("reduce-scatter and all-gather are half a ring all-reduce") {
  CHECK(ring_collective_time(CollectiveOp::kReduceScatter, 4, k4MB, kCost) == Duration::us(270));
  CHECK(ring_collective_time(CollectiveOp::kAllGather, 4, k4MB, kCost) == Duration::us(270));
}

// A send is one step of the whole buffer: 10 us + 320 us; a broadcast over 4 ranks pipelines its
// chunks, so it pays a latency per hop and the buffer once: 30 us + 320 us.
TEST_CASE(
    "send/recv is one step of the buffer, a broadcast a latency per hop and the buffer once") {
  CHECK(ring_collective_time(CollectiveOp::kSendRecv, 2, k4MB, kCost) == Duration::us(330));
  CHECK(ring_collective_time(CollectiveOp::kBroadcast, 4, k4MB, kCost) == Duration::us(350));
}

TEST_CASE("chunks round up to whole bytes and one rank needs no communication") {
  // 10 bytes over 4 ranks: chunks of 3 bytes = 24 bits = 240 ps at 100 Gb/s; 6 steps.
  CHECK(ring_collective_time(CollectiveOp::kAllReduce, 4, Bytes(10), kCost) ==
        (Duration::us(10) + Duration::ps(240)) * 6);
  CHECK(ring_collective_time(CollectiveOp::kAllReduce, 1, k4MB, kCost) == Duration());
}

}  // namespace
}  // namespace lockstep
