// End-to-end tests of the flow-level fabric on small topologies: times derived by hand to the
// picosecond, max-min shares that differ from equal sharing, the packet backend's exact times and
// paths where the two must agree, and link changes in the middle of a transfer.
#include "models/transport/flow_network.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "completions.hpp"
#include "memory_backend.hpp"
#include "models/fabric/fat_tree.hpp"
#include "models/fabric/leaf_spine.hpp"
#include "models/transport/packet_network.hpp"
#include "small_topologies.hpp"

namespace lockstep {
namespace {

using testing::Completions;

using testing::chain;
using testing::kDelay;
using testing::kRate;
using testing::star;

struct FlowFixture {
  explicit FlowFixture(Topology t) : topology(std::move(t)) {}
  Simulator sim;
  Topology topology;
  Routing routing{topology};
  FlowNetworkConfig config;
  testing::MemoryBackend output;
  FlowNetwork network{sim, routing, config, 1, output};
  Completions completions;
};

// Ten packets of 1000 B + 62 B drain at 100 Gb/s in 849,600 ps; the last one is forwarded by two
// switches (84,960 ps each) over three 1 us hops; its 64 B acknowledgement returns over three hops
// (5,120 ps each). A second message of 5,500 B (six packets, the last with 500 B of payload: 562 B
// on the wire) drains right after the first, 5,872 B in 469,760 ps, so its last packet leaves at
// 1,319,360 ps; each switch then finishes it one full packet's time (84,960 ps) after the one
// before it, since it waits behind that packet. The packet backend gives the same times: alone on
// an idle path the two agree to the picosecond.
TEST_CASE("messages alone on a chain complete at the packet backend's store-and-forward times") {
  FlowFixture f(chain());
  (void)f.network.send(0, 1, Bytes(10'000), 0, f.completions);
  (void)f.network.send(0, 1, Bytes(5'500), 0, f.completions);
  (void)f.sim.run();
  REQUIRE(f.completions.done.size() == 2);
  const MessageTimes& first = f.completions.done[0].second;
  const MessageTimes& second = f.completions.done[1].second;
  CHECK(first.first_sent.ps() == 0);
  CHECK(first.delivered.ps() == 849'600 + 2 * 84'960 + 3'000'000);
  CHECK(first.acknowledged.ps() == 4'019'520 + 3 * 5'120 + 3'000'000);
  CHECK(second.first_sent.ps() == 849'600);
  CHECK(second.delivered.ps() == 1'319'360 + 2 * 84'960 + 3'000'000);
  CHECK(second.acknowledged.ps() == 4'489'280 + 3 * 5'120 + 3'000'000);

  Simulator sim;
  const Topology topology = chain();
  const Routing routing(topology);
  PacketNetworkConfig config;
  config.switches.pfc.lossless.set(3);
  testing::MemoryBackend output;
  PacketNetwork packets(sim, routing, config, 1, output);
  Completions completions;
  (void)packets.send(0, 1, Bytes(10'000), 0, completions);
  (void)packets.send(0, 1, Bytes(5'500), 0, completions);
  (void)sim.run();
  REQUIRE(completions.done.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(completions.done[i].second.delivered.ps() == f.completions.done[i].second.delivered.ps());
    CHECK(completions.done[i].second.acknowledged.ps() ==
          f.completions.done[i].second.acknowledged.ps());
  }
}

// Two senders into host 2, 1,000,000 B each (1,000 packets, 8,496,000 bits on the wire): the
// switch's port to host 2 is shared, 50 Gb/s each, so both drain at 169,920,000 ps; the last packet
// then crosses that port (84,960 ps) and two 1 us hops, and the acknowledgement returns over two
// hops of 5,120 ps + 1 us.
TEST_CASE("two flows into one host share its link and finish at the fluid time") {
  FlowFixture f(star(3));
  (void)f.network.send(0, 2, Bytes(1'000'000), 0, f.completions);
  (void)f.network.send(1, 2, Bytes(1'000'000), 0, f.completions);
  CHECK(f.sim.run(Time::from_ps(1'000'000)) == RunOutcome::kReachedLimit);
  CHECK(f.network.rate_bps(0, 2, 0) == 50e9);
  CHECK(f.network.rate_bps(1, 2, 0) == 50e9);
  (void)f.sim.run();
  REQUIRE(f.completions.done.size() == 2);
  for (const auto& [message, times] : f.completions.done) {
    CHECK(times.delivered.ps() == 169'920'000 + 84'960 + 2'000'000);
    CHECK(times.acknowledged.ps() == 172'004'960 + 2 * 5'120 + 2'000'000);
  }
  CHECK(f.network.recomputations().count == 2);  // both start together; both end together
}

// Flow 0 runs alone at 100 Gb/s for 40 us (4,000,000 bits), then shares with flow 1 at 50 Gb/s
// until its remaining 4,496,000 bits are out (89,920,000 ps later, at 129,920,000 ps); flow 1 has
// sent 4,496,000 bits by then and sends its last 4,000,000 alone at 100 Gb/s, by 169,920,000 ps.
TEST_CASE("a flow that joins later takes half from then on, and all once the other ends") {
  FlowFixture f(star(3));
  (void)f.network.send(0, 2, Bytes(1'000'000), 0, f.completions);
  CHECK(f.sim.run(Time::from_ps(40'000'000)) == RunOutcome::kReachedLimit);
  (void)f.network.send(1, 2, Bytes(1'000'000), 0, f.completions);
  (void)f.sim.run();
  REQUIRE(f.completions.done.size() == 2);
  const std::int64_t tail = 84'960 + 2'000'000;
  CHECK(f.completions.done[0].first.source == 0);
  CHECK(f.completions.done[0].second.delivered.ps() == 129'920'000 + tail);
  CHECK(f.completions.done[1].second.first_sent.ps() == 40'000'000);
  CHECK(f.completions.done[1].second.delivered.ps() == 169'920'000 + tail);
}

// Hosts 0, 1 and 2 on switch s1 send over the s1 -> s2 link (A: 0 -> 3, B: 1 -> 4, D: 2 -> 5), and
// host 5 sends to host 3 (C), sharing s2 -> host 3 with A. Max-min: A, B and D get a third of the
// s1 -> s2 link each, and C takes the two thirds of its link that A cannot use, where equal
// sharing of every link would hold C to half.
TEST_CASE("parking lot: the short flow takes what the long flow cannot use") {
  const NodeId s1 = 6;
  const NodeId s2 = 7;
  FlowFixture f(build_explicit(6, {{"s1", Bytes(32'000'000)}, {"s2", Bytes(32'000'000)}},
                               {{0, s1, kRate, kDelay},
                                {1, s1, kRate, kDelay},
                                {2, s1, kRate, kDelay},
                                {3, s2, kRate, kDelay},
                                {4, s2, kRate, kDelay},
                                {5, s2, kRate, kDelay},
                                {s1, s2, kRate, kDelay}}));
  for (const auto& [from, to] :
       std::vector<std::pair<NodeId, NodeId>>{{0, 3}, {1, 4}, {2, 5}, {5, 3}}) {
    (void)f.network.send(from, to, Bytes(10'000'000), 0, f.completions);
  }
  (void)f.sim.run(Time::from_ps(1'000'000));
  CHECK(f.network.rate_bps(0, 3, 0) == doctest::Approx(100e9 / 3).epsilon(1e-12));
  CHECK(f.network.rate_bps(1, 4, 0) == doctest::Approx(100e9 / 3).epsilon(1e-12));
  CHECK(f.network.rate_bps(2, 5, 0) == doctest::Approx(100e9 / 3).epsilon(1e-12));
  CHECK(f.network.rate_bps(5, 3, 0) == doctest::Approx(200e9 / 3).epsilon(1e-12));
}

// The acknowledgements of a flow take 64 B per 1,062 B data packet from the reverse direction: a
// flow sending against them into a host gets the rest of the link.
TEST_CASE("acknowledgements take their share of the reverse direction") {
  FlowFixture f(star(2));
  (void)f.network.send(0, 1, Bytes(10'000'000), 0, f.completions);
  (void)f.network.send(1, 0, Bytes(10'000'000), 0, f.completions);
  (void)f.sim.run(Time::from_ps(1'000'000));
  // Each host link direction carries one flow's data (r) and the other's acknowledgements
  // (64/1062 r): r (1 + 64/1062) = 100 Gb/s.
  CHECK(f.network.rate_bps(0, 1, 0) == doctest::Approx(100e9 / (1.0 + 64.0 / 1062.0)));
}

// Host 0's stack sustains 20 Gb/s each way: its two flows out get 10 Gb/s each, host 1's flow to
// host 2 takes the rest of host 2's link, and a flow into host 0 gets the 20 Gb/s of its receiving
// side.
TEST_CASE("an endpoint's limit is shared by everything it sends, and by all it receives") {
  FlowFixture f(star(3));
  (void)f.network.send(0, 1, Bytes(10'000'000), 0, f.completions);
  (void)f.network.send(0, 2, Bytes(10'000'000), 0, f.completions);
  (void)f.network.send(1, 2, Bytes(10'000'000), 0, f.completions);
  (void)f.sim.run(Time::from_ps(1'000'000));
  CHECK(f.network.rate_bps(0, 2, 0) == 50e9);
  f.network.limit_endpoint(0, BitRate::gbps(20));
  (void)f.sim.run(Time::from_ps(2'000'000));
  CHECK(f.network.rate_bps(0, 1, 0) == doctest::Approx(10e9));
  CHECK(f.network.rate_bps(0, 2, 0) == doctest::Approx(10e9));
  CHECK(f.network.rate_bps(1, 2, 0) == doctest::Approx(90e9));
  (void)f.network.send(2, 0, Bytes(10'000'000), 0, f.completions);
  (void)f.sim.run(Time::from_ps(3'000'000));
  CHECK(f.network.rate_bps(2, 0, 0) == doctest::Approx(20e9));
  CHECK_THROWS(f.network.limit_endpoint(3, BitRate::gbps(1)));
  CHECK_THROWS(f.network.limit_endpoint(0, BitRate::bps(0)));
}

// Hosts 0 and 1 share one 20 Gb/s limit (one host interface for both): their flows out get
// 10 Gb/s each, a flow into host 1 gets the limit's receiving side, and a limit given again
// replaces the one before.
TEST_CASE("a limit shared by endpoints is shared by everything they send, and all they receive") {
  FlowFixture f(star(4));
  f.network.limit_endpoints({0, 1}, BitRate::gbps(20));
  (void)f.network.send(0, 2, Bytes(10'000'000), 0, f.completions);
  (void)f.network.send(1, 3, Bytes(10'000'000), 0, f.completions);
  (void)f.network.send(3, 1, Bytes(10'000'000), 0, f.completions);
  (void)f.sim.run(Time::from_ps(1'000'000));
  CHECK(f.network.rate_bps(0, 2, 0) == doctest::Approx(10e9));
  CHECK(f.network.rate_bps(1, 3, 0) == doctest::Approx(10e9));
  CHECK(f.network.rate_bps(3, 1, 0) == doctest::Approx(20e9));
  f.network.limit_endpoint(0, BitRate::gbps(40));
  (void)f.sim.run(Time::from_ps(2'000'000));
  CHECK(f.network.rate_bps(0, 2, 0) == doctest::Approx(40e9));
  CHECK(f.network.rate_bps(1, 3, 0) == doctest::Approx(20e9));
}

// Two hosts on leaf 0 send to two on leaf 1 on queue pairs that ECMP puts on different spines.
struct TwoSpines {
  static Topology topology() {
    LeafSpineSpec spec;
    spec.leaves = 2;
    spec.spines = 2;
    spec.hosts_per_leaf = 2;
    spec.uplinks_per_leaf = 2;
    spec.host_link = {kRate, kDelay};
    spec.fabric_link = {kRate, kDelay};
    spec.switch_buffer = Bytes(32'000'000);
    return build_leaf_spine(spec);
  }
  FlowFixture f{topology()};
  std::uint32_t y_queue_pair = 0;

  TwoSpines() {
    // X is 0 -> 2 on queue pair 0; Y is 1 -> 3 on the first queue pair whose spine differs.
    const NodeId x_spine = spine_of(f.routing.path(0, 2, queue_pair_entropy(1, 0, 2, 0)));
    while (spine_of(f.routing.path(1, 3, queue_pair_entropy(1, 1, 3, y_queue_pair))) == x_spine) {
      ++y_queue_pair;
    }
    (void)f.network.send(0, 2, Bytes(10'000'000), 0, f.completions);
    (void)f.network.send(1, 3, Bytes(10'000'000), y_queue_pair, f.completions);
    (void)f.sim.run(Time::from_ps(100'000'000));
  }
  static NodeId spine_of(const std::vector<Hop>& hops) { return hops[2].node; }
  [[nodiscard]] CableId x_uplink() const { return f.network.path(0, 2, 0)[1].cable; }
};

bool uses_cable(const std::vector<Hop>& hops, CableId cable) {
  return std::any_of(hops.begin(), hops.end(), [cable](const Hop& h) { return h.cable == cable; });
}

// X's uplink drops to 25 Gb/s at 100 us: X slows to 25 Gb/s, Y keeps 100 Gb/s. X has sent
// 10,000,000 of its 84,960,000 bits, so it drains 2,998,400,000 ps later; its last packet then
// crosses the slow uplink (339,840 ps), the spine and leaf 1 (84,960 ps each) and four 1 us hops.
TEST_CASE("a degraded link slows exactly the flows that cross it") {
  TwoSpines t;
  FlowNetwork& network = t.f.network;
  CHECK(network.rate_bps(0, 2, 0) == 100e9);
  CHECK(network.rate_bps(1, 3, t.y_queue_pair) == 100e9);
  network.set_cable_rate(t.x_uplink(), BitRate::gbps(25));
  (void)t.f.sim.run(Time::from_ps(100'000'001));
  CHECK(network.rate_bps(0, 2, 0) == 25e9);
  CHECK(network.rate_bps(1, 3, t.y_queue_pair) == 100e9);
  (void)t.f.sim.run();
  REQUIRE(t.f.completions.done.size() == 2);
  const auto& x = *std::find_if(t.f.completions.done.begin(), t.f.completions.done.end(),
                                [](const auto& done) { return done.first.source == 0; });
  CHECK(x.second.delivered.ps() == 3'098'400'000 + 339'840 + 2 * 84'960 + 4'000'000);
}

// X's uplink fails at 100 us: X moves to the other spine, where it shares Y's uplink (50 Gb/s
// each); Y keeps its path; both still complete, every byte counted on the links they used.
TEST_CASE("a failed link reroutes exactly the flows that crossed it") {
  TwoSpines t;
  FlowNetwork& network = t.f.network;
  const CableId failed = t.x_uplink();
  const std::vector<Hop> y_before = network.path(1, 3, t.y_queue_pair);
  network.fail_cable(failed);
  (void)t.f.sim.run(Time::from_ps(100'000'001));
  const std::vector<Hop> x_after = network.path(0, 2, 0);
  CHECK_FALSE(uses_cable(x_after, failed));
  CHECK(TwoSpines::spine_of(x_after) == TwoSpines::spine_of(y_before));
  const std::vector<Hop> y_after = network.path(1, 3, t.y_queue_pair);
  CHECK(std::equal(y_before.begin(), y_before.end(), y_after.begin(), y_after.end(),
                   [](const Hop& a, const Hop& b) { return a.cable == b.cable; }));
  CHECK(network.rate_bps(0, 2, 0) == 50e9);
  CHECK(network.rate_bps(1, 3, t.y_queue_pair) == 50e9);
  // New queue pairs avoid the failed cable too.
  (void)network.send(0, 3, Bytes(1'000), 5, t.f.completions);
  CHECK_FALSE(uses_cable(network.path(0, 3, 5), failed));
  (void)t.f.sim.run();
  CHECK(t.f.completions.done.size() == 3);
}

// A shifted permutation of the 16 hosts of a k = 4 fat tree, 100 packets per message.
void send_permutation(Network& network, Completions& completions) {
  for (NodeId h = 0; h < 16; ++h)
    (void)network.send(h, (h + 5) % 16, Bytes(100'000), 0, completions);
}

std::vector<std::string> message_paths(const testing::MemoryBackend& output) {
  std::vector<std::string> paths(16);
  for (const MessageRow& row : output.rows<MessageRow>("messages")) {
    paths.at(static_cast<std::size_t>(row.message)) = std::string(row.path.view());
  }
  return paths;
}

// Every message takes the packet backend's path for the same seed, and every link counts the wire
// bytes of exactly the messages that crossed it.
TEST_CASE("flows take the packet backend's ECMP paths and every byte is counted once per hop") {
  const Topology topology = build_fat_tree(4, LinkSpec{kRate, kDelay}, Bytes(32'000'000));
  const Routing routing(topology);

  Simulator flow_sim;
  testing::MemoryBackend flow_output;
  FlowNetwork flows(flow_sim, routing, FlowNetworkConfig{}, 1, flow_output);
  Completions flow_completions;
  send_permutation(flows, flow_completions);
  (void)flow_sim.run();
  flows.finish();
  CHECK(flow_completions.done.size() == 16);

  Simulator packet_sim;
  testing::MemoryBackend packet_output;
  PacketNetworkConfig packet_config;
  packet_config.switches.pfc.lossless.set(3);
  PacketNetwork packets(packet_sim, routing, packet_config, 1, packet_output);
  Completions packet_completions;
  send_permutation(packets, packet_completions);
  (void)packet_sim.run();
  packets.finish();

  const std::vector<std::string> paths = message_paths(flow_output);
  CHECK(paths == message_paths(packet_output));
  std::int64_t expected = 0;
  for (const std::string& path : paths) {
    expected += 106'200 * static_cast<std::int64_t>(std::count(path.begin(), path.end(), '>'));
  }
  std::int64_t counted = 0;
  for (NodeId n = 0; n < topology.node_count(); ++n) {
    for (std::size_t p = 0; p < topology.ports(n).size(); ++p) {
      counted += flows.link_bytes_sent(n, static_cast<PortIndex>(p));
    }
  }
  CHECK(counted == expected);
}

}  // namespace
}  // namespace lockstep
