// Collectives as activities: ranks that join late, ranks that never join (timeout), aborts that
// leave nothing behind, and collectives of different communicators sharing one fabric.
#include <doctest/doctest.h>

#include <memory>
#include <span>
#include <vector>

#include "flow_fabric.hpp"
#include "memory_backend.hpp"
#include "models/collective/communicator.hpp"
#include "models/collective/fluid_replay.hpp"
#include "models/collective/fluid_ring.hpp"
#include "models/collective/point_to_point.hpp"
#include "models/collective/priced_collective.hpp"
#include "models/collective/ring_collective.hpp"
#include "models/collective/traffic_tally.hpp"
#include "models/collective/tree_all_reduce.hpp"
#include "models/transport/flow_network.hpp"
#include "models/transport/packet_network.hpp"
#include "small_topologies.hpp"

namespace lockstep {
namespace {

using Rings = std::vector<std::vector<std::int32_t>>;

using testing::FlowFabric;

struct PacketFabric {
  explicit PacketFabric(Topology t) : topology(std::move(t)) {
    config.switches.pfc.lossless.set(3);
    config.switches.ecn.enabled = false;
    network = std::make_unique<PacketNetwork>(sim, routing, config, 1, output);
  }
  Simulator sim;
  Topology topology;
  Routing routing{topology};
  testing::MemoryBackend output;
  PacketNetworkConfig config;
  std::unique_ptr<PacketNetwork> network;
};

Duration on_time_all_reduce(Bytes size) {
  FlowFabric fabric(testing::star(4));
  RingCollective ring(fabric.sim, fabric.network, Rings{{0, 1, 2, 3}}, CollectiveOp::kAllReduce,
                      size);
  ring.start();
  (void)fabric.sim.run();
  REQUIRE(ring.finished());
  return ring.finished_at() - ring.started_at();
}

// Four ranks on one switch, rank 3 joining D = 100 us late. On time, every rank sends step k at
// k T (T: one chunk's transfer, the same on every link of a non-blocking star), and the last
// chunk lands at 6 T. Late, rank 2's first steps wait for rank 3, whose own step 0 leaves at D;
// from there a chain of transfers each waiting for the one before runs 3 -> 0 -> 1 -> 2 -> 3 -> 0
// (steps 0 to 5), each alone on its queue pair when it leaves, so each takes T: the last lands at
// D + 6 T, and no other chain is longer. So the collective ends exactly D later (to the flow
// level's picosecond rounding), and the ranks that started on time sit idle meanwhile, as in a real
// job.
TEST_CASE("a ring all-reduce whose rank 3 joins 100 us late ends exactly 100 us later") {
  const Bytes size(4'000'000);
  const Duration on_time = on_time_all_reduce(size);
  const Duration late = Duration::us(100);

  FlowFabric fabric(testing::star(4));
  RingCollective ring(fabric.sim, fabric.network, Rings{{0, 1, 2, 3}}, CollectiveOp::kAllReduce,
                      size);
  std::vector<Time> rank_done(4, Time::max());
  ring.when_rank_finished([&](std::int32_t rank, Time at) {
    rank_done[static_cast<std::size_t>(rank)] = at;
    CHECK(at == fabric.sim.now());
  });
  // At its end the last transfers' acknowledgements are still on their way back: the network
  // still holds the collective as their listener.
  bool held_at_end = false;
  ring.when_finished([&] { held_at_end = !ring.settled() && ring.messages_in_flight() > 0; });
  for (std::int32_t r = 0; r < 3; ++r) ring.arrive(r, Time::zero());
  ring.arrive(3, Time::zero() + late);
  (void)fabric.sim.run();
  REQUIRE(ring.finished());
  CHECK(ring.started_at() == Time::zero());
  // Up to the flow level's rounding of each drain to the picosecond, one per transfer of the chain.
  const Duration took = ring.finished_at() - ring.started_at();
  CHECK(took >= on_time + late - Duration::ps(6));
  CHECK(took <= on_time + late + Duration::ps(6));
  // Every rank's last receive is the collective's last step, so the ring ends on all of them
  // within one chunk's transfer, and the last of them is the collective's end.
  Time last = Time::zero();
  for (const Time t : rank_done) {
    REQUIRE(t != Time::max());
    last = std::max(last, t);
  }
  CHECK(last == ring.finished_at());
  CHECK(ring.arrived_at(3) == Time::zero() + late);
  CHECK(held_at_end);
  CHECK(ring.settled());
}

TEST_CASE("a rank arrives once, at a time not past, and only if it takes part") {
  FlowFabric fabric(testing::star(4));
  RingCollective ring(fabric.sim, fabric.network, Rings{{0, 1, 2}}, CollectiveOp::kAllReduce,
                      Bytes(1'000));
  ring.arrive(0, Time::zero());
  ring.arrive(2, Time::zero() + Duration::us(10));
  CHECK_THROWS_AS(ring.arrive(0, Time::zero()), std::invalid_argument);
  CHECK_THROWS_AS(ring.arrive(3, Time::zero()), std::invalid_argument);
  (void)fabric.sim.run();  // until every step left waits for rank 1
  CHECK(fabric.sim.now() > Time::zero() + Duration::us(10));
  CHECK(ring.running());
  CHECK_THROWS_AS(ring.arrive(1, Time::zero()), std::invalid_argument);
  ring.start();  // rank 1 now
  (void)fabric.sim.run();
  CHECK(ring.finished());
  CHECK(ring.started_at() == Time::zero());
}

// Rank 2 never joins. Ranks 0, 1 and 3 send what they can: the steps that do not need rank 2.
// At the timeout everything stops; the messages already on the wire land and are discarded; then
// nothing is left: no message in either network, no event, every byte delivered.
TEST_CASE("a collective with a rank that never arrives times out, names it, and leaves nothing") {
  const Duration timeout = Duration::ms(1);
  auto check_timeout = [&](Simulator& sim, Network& network, auto&& in_flight) {
    RingCollective ring(sim, network, Rings{{0, 1, 2, 3}}, CollectiveOp::kAllReduce,
                        Bytes(40'000'000));
    std::vector<std::int32_t> culprits;
    Time fired = Time::max();
    ring.set_timeout(timeout, [&](const std::vector<std::int32_t>& never_arrived) {
      culprits = never_arrived;
      fired = sim.now();
    });
    ring.arrive(0, Time::zero());
    ring.arrive(1, Time::zero());
    ring.arrive(3, Time::zero() + Duration::us(10));
    bool finished = false;
    ring.when_finished([&] { finished = true; });
    CHECK(sim.run() == RunOutcome::kDrained);
    CHECK(ring.state() == CollectiveState::kTimedOut);
    CHECK_FALSE(finished);
    CHECK(fired == Time::zero() + timeout);
    CHECK(culprits == std::vector<std::int32_t>{2});
    CHECK(ring.settled());
    CHECK(in_flight() == 0);
    ring.arrive(2, sim.now());  // too late: ignored
    CHECK(sim.pending() == 0);
  };
  SUBCASE("flow level") {
    FlowFabric fabric(testing::star(4));
    check_timeout(fabric.sim, fabric.network, [&] { return fabric.network.messages_in_flight(); });
  }
  SUBCASE("packet level") {
    PacketFabric fabric(testing::star(4));
    check_timeout(fabric.sim, *fabric.network,
                  [&] { return fabric.network->messages_in_flight(); });
    const DataAccount bytes = fabric.network->data_account();
    CHECK(bytes.in_fabric == 0);
    CHECK(bytes.dropped == 0);
    CHECK(bytes.injected == bytes.delivered);
  }
}

// Aborted mid-transfer, a ring sends nothing more: the network's message count stops where it
// was, what was on the wire drains, and the collective is settled.
TEST_CASE("an aborted collective sends nothing more and drains") {
  PacketFabric fabric(testing::star(4));
  RingCollective ring(fabric.sim, *fabric.network, Rings{{0, 1, 2, 3}}, CollectiveOp::kAllReduce,
                      Bytes(40'000'000));
  ring.start();
  (void)fabric.sim.run(Time::zero() + Duration::us(500));
  REQUIRE(ring.running());
  REQUIRE(ring.messages_in_flight() > 0);
  ring.abort();
  CHECK(ring.state() == CollectiveState::kAborted);
  const std::int64_t sent_before = fabric.network->data_account().injected;
  const std::int64_t outstanding_bytes = [&] {
    std::int64_t bytes = 0;
    for (const QueuePair& flow : fabric.network->flows()) {
      for (const PendingMessage& m : flow.messages) bytes += m.message.size.count();
    }
    return bytes;
  }();
  CHECK(fabric.sim.run() == RunOutcome::kDrained);
  CHECK_FALSE(ring.finished());
  CHECK(ring.settled());
  CHECK(fabric.network->messages_in_flight() == 0);
  const DataAccount bytes = fabric.network->data_account();
  // Only the rest of what was already posted went out after the abort.
  CHECK(bytes.injected - sent_before <= outstanding_bytes);
  CHECK(bytes.injected == bytes.delivered);
  CHECK(bytes.in_fabric == 0);
}

// Two hosts per leaf, one uplink per leaf to a spine. Two all-reduces on disjoint communicators:
// {0, 2} and {1, 3} both cross the leaves' uplinks, which each carry both rings, so each takes
// about twice as long as alone; {0, 1} and {2, 3} stay within their leaves, on disjoint links, and
// take exactly as long as alone.
TEST_CASE("collectives of disjoint communicators share the fabric's links, and only those") {
  auto fabric_of = [] {
    std::vector<Cable> cables = {
        {0, 4, testing::kRate, testing::kDelay}, {1, 4, testing::kRate, testing::kDelay},
        {2, 5, testing::kRate, testing::kDelay}, {3, 5, testing::kRate, testing::kDelay},
        {4, 6, testing::kRate, testing::kDelay}, {5, 6, testing::kRate, testing::kDelay}};
    return build_explicit(
        4,
        {{"leaf0", Bytes(32'000'000)}, {"leaf1", Bytes(32'000'000)}, {"spine", Bytes(32'000'000)}},
        cables);
  };
  const Bytes size(16'000'000);
  auto run = [&](const Rings& communicators) {
    FlowFabric fabric(fabric_of());
    std::vector<std::unique_ptr<CommunicatorNetwork>> views;
    std::vector<std::unique_ptr<RingCollective>> rings;
    for (const std::vector<std::int32_t>& members : communicators) {
      views.push_back(std::make_unique<CommunicatorNetwork>(fabric.network, members));
      std::vector<std::int32_t> local;
      for (std::int32_t r = 0; r < static_cast<std::int32_t>(members.size()); ++r) {
        local.push_back(r);
      }
      rings.push_back(std::make_unique<RingCollective>(fabric.sim, *views.back(), Rings{local},
                                                       CollectiveOp::kAllReduce, size));
    }
    for (const std::unique_ptr<RingCollective>& ring : rings) ring->start();
    (void)fabric.sim.run();
    std::vector<double> took;
    for (const std::unique_ptr<RingCollective>& ring : rings) {
      REQUIRE(ring->finished());
      took.push_back(static_cast<double>((ring->finished_at() - ring->started_at()).ps()));
    }
    return took;
  };
  const double across_alone = run({{0, 2}})[0];
  for (const double t : run({{0, 2}, {1, 3}})) {
    CHECK(t / across_alone == doctest::Approx(2.0).epsilon(0.05));
  }
  const double within_alone = run({{0, 1}})[0];
  const std::vector<double> within = run({{0, 1}, {2, 3}});
  CHECK(within[0] == within_alone);
  CHECK(within[1] == within_alone);
}

// A tree all-reduce whose leaf joins late holds back only the chunks that need it: the whole ends
// later by at most the lateness, and every rank hears its own end.
TEST_CASE("a tree all-reduce reports each rank's end and waits for a late leaf") {
  FlowFabric fabric(testing::star(3));
  TreeAllReduce tree(fabric.sim, fabric.network, {{-1, 0, 0}}, Bytes(1'000));
  std::vector<std::int32_t> done;
  tree.when_rank_finished([&](std::int32_t rank, Time) { done.push_back(rank); });
  tree.arrive(0, Time::zero());
  tree.arrive(1, Time::zero());
  tree.arrive(2, Time::zero() + Duration::us(50));
  (void)fabric.sim.run();
  REQUIRE(tree.finished());
  CHECK(done.size() == 3);
  // Alone, 2 x 2,254,880 ps (collectives_test.cpp); leaf 2's chunk now leaves at 50 us, after
  // leaf 1's has gone up alone, so the end is 50 us plus its one-way trip plus the way down.
  CHECK(tree.finished_at() > Time::zero() + Duration::us(50));
  CHECK(tree.finished_at() < Time::zero() + Duration::us(50) + Duration::ps(2 * 2'254'880));
}

// A priced collective ends `time` after its last member joined, on every member at once, and a
// timeout names the members that never came.
TEST_CASE("a priced collective ends its price after the last arrival, and times out like any") {
  Simulator sim;
  PricedCollective priced(sim, 4, {0, 1, 2, 3}, Duration::us(7));
  std::vector<Time> done(4, Time::max());
  priced.when_rank_finished(
      [&](std::int32_t rank, Time at) { done[static_cast<std::size_t>(rank)] = at; });
  for (std::int32_t r = 0; r < 3; ++r) priced.arrive(r, Time::zero() + Duration::us(r));
  priced.arrive(3, Time::zero() + Duration::us(20));
  (void)sim.run();
  REQUIRE(priced.finished());
  for (const Time t : done) CHECK(t == Time::zero() + Duration::us(27));
  CHECK(priced.finished_at() == Time::zero() + Duration::us(27));
  CHECK(priced.settled());
  CHECK(priced.messages_in_flight() == 0);

  PricedCollective stuck(sim, 3, {0, 2}, Duration::us(1));
  std::vector<std::int32_t> missing;
  stuck.set_timeout(Duration::ms(1),
                    [&](const std::vector<std::int32_t>& never) { missing = never; });
  stuck.arrive(0, sim.now());
  (void)sim.run();
  CHECK(stuck.state() == CollectiveState::kTimedOut);
  CHECK(missing == std::vector<std::int32_t>{2});
}

// One transfer from rank 0 to rank 2 of a star: it leaves when both have joined (the receiver
// posts its buffer at 50 us), so it lands one transfer time after 50 us, as the same message sent
// alone at 0 lands one transfer time after 0; the sender finishes when it has arrived too.
TEST_CASE("a point-to-point transfer waits for its receiver and then takes one transfer time") {
  const Bytes size(1'000'000);
  auto transfer = [&](Duration receiver_late) {
    FlowFabric fabric(testing::star(4));
    PointToPoint send(fabric.sim, fabric.network, 0, 2, size);
    std::vector<Time> done(4, Time::max());
    send.when_rank_finished(
        [&](std::int32_t rank, Time at) { done[static_cast<std::size_t>(rank)] = at; });
    send.arrive(0, Time::zero());
    send.arrive(2, Time::zero() + receiver_late);
    (void)fabric.sim.run();
    REQUIRE(send.finished());
    CHECK(done[0] == done[2]);
    CHECK(send.settled());
    return done[2] - Time::zero();
  };
  const Duration on_time = transfer(Duration());
  CHECK(on_time > Duration());
  CHECK(transfer(Duration::us(50)) == on_time + Duration::us(50));
  FlowFabric fabric(testing::star(4));
  CHECK_THROWS_AS(PointToPoint(fabric.sim, fabric.network, 1, 1, size), std::invalid_argument);
}

// A fluid ring on a star of 4 at 100 Gb/s (every host link at that rate, 1 us each way): once the
// last rank has joined at 30 us come the latencies (2 us base, 6 steps of 5 us), then every rank
// streams 2(n-1)/n of the 4 MB, 6 MB, to the next at the link's goodput, which its framing and
// the acknowledgements of the flow coming the other way leave (1000 of every 1126 bytes), and
// the path's two cable delays.
TEST_CASE("a fluid ring all-reduce streams 2(n-1)/n of the data per link once everyone joined") {
  FlowFabric fabric(testing::star(4));
  FluidRing ring(fabric.sim, fabric.network, Rings{{0, 1, 2, 3}}, CollectiveOp::kAllReduce,
                 Bytes(4'000'000), Duration::us(2), Duration::us(5));
  std::vector<Time> done(4, Time::max());
  ring.when_rank_finished(
      [&](std::int32_t rank, Time at) { done[static_cast<std::size_t>(rank)] = at; });
  for (std::int32_t r = 0; r < 3; ++r) ring.arrive(r, Time::zero());
  ring.arrive(3, Time::zero() + Duration::us(30));
  (void)fabric.sim.run();
  REQUIRE(ring.finished());
  const BitRate goodput = BitRate::bps(100'000'000'000 * 1000 / 1126);
  const Time expected =
      Time::zero() + Duration::us(30 + 2 + 30 + 2) + tx_time(Bytes(6'000'000), goodput);
  CHECK(ring.finished_at() >= expected - Duration::ns(100));
  CHECK(ring.finished_at() <= expected + Duration::us(1));
  for (const Time t : done) CHECK(t <= ring.finished_at());
  CHECK(ring.settled());
  CHECK_THROWS_AS(FluidRing(fabric.sim, fabric.network, Rings{{0, 1}}, CollectiveOp::kAllToAll,
                            Bytes(1), Duration(), Duration()),
                  std::invalid_argument);
  CHECK_THROWS_AS(FluidRing(fabric.sim, fabric.network, Rings{{0, 1}, {0, 2}},
                            CollectiveOp::kAllGather, Bytes(1), Duration(), Duration()),
                  std::invalid_argument);
  CHECK_THROWS_AS(FluidRing(fabric.sim, fabric.network, Rings{{0, 1}}, CollectiveOp::kAllGather,
                            Bytes(1), Duration(), Duration(), 0.0),
                  std::invalid_argument);
}

// NCCL's speed for a channel below the link's goodput: the same ring's 6 MB per link end no sooner
// than they take at 40 Gb/s, and the path after that: its two cable delays and the last packet
// (1000 B of payload and 62 B of headers) stored and forwarded at the switch.
TEST_CASE("a fluid ring's channel ends no sooner than its ceiling lets its data leave") {
  FlowFabric fabric(testing::star(4));
  FluidRing ring(fabric.sim, fabric.network, Rings{{0, 1, 2, 3}}, CollectiveOp::kAllReduce,
                 Bytes(4'000'000), Duration::us(2), Duration::us(5), 1.0, BitRate::gbps(40));
  for (std::int32_t r = 0; r < 4; ++r) ring.arrive(r, Time::zero());
  (void)fabric.sim.run();
  REQUIRE(ring.finished());
  CHECK(ring.finished_at() == Time::zero() + Duration::us(2 + 30) +
                                  tx_time(Bytes(6'000'000), BitRate::gbps(40)) + Duration::us(2) +
                                  tx_time(Bytes(1062), testing::kRate));
}

// LL128 sends an 8-byte flag with every 120 bytes: the same ring's 6 MB per link cross it as
// 6.4 MB of wire bytes, all four ranks joined at once.
TEST_CASE("a fluid ring streams its protocol's wire bytes") {
  FlowFabric fabric(testing::star(4));
  FluidRing ring(fabric.sim, fabric.network, Rings{{0, 1, 2, 3}}, CollectiveOp::kAllReduce,
                 Bytes(4'000'000), Duration::us(2), Duration::us(5), 120.0 / 128.0);
  for (std::int32_t r = 0; r < 4; ++r) ring.arrive(r, Time::zero());
  (void)fabric.sim.run();
  REQUIRE(ring.finished());
  const BitRate goodput = BitRate::bps(100'000'000'000 * 1000 / 1126);
  const Time expected =
      Time::zero() + Duration::us(2 + 30 + 2) + tx_time(Bytes(6'400'000), goodput);
  CHECK(ring.finished_at() >= expected - Duration::ns(100));
  CHECK(ring.finished_at() <= expected + Duration::us(1));
}

// The fluid ring of 4 above, sent through a tally: it still ends (every message reached the
// fabric and its completion came back), and each link of the ring carried its 6 MB, listed by
// source, destination and queue pair, sent once the latencies had passed (32 us) and in some
// 500 us later.
TEST_CASE("a traffic tally passes every message on and adds up each queue pair's bytes") {
  FlowFabric fabric(testing::star(4));
  TrafficTally tally(fabric.sim, fabric.network);
  FluidRing ring(fabric.sim, tally, Rings{{0, 1, 2, 3}}, CollectiveOp::kAllReduce, Bytes(4'000'000),
                 Duration::us(2), Duration::us(5));
  for (std::int32_t r = 0; r < 4; ++r) ring.arrive(r, Time::zero());
  (void)fabric.sim.run();
  REQUIRE(ring.finished());
  CHECK(tally.endpoint_count() == 4);
  CHECK(tally.latency(0, 1, 0) == fabric.network.latency(0, 1, 0));
  const std::vector<QueuePairTraffic> traffic = tally.traffic();
  REQUIRE(traffic.size() == 4);
  const QueuePairKey links[] = {{0, 1, 0}, {1, 2, 0}, {2, 3, 0}, {3, 0, 0}};
  for (std::size_t i = 0; i < traffic.size(); ++i) {
    CHECK(traffic[i].pair == links[i]);
    CHECK(traffic[i].bytes == Bytes(6'000'000));
    CHECK(traffic[i].first_sent == Time::zero() + Duration::us(2 + 30));
    CHECK(traffic[i].last_delivered <= ring.finished_at());
    CHECK(traffic[i].last_delivered > traffic[i].first_sent + Duration::us(400));
  }
}

// A replay on a star of 4 at 100 Gb/s: rank 3 joins last, at 30 us. Rank 0 then streams 3 MB to
// each of ranks 1 and 2 at once, and 10 us later rank 2 streams 1 MB to rank 3. Rank 0's link
// carries its 6 MB in packets of 1000 B of payload and 62 B of headers (no acknowledgement comes
// its way), then the path's two cable delays of 1 us each; rank 1 is done with its 3 MB 5 us
// after they are in, and so is the collective. Rank 3's 1 MB is in long before.
TEST_CASE("a fluid replay streams each queue pair's bytes from its start, then what follows") {
  FlowFabric fabric(testing::star(4));
  FluidReplay replay(fabric.sim, fabric.network,
                     {{{0, 1, 0}, Bytes(3'000'000), Duration(), Duration::us(5)},
                      {{0, 2, 0}, Bytes(3'000'000), Duration(), Duration()},
                      {{2, 3, 1}, Bytes(1'000'000), Duration::us(10), Duration()}},
                     NcclAlgorithm::kTree);
  std::vector<Time> done(4, Time::max());
  replay.when_rank_finished(
      [&](std::int32_t rank, Time at) { done[static_cast<std::size_t>(rank)] = at; });
  for (std::int32_t r = 0; r < 3; ++r) replay.arrive(r, Time::zero());
  replay.arrive(3, Time::zero() + Duration::us(30));
  (void)fabric.sim.run();
  REQUIRE(replay.finished());
  CHECK(replay.transfers() == 3);
  const Time in =
      Time::zero() + Duration::us(30 + 2) + tx_time(Bytes(6'000'000 / 1000 * 1062), testing::kRate);
  CHECK(done[2] >= in - Duration::ns(100));
  CHECK(done[2] <= in + Duration::us(1));
  CHECK(done[1] == done[2] + Duration::us(5));
  CHECK(replay.finished_at() == done[1]);
  CHECK(done[3] > Time::zero() + Duration::us(40) + tx_time(Bytes(1'000'000), testing::kRate));
  CHECK(done[3] < done[2]);
  CHECK(replay.settled());
  CHECK_THROWS_AS(
      FluidReplay(fabric.sim, fabric.network, {{{1, 1, 0}, Bytes(1), Duration(), Duration()}},
                  NcclAlgorithm::kTree),
      std::invalid_argument);
  CHECK_THROWS_AS(
      FluidReplay(fabric.sim, fabric.network, {{{0, 4, 0}, Bytes(1), Duration(), Duration()}},
                  NcclAlgorithm::kTree),
      std::invalid_argument);
}

// What a collective made by `make` (on a star of `hosts` at flow level) does alone, all its
// ranks joined at once: how long it takes, and what each queue pair carried.
struct Tallied {
  Duration time;
  std::vector<QueuePairTraffic> traffic;
};
template <class Make>
Tallied run_tallied(std::int32_t hosts, Make make) {
  FlowFabric fabric(testing::star(hosts));
  TrafficTally tally(fabric.sim, fabric.network);
  const std::unique_ptr<Collective> collective = make(fabric.sim, tally);
  collective->start();
  (void)fabric.sim.run();
  REQUIRE(collective->finished());
  CHECK(collective->settled());
  return Tallied{collective->finished_at() - collective->started_at(), tally.traffic()};
}

// The links of a ring of 4 with two ranks to a node: `links` in the tally's order, those between
// nodes (1 to 2, 3 to 0) carrying `across` each, those inside a node 6 MB.
void check_ring_links(const std::vector<QueuePairTraffic>& traffic,
                      std::span<const QueuePairKey> links, Bytes across) {
  REQUIRE(traffic.size() == links.size());
  for (std::size_t i = 0; i < traffic.size(); ++i) {
    CHECK(traffic[i].pair == links[i]);
    const bool between_nodes = links[i].source / 2 != links[i].destination / 2;
    CHECK(traffic[i].bytes == (between_nodes ? across : Bytes(6'000'000)));
  }
}

// NCCL_IB_QPS_PER_CONNECTION = 3 with two ranks to a node: the ring of 4 on a star crosses nodes
// from 1 to 2 and from 3 to 0. Those links' 6 MB are split evenly over queue pairs 0, 1 and 2 of
// their connection (queue pair 0 x 3 + k); the links inside a node keep queue pair 0. With every
// rank on a node of its own, every link is split, and three streams of 2 MB on a link end when one
// of 6 MB would: each takes a third of the link, and of its acknowledgements' way back.
TEST_CASE("a fluid ring splits each link between nodes over its connection's queue pairs") {
  auto run = [](RingConnections connections) {
    return run_tallied(4, [&](Simulator& sim, Network& network) {
      return std::make_unique<FluidRing>(
          sim, network, Rings{{0, 1, 2, 3}}, CollectiveOp::kAllReduce, Bytes(4'000'000),
          Duration::us(2), Duration::us(5), 1.0, std::nullopt, connections);
    });
  };
  const QueuePairKey links[] = {{0, 1, 0}, {1, 2, 0}, {1, 2, 1}, {1, 2, 2},
                                {2, 3, 0}, {3, 0, 0}, {3, 0, 1}, {3, 0, 2}};
  check_ring_links(run(RingConnections{2, 3}).traffic, links, Bytes(2'000'000));
  const Duration split = run(RingConnections{1, 3}).time;
  const Duration whole = run(RingConnections{1, 1}).time;
  CHECK(split >= whole - Duration::ns(1));
  CHECK(split <= whole + Duration::ns(1));
  FlowFabric fabric(testing::star(2));
  CHECK_THROWS_AS(
      FluidRing(fabric.sim, fabric.network, Rings{{0, 1}}, CollectiveOp::kAllReduce, Bytes(1),
                Duration(), Duration(), 1.0, std::nullopt, RingConnections{1, 0}),
      std::invalid_argument);
}

// The step-by-step ring takes its connection's queue pairs in turn, message by message, as NCCL
// posts each on the next (NCCL_IB_SPLIT_DATA_ON_QPS=0): with two to a connection, the 6 steps of a
// ring of 4 put 3 chunks on each of queue pairs 0 and 1 between nodes, while inside a node every
// step keeps queue pair 0. The bytes are the same; so is the time, with one path between ranks.
TEST_CASE("a ring's messages between nodes take their connection's queue pairs in turn") {
  auto run = [](std::int32_t queue_pairs) {
    return run_tallied(4, [&](Simulator& sim, Network& network) {
      ProtocolOverheads overheads;
      overheads.gpus_per_node = 2;
      overheads.queue_pairs_per_connection = queue_pairs;
      return std::make_unique<RingCollective>(
          sim, network, Rings{{0, 1, 2, 3}}, CollectiveOp::kAllReduce, Bytes(4'000'000), overheads);
    });
  };
  const Tallied two = run(2);
  CHECK(two.time == run(1).time);
  const QueuePairKey links[] = {{0, 1, 0}, {1, 2, 0}, {1, 2, 1}, {2, 3, 0}, {3, 0, 0}, {3, 0, 1}};
  check_ring_links(two.traffic, links, Bytes(3'000'000));
  CHECK(connection_queue_pair(5, 1, 7) == 5);
  CHECK(connection_queue_pair(5, 3, 7) == 16);
  ProtocolOverheads none;
  none.gpus_per_node = 2;
  none.queue_pairs_per_connection = 0;
  FlowFabric fabric(testing::star(4));
  CHECK_THROWS_AS(RingCollective(fabric.sim, fabric.network, Rings{{0, 1, 2, 3}},
                                 CollectiveOp::kAllReduce, Bytes(1), none),
                  std::invalid_argument);
}

// A send between nodes over four queue pairs per connection: four parts of 1 MB, one on each of
// queue pairs 0 to 3, ending when the 4 MB would on one (they share the sender's link).
TEST_CASE("a send between nodes puts a part on each queue pair of its connection") {
  auto run = [](std::int32_t queue_pairs) {
    return run_tallied(2, [&](Simulator& sim, Network& network) {
      ProtocolOverheads overheads;
      overheads.queue_pairs_per_connection = queue_pairs;
      return std::make_unique<PointToPoint>(sim, network, 0, 1, Bytes(4'000'000), overheads);
    });
  };
  const Tallied four = run(4);
  const Duration one = run(1).time;
  CHECK(four.time >= one - Duration::ns(1));
  CHECK(four.time <= one + Duration::ns(1));
  REQUIRE(four.traffic.size() == 4);
  for (std::uint32_t k = 0; k < 4; ++k) {
    CHECK(four.traffic[k].pair == QueuePairKey{0, 1, k});
    CHECK(four.traffic[k].bytes == Bytes(1'000'000));
  }
}

}  // namespace
}  // namespace lockstep
