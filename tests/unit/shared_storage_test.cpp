// SharedStorage against schedules computed by hand: a transfer alone, fair shares of the aggregate
// and of one node's limit, rates that change as transfers start and end (exact picoseconds,
// including a completion rounded up), and bytes conserved.
#include "models/training/shared_storage.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace lockstep {
namespace {

constexpr std::int64_t kUs = 1'000'000;  // picoseconds

// Finish times in picoseconds, in the order transfers were requested.
struct Finishes {
  std::vector<std::int64_t> at;

  SharedStorage::Done slot() {
    const std::size_t index = at.size();
    at.push_back(-1);
    return [this, index](Time finished) {
      CHECK(at[index] == -1);  // called once
      at[index] = finished.ps();
    };
  }
};

StorageSpec spec(std::int64_t aggregate_gbps, std::int64_t per_node_gbps, Duration latency) {
  return StorageSpec{.aggregate = BitRate::gbps(aggregate_gbps),
                     .per_node = BitRate::gbps(per_node_gbps),
                     .latency = latency};
}

TEST_CASE("a transfer alone takes the latency plus its size at the tighter of the two limits") {
  Simulator sim;
  SharedStorage node_bound(sim, spec(100, 40, Duration::us(1)), 1);
  SharedStorage aggregate_bound(sim, spec(100, 400, Duration::us(1)), 1);
  SharedStorage uneven(sim, spec(100, 3, Duration::us(1)), 1);
  Finishes finishes;
  node_bound.transfer(0, Bytes(1'000'000), finishes.slot());
  aggregate_bound.transfer(0, Bytes(1'000'000), finishes.slot());
  uneven.transfer(0, Bytes(1000), finishes.slot());
  CHECK(node_bound.active() == 1);
  (void)sim.run();
  // 8e6 bits at 40 Gb/s = 200 us; at 100 Gb/s = 80 us; 8000 bits at 3 Gb/s = 2666.67 ns, rounded
  // up.
  CHECK(finishes.at == std::vector<std::int64_t>{201 * kUs, 81 * kUs, kUs + 2'666'667});
  CHECK(finishes.at[2] == (Duration::us(1) + tx_time(Bytes(1000), BitRate::gbps(3))).ps());
  CHECK(node_bound.active() == 0);
  CHECK(node_bound.bytes_moved() == Bytes(1'000'000));
}

TEST_CASE("nodes reading at once share the aggregate equally when it binds before their limits") {
  Simulator sim;
  SharedStorage storage(sim, spec(100, 40, Duration::us(1)), 4);
  Finishes finishes;
  for (std::int32_t node = 0; node < 4; ++node) {
    storage.transfer(node, Bytes(1'000'000), finishes.slot());
  }
  (void)sim.run();
  // 100 / 4 = 25 Gb/s each, below the 40 Gb/s node limit: 8e6 bits take 320 us.
  CHECK(finishes.at == std::vector<std::int64_t>(4, 321 * kUs));
  CHECK(storage.bytes_moved() == Bytes(4'000'000));
}

TEST_CASE("two nodes below the aggregate each run at their own limit") {
  Simulator sim;
  SharedStorage storage(sim, spec(100, 40, Duration::us(1)), 2);
  Finishes finishes;
  storage.transfer(0, Bytes(1'000'000), finishes.slot());
  storage.transfer(1, Bytes(1'000'000), finishes.slot());
  (void)sim.run();
  CHECK(finishes.at == std::vector<std::int64_t>(2, 201 * kUs));  // 40 of 50 Gb/s each
}

TEST_CASE("two transfers of one node share that node's limit") {
  Simulator sim;
  SharedStorage storage(sim, spec(100, 40, Duration::us(1)), 2);
  Finishes finishes;
  storage.transfer(0, Bytes(1'000'000), finishes.slot());
  storage.transfer(0, Bytes(1'000'000), finishes.slot());
  (void)sim.run();
  CHECK(finishes.at == std::vector<std::int64_t>(2, 401 * kUs));  // 20 Gb/s each
}

TEST_CASE("water-filling caps a crowded node and gives the rest what the aggregate leaves") {
  // Node 0 has two transfers, nodes 1 and 2 one each; aggregate 100, node limit 40 Gb/s.
  // Phase 1: at an equal 25 Gb/s node 0 would exceed 40, so its two get 20 each; the 60 left
  //   is split 30/30 by nodes 1 and 2 (below 40). c (9.6e6 bits at 30) ends at 320 us, when a
  //   and b have moved 6.4e6 of 8e6 bits and d 9.6e6 of 24e6.
  // Phase 2: node 0 stays at 20 + 20; node 2 alone is capped at 40 (60 left). a and b end 80 us
  //   later (1.6e6 bits at 20), at 400 us; d has 11.2e6 bits left.
  // Phase 3: d alone at 40 Gb/s: 280 us more, 680 us.
  Simulator sim;
  SharedStorage storage(sim, spec(100, 40, Duration()), 3);
  Finishes finishes;
  storage.transfer(0, Bytes(1'000'000), finishes.slot());
  storage.transfer(0, Bytes(1'000'000), finishes.slot());
  storage.transfer(1, Bytes(1'200'000), finishes.slot());
  storage.transfer(2, Bytes(3'000'000), finishes.slot());
  (void)sim.run();
  CHECK(finishes.at == std::vector<std::int64_t>{400 * kUs, 400 * kUs, 320 * kUs, 680 * kUs});
}

TEST_CASE("a transfer that ends frees its share for the others") {
  // Aggregate 100, node limit 70 Gb/s, three nodes, x = 1 MB, y = 2 MB, z = 3 MB, latency 1 us.
  // Phase 1: 100/3 Gb/s each; x (8e6 bits) ends after 240 us; y and z have moved 8e6 bits.
  // Phase 2: y and z at 50 each; y's last 8e6 bits take 160 us, to 400 us after the latency.
  // Phase 3: z alone at its node's 70 Gb/s: 8e6 bits in 114285714.29 ps, rounded up.
  Simulator sim;
  SharedStorage storage(sim, spec(100, 70, Duration::us(1)), 3);
  Finishes finishes;
  storage.transfer(0, Bytes(1'000'000), finishes.slot());
  storage.transfer(1, Bytes(2'000'000), finishes.slot());
  storage.transfer(2, Bytes(3'000'000), finishes.slot());
  (void)sim.run();
  CHECK(finishes.at == std::vector<std::int64_t>{241 * kUs, 401 * kUs, 401 * kUs + 114'285'715});
}

TEST_CASE("a transfer that starts slows the one in progress") {
  // u alone at 100 Gb/s would end at 80 us. v starts at 40 us, when u has 4e6 bits left: both at
  // 50 Gb/s until u ends at 120 us; v, with 4e6 bits left, then runs alone to 160 us.
  Simulator sim;
  SharedStorage storage(sim, spec(100, 100, Duration()), 2);
  Finishes finishes;
  storage.transfer(0, Bytes(1'000'000), finishes.slot());
  REQUIRE(sim.run(Time::zero() + Duration::us(40)) == RunOutcome::kReachedLimit);
  storage.transfer(1, Bytes(1'000'000), finishes.slot());
  CHECK(storage.active() == 2);
  (void)sim.run();
  CHECK(finishes.at == std::vector<std::int64_t>{120 * kUs, 160 * kUs});
}

TEST_CASE("a zero-byte transfer ends after the latency alone") {
  Simulator sim;
  SharedStorage storage(sim, spec(100, 40, Duration::us(3)), 1);
  Finishes finishes;
  storage.transfer(0, Bytes(0), finishes.slot());
  CHECK(storage.active() == 1);
  (void)sim.run();
  CHECK(finishes.at == std::vector<std::int64_t>{3 * kUs});
  CHECK(storage.active() == 0);
  CHECK(storage.bytes_moved() == Bytes(0));
}

// Starts its next transfer from the completion of the previous one, as a checkpoint written
// shard after shard does.
struct Chain {
  SharedStorage& storage;
  std::int32_t left;
  std::vector<std::int64_t> finished;

  void next() {
    storage.transfer(0, Bytes(1'000'000), [this](Time at) {
      finished.push_back(at.ps());
      if (--left > 0) next();
    });
  }
};

TEST_CASE("a completion callback may start the next transfer") {
  Simulator sim;
  SharedStorage storage(sim, spec(100, 40, Duration::us(1)), 1);
  Chain chain{storage, 3, {}};
  chain.next();
  (void)sim.run();
  CHECK(chain.finished == std::vector<std::int64_t>{201 * kUs, 402 * kUs, 603 * kUs});
}

TEST_CASE("bytes are conserved and no limit is exceeded") {
  // Uneven sizes on uneven nodes (node 4 idle), so shares are fractions that change at every
  // completion.
  Simulator sim;
  const StorageSpec shared = spec(100, 30, Duration::us(2));
  SharedStorage storage(sim, shared, 5);
  Finishes finishes;
  std::vector<std::int64_t> per_node(5, 0);
  for (std::int32_t i = 0; i < 17; ++i) {
    const Bytes size(1'000'003 * (i % 7 + 1) + i);
    const std::int32_t node = i % 5 == 4 ? 0 : i % 4;
    per_node[static_cast<std::size_t>(node)] += size.count();
    storage.transfer(node, size, finishes.slot());
  }
  CHECK(storage.active() == 17);
  (void)sim.run();
  CHECK(storage.active() == 0);
  std::int64_t requested = 0;
  for (const std::int64_t bytes : per_node) requested += bytes;
  CHECK(storage.bytes_moved() == Bytes(requested));
  const std::int64_t last = *std::max_element(finishes.at.begin(), finishes.at.end());
  CHECK(*std::min_element(finishes.at.begin(), finishes.at.end()) > shared.latency.ps());
  // Everything crosses the aggregate, and the busiest node's bytes cross its own limit.
  CHECK(last >= (shared.latency + tx_time(Bytes(requested), shared.aggregate)).ps());
  const std::int64_t busiest = *std::max_element(per_node.begin(), per_node.end());
  CHECK(last >= (shared.latency + tx_time(Bytes(busiest), shared.per_node)).ps());
}

}  // namespace
}  // namespace lockstep
