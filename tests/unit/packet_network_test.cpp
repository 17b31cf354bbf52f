// End-to-end tests of the packet-level fabric on small topologies: exact times derived by hand,
// line-rate goodput, PFC in incast, head-of-line blocking, and the conservation invariants that
// every test checks (no byte appears or vanishes; nothing is dropped on a lossless class).
#include <doctest/doctest.h>

#include <vector>

#include "completions.hpp"
#include "memory_backend.hpp"
#include "models/fabric/leaf_spine.hpp"
#include "models/transport/packet_network.hpp"
#include "small_topologies.hpp"

namespace lockstep {
namespace {

using testing::Completions;

PacketNetworkConfig lossless_config() {
  PacketNetworkConfig c;
  c.switches.pfc.lossless.set(3);
  c.switches.ecn.enabled = false;
  c.transport.data_class = 3;
  return c;
}

// Bytes are conserved and lossless classes never drop; checked at the end of every run.
void check_invariants(const PacketNetwork& network, bool lossless) {
  const DataAccount a = network.data_account();
  CHECK(a.injected == a.delivered + a.in_fabric + a.dropped);
  if (lossless) {
    CHECK(a.dropped == 0);
    CHECK(network.lossless_drops() == 0);
  }
}

using testing::chain;

// A lossless network on chain(), everything a test needs to send and run.
struct ChainNetwork {
  Simulator sim;
  Topology topology = chain();
  Routing routing{topology};
  PacketNetworkConfig config = lossless_config();
  testing::MemoryBackend output;
  PacketNetwork network{sim, routing, config, 1, output};
};

// Ten packets of 1000 B payload + 62 B header = 1062 B: s = 1062 x 8 / 100 Gb/s = 84.96 ns.
// Store and forward over 3 hops: the last bit of packet 10 leaves host0 at 10 s, and each of the
// two switches adds one more serialization; each hop adds 1 us of propagation:
//   delivered = 10 s + 2 s + 3 x 1 us = 1,019,520 ps + 3,000,000 ps = 4,019,520 ps.
// The ACK (64 B, 5.12 ns per hop) returns over the same three idle hops:
//   acknowledged = delivered + 3 x 5,120 ps + 3 x 1 us = 7,034,880 ps.
TEST_CASE("one message over a chain completes at the store-and-forward time to the picosecond") {
  ChainNetwork chain_network;
  Simulator& sim = chain_network.sim;
  PacketNetwork& network = chain_network.network;
  Completions completions;
  (void)network.send(0, 1, Bytes(10'000), 0, completions);
  (void)sim.run();
  REQUIRE(completions.done.size() == 1);
  const MessageTimes& t = completions.done[0].second;
  CHECK(t.first_sent.ps() == 0);
  CHECK(t.delivered.ps() == 4'019'520);
  CHECK(t.acknowledged.ps() == 7'034'880);
  CHECK(network.packet_hops() == 10 * 3 + 10 * 3);  // data out, one ACK per data packet back
  check_invariants(network, true);
}

Topology two_leaves(std::int32_t hosts_per_leaf, BitRate host_rate, BitRate fabric_rate,
                    std::int32_t uplinks) {
  LeafSpineSpec spec;
  spec.leaves = 2;
  spec.spines = 1;
  spec.hosts_per_leaf = hosts_per_leaf;
  spec.uplinks_per_leaf = uplinks;
  spec.host_link = LinkSpec{host_rate, Duration::us(1)};
  spec.fabric_link = LinkSpec{fabric_rate, Duration::us(1)};
  spec.switch_buffer = Bytes(32'000'000);
  return build_leaf_spine(spec);
}

// Packets follow the route their flow was given when it was set up, so a flow between endpoints
// that no path joins is refused then, before anything is sent.
TEST_CASE("a flow between endpoints that no path joins is refused when it is set up") {
  Simulator sim;
  const Topology islands = build_explicit(
      2, {{"sw0", Bytes(32'000'000)}, {"sw1", Bytes(32'000'000)}},
      {{0, 2, testing::kRate, testing::kDelay}, {1, 3, testing::kRate, testing::kDelay}});
  const Routing routing(islands);
  const PacketNetworkConfig config = lossless_config();
  testing::MemoryBackend output;
  PacketNetwork network(sim, routing, config, 1, output);
  Completions completions;
  CHECK_THROWS_WITH_AS((void)network.send(0, 1, Bytes(1000), 0, completions),
                       "no route between endpoints 0 and 1", std::invalid_argument);
  CHECK(network.flows().empty());
  CHECK(sim.pending() == 0);
}

// Goodput of a lone 20 MB flow: payload / (payload + header) of 100 Gb/s = 1000/1062 x 100 Gb/s
// = 94.16 Gb/s, measured from its first packet leaving to its last byte arriving.
TEST_CASE("one flow on an idle path reaches line rate less header overhead") {
  Simulator sim;
  const Topology topology = two_leaves(2, BitRate::gbps(100), BitRate::gbps(100), 1);
  const Routing routing(topology);
  const PacketNetworkConfig config = lossless_config();
  testing::MemoryBackend output;
  PacketNetwork network(sim, routing, config, 1, output);
  Completions completions;
  const Bytes size(20'000'000);
  (void)network.send(0, 3, size, 0, completions);
  (void)sim.run();
  REQUIRE(completions.done.size() == 1);
  const MessageTimes& t = completions.done[0].second;
  const double seconds = (t.delivered - t.first_sent).seconds();
  const double goodput = static_cast<double>(size.count()) * 8 / seconds;
  const double expected = 100e9 * 1000.0 / 1062.0;
  CHECK(goodput == doctest::Approx(expected).epsilon(0.01));
  CHECK(goodput <= expected);
  check_invariants(network, true);
}

struct IncastRun {
  std::int64_t completed = 0;
  std::int64_t pauses = 0;
  std::int64_t drops = 0;
  std::int64_t retransmitted = 0;
  Duration victim;  // completion time of the victim flow, if any
};

// Senders 0..n-1 on leaf 0 each send 2 MB to host `hosts_per_leaf` (first host of leaf 1); with
// `victim`, host n on leaf 0 also sends 2 MB to host hosts_per_leaf + 1 on leaf 1, sharing the
// leaf0 -> spine -> leaf1 path with the incast but not its bottleneck (leaf 1's port to the
// receiver).
IncastRun incast(bool pfc, std::int32_t senders, bool victim,
                 std::vector<MessageTimes>* times = nullptr, bool as_large_fabric = false) {
  Simulator sim;
  const std::int32_t per_leaf = senders + 2;
  // 400 Gb/s uplinks carry the incast and the victim without congestion of their own.
  const Topology topology = two_leaves(per_leaf, BitRate::gbps(100), BitRate::gbps(400), 1);
  const Routing routing(topology);
  PacketNetworkConfig config = lossless_config();
  if (!pfc) config.switches.pfc.lossless.reset();
  config.transport.ack_timeout = qp_ack_timeout(10);  // 4.2 ms
  testing::MemoryBackend output;
  PacketNetwork network(sim, routing, config, 1, output);
  if (as_large_fabric) PacketNetwork::look_ahead(sim, std::size_t{1} << 40);
  Completions completions;
  for (std::int32_t s = 0; s < senders; ++s) {
    (void)network.send(s, per_leaf, Bytes(2'000'000), 0, completions);
  }
  if (victim) (void)network.send(senders, per_leaf + 1, Bytes(2'000'000), 0, completions);
  (void)sim.run();
  IncastRun run;
  run.completed = static_cast<std::int64_t>(completions.done.size());
  run.pauses = network.pause_frames_sent();
  run.drops = network.data_account().dropped;
  for (const QueuePair& f : network.flows()) run.retransmitted += f.retransmitted_packets;
  for (const auto& [m, t] : completions.done) {
    if (m.source == senders) run.victim = t.acknowledged - t.submitted;
    if (times != nullptr) times->push_back(t);
  }
  // Every resend leaves its sender's port, counted there as the flows count it.
  std::int64_t resent_at_nics = 0;
  for (std::int32_t e = 0; e < topology.endpoint_count(); ++e) {
    for (const ClassCounters& k : network.nic(e).port().counters().classes) {
      resent_at_nics += k.resent_packets;
    }
  }
  CHECK(resent_at_nics == run.retransmitted);
  // Pause frames are pauses, refreshes and resumes; by the end every pause was resumed.
  for (NodeId n = topology.endpoint_count(); n < topology.node_count(); ++n) {
    Switch& s = network.switch_node(n);
    for (std::size_t p = 0; p < s.port_count(); ++p) {
      for (const ClassCounters& k : s.port(p).counters().classes) {
        CHECK(k.pauses_sent == k.xoff_sent + k.xoff_refreshed + k.xon_sent);
        CHECK(k.xoff_sent == k.xon_sent);
      }
    }
  }
  // PFC keeps every lossless ingress within XOFF plus headroom: a packet beyond would be a drop.
  check_invariants(network, pfc);
  return run;
}

TEST_CASE("an incast with PFC drops nothing and pauses its senders") {
  const IncastRun run = incast(true, 8, false);
  CHECK(run.completed == 8);
  CHECK(run.drops == 0);
  CHECK(run.pauses > 0);
  CHECK(run.retransmitted == 0);
}

// What the event loop fetches ahead of events never changes what they do: the stages a fabric
// too large for the cache gets (PacketNetwork::look_ahead) run a small one to the same picosecond.
TEST_CASE("a fabric fetched ahead in stages, as a large one is, runs the same") {
  for (const bool pfc : {true, false}) {
    CAPTURE(pfc);
    std::vector<MessageTimes> as_built;
    std::vector<MessageTimes> as_large;
    const IncastRun a = incast(pfc, 8, true, &as_built, false);
    const IncastRun b = incast(pfc, 8, true, &as_large, true);
    REQUIRE(as_built.size() == 9);
    REQUIRE(as_large.size() == as_built.size());
    for (std::size_t i = 0; i < as_built.size(); ++i) {
      CHECK(as_large[i].first_sent == as_built[i].first_sent);
      CHECK(as_large[i].delivered == as_built[i].delivered);
      CHECK(as_large[i].acknowledged == as_built[i].acknowledged);
    }
    CHECK(b.pauses == a.pauses);
    CHECK(b.drops == a.drops);
    CHECK(b.retransmitted == a.retransmitted);
  }
}

TEST_CASE("the same incast without PFC drops, and go-back-N still delivers every message") {
  const IncastRun run = incast(false, 8, false);
  CHECK(run.completed == 8);
  CHECK(run.drops > 0);
  CHECK(run.retransmitted > 0);
  CHECK(run.pauses == 0);
}

// Alone, the victim's 2 MB take about 2e6 x 8 / 94.16 Gb/s = 170 us. With PFC, the receiver's leaf
// pauses the spine's port towards it for every packet of the class, so the victim, which only
// crosses that port, waits whenever the incast has filled the leaf (head-of-line blocking). Without
// PFC only the incast suffers.
TEST_CASE("a victim flow is slowed by head-of-line blocking with PFC and not without it") {
  const IncastRun with_pfc = incast(true, 3, true);
  const IncastRun without_pfc = incast(false, 3, true);
  CHECK(with_pfc.completed == 4);
  CHECK(without_pfc.completed == 4);
  const Duration alone = Duration::us(180);
  CHECK(without_pfc.victim < alone);
  // Measured: 239 us with PFC against 178 us without (+34%); the bound leaves room for model
  // changes but not for the effect to vanish.
  CHECK(with_pfc.victim.ps() > without_pfc.victim.ps() * 6 / 5);
  CHECK(with_pfc.pauses > 0);
}

struct StormSwitch {
  Nic& nic;
  void stop() { nic.stop_pause_storm(); }
};

// A receiver whose NIC keeps pausing its switch (a stuck receive pipeline) stops everything sent
// its way; the switch's buffer for that traffic fills, so the switch pauses its own upstream, and
// the pause spreads back to the sender (Guo et al., SIGCOMM'16, section 4.3). When the storm stops,
// the transfer completes without a drop.
TEST_CASE("a pause storm from one NIC spreads upstream to the sender and nothing is lost") {
  ChainNetwork chain_network;
  Simulator& sim = chain_network.sim;
  PacketNetwork& network = chain_network.network;
  Completions completions;
  network.nic(1).start_pause_storm(3);
  StormSwitch storm{network.nic(1)};
  sim.schedule<&StormSwitch::stop>(Time::zero() + Duration::ms(2), &storm);
  (void)network.send(0, 1, Bytes(40'000'000), 0, completions);
  (void)sim.run();
  REQUIRE(completions.done.size() == 1);
  CHECK(completions.done[0].second.delivered > Time::zero() + Duration::ms(2));
  const NodeId sw0 = 2;
  const NodeId sw1 = 3;
  // sw1 paused sw0 (its port 0 faces sw0), and sw0 paused host 0 (its port 0 faces host 0).
  CHECK(network.switch_node(sw1).port(0).counters().classes[3].pauses_sent > 0);
  CHECK(network.switch_node(sw0).port(0).counters().classes[3].pauses_sent > 0);
  CHECK(network.nic(0).port().paused_time(3) > Duration::us(100));
  check_invariants(network, true);
}

// A sender whose host path carries 25 Gb/s (a NIC reached through host memory) paces its packets
// to it: 1,000 packets of 1062 B start 339.84 ns apart, so the last one starts at 999 x 339.84 ns
// and arrives after three serializations at 100 Gb/s (its own and two switches') and three hops of
// 1 us.
TEST_CASE("a NIC whose host path is slower than its port sends at the host path's rate") {
  ChainNetwork chain_network;
  chain_network.network.limit_endpoint(0, BitRate::gbps(25));
  Completions completions;
  (void)chain_network.network.send(0, 1, Bytes(1'000'000), 0, completions);
  (void)chain_network.sim.run();
  REQUIRE(completions.done.size() == 1);
  CHECK(completions.done[0].second.delivered.ps() == 999 * 339'840 + 3 * 84'960 + 3 * 1'000'000);
  check_invariants(chain_network.network, true);
}

// The receiver's host takes 50 Gb/s while its link brings 100: its NIC buffer fills, and it pauses
// its switch until the backlog halves, again and again, so the transfer runs at the host's rate
// (10 MB in 10'620'000 x 8 / 50 Gb/s = 1.70 ms of wire bytes) with nothing lost: the switch next to
// it queues what the NIC cannot take, and pauses the one before it in turn once that ingress
// passes its threshold. A storm the NIC runs on another class at the same time leaves the data
// class's pausing alone.
TEST_CASE("a NIC whose host drains slower than its link pauses its switch and loses nothing") {
  ChainNetwork chain_network;
  PacketNetwork& network = chain_network.network;
  network.limit_endpoint(1, BitRate::gbps(50));
  network.nic(1).start_pause_storm(5);
  Completions completions;
  (void)network.send(0, 1, Bytes(10'000'000), 0, completions);
  StormSwitch storm{network.nic(1)};
  chain_network.sim.schedule<&StormSwitch::stop>(Time::zero() + Duration::ms(3), &storm);
  (void)chain_network.sim.run();
  REQUIRE(completions.done.size() == 1);
  const double seconds = completions.done[0].second.delivered.seconds();
  CHECK(seconds == doctest::Approx(10'620'000 * 8 / 50e9).epsilon(0.01));
  CHECK(network.nic(1).port().counters().classes[3].pauses_sent > 2);
  CHECK(network.nic(1).port().counters().classes[5].pauses_sent > 0);
  CHECK(network.nic(1).data_payload_held() == 0);
  const NodeId sw1 = 3;  // port 0 faces sw0, port 1 host 1
  CHECK(network.switch_node(sw1).port(1).counters().classes[3].max_queue_bytes > 100'000);
  CHECK(network.switch_node(sw1).port(0).counters().classes[3].pauses_sent > 0);
  check_invariants(network, true);
}

// Without PFC the NIC's buffer overflows instead: data is dropped there, and go-back-N resends it
// until every byte is in.
TEST_CASE("on a lossy class a slow host's NIC drops, and go-back-N still delivers") {
  Simulator sim;
  const Topology topology = chain();
  const Routing routing(topology);
  PacketNetworkConfig config = lossless_config();
  config.switches.pfc.lossless.reset();
  config.transport.ack_timeout = qp_ack_timeout(10);  // 4.2 ms
  testing::MemoryBackend output;
  PacketNetwork network(sim, routing, config, 1, output);
  network.limit_endpoint(1, BitRate::gbps(50));
  Completions completions;
  (void)network.send(0, 1, Bytes(10'000'000), 0, completions);
  (void)sim.run();
  REQUIRE(completions.done.size() == 1);
  CHECK(network.nic(1).data_payload_dropped() > 0);
  CHECK(network.pause_frames_sent() == 0);
  CHECK(network.nic(1).data_payload_received() >= 10'000'000);
  check_invariants(network, false);
}

}  // namespace
}  // namespace lockstep
