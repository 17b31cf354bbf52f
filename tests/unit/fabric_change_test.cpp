// The fabric changing during a run at packet level, against the flow level for the same event: a
// cable pulled under a transfer (lost packets recovered, the transfer finishing on the other
// path), a link degraded to a quarter of its rate, and a cable restored.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "completions.hpp"
#include "memory_backend.hpp"
#include "models/cc/dcqcn_params.hpp"
#include "models/transport/flow_network.hpp"
#include "models/transport/link_events.hpp"
#include "models/transport/packet_network.hpp"
#include "small_topologies.hpp"

namespace lockstep {
namespace {

using testing::kDelay;
using testing::kRate;

// Hosts 0 and 1 on leaf0 (node 4), 2 and 3 on leaf1 (node 5), each leaf wired to spine0 (node 6)
// and spine1 (node 7): two equal paths between the leaves. Cables 4-7 are the uplinks.
Topology two_spines() {
  const Bytes buffer(32'000'000);
  return build_explicit(
      4, {{"leaf0", buffer}, {"leaf1", buffer}, {"spine0", buffer}, {"spine1", buffer}},
      {{0, 4, kRate, kDelay},
       {1, 4, kRate, kDelay},
       {2, 5, kRate, kDelay},
       {3, 5, kRate, kDelay},
       {4, 6, kRate, kDelay},
       {4, 7, kRate, kDelay},
       {5, 6, kRate, kDelay},
       {5, 7, kRate, kDelay}});
}

PacketNetworkConfig lossless_dcqcn() {
  PacketNetworkConfig config;
  config.switches.pfc.lossless.set(3);
  config.transport.dcqcn = DcqcnParams::hpcc_reference(kRate);
  return config;
}

// A switch of `hosts` hosts at either level, lossless on the data class: the network and its
// control.
struct EitherLevel {
  EitherLevel(std::int32_t hosts, bool packet_level) : topology(testing::star(hosts)) {
    packet_config.switches.pfc.lossless.set(3);
    if (packet_level) {
      packets = std::make_unique<PacketNetwork>(sim, routing, packet_config, 1, output);
      network = packets.get();
      control = packets.get();
    } else {
      flows = std::make_unique<FlowNetwork>(sim, routing, FlowNetworkConfig{}, 1, output);
      network = flows.get();
      control = flows.get();
    }
  }
  Simulator sim;
  Topology topology;
  Routing routing{topology};
  testing::MemoryBackend output;
  PacketNetworkConfig packet_config;  // the packet network keeps a reference
  std::unique_ptr<PacketNetwork> packets;
  std::unique_ptr<FlowNetwork> flows;
  Network* network = nullptr;
  FabricControl* control = nullptr;
};

// The uplink of leaf0 (cable 4 or 5) that the flow-level path from host 0 to host 2 crosses.
CableId uplink_of(const std::vector<Hop>& hops) {
  for (const Hop& hop : hops) {
    if (hop.cable == 4 || hop.cable == 5) return hop.cable;
  }
  FAIL("the path crosses no uplink of leaf0");
  return 0;
}

struct Run {
  Time delivered;
  CableId pulled = 0;
};

const Bytes kTransfer(20'000'000);
const Time kPull = Time::zero() + Duration::us(500);

Run flow_level_pull() {
  Simulator sim;
  const Topology topology = two_spines();
  const Routing routing(topology);
  testing::MemoryBackend output;
  FlowNetwork network(sim, routing, FlowNetworkConfig{}, 1, output);
  testing::Completions done;
  network.send(0, 2, kTransfer, 0, done);
  const CableId pulled = uplink_of(network.path(0, 2, 0));
  LinkEventPlayer events(sim, network, {LinkEvent{kPull, pulled, std::nullopt, true, false}});
  events.start();
  (void)sim.run();
  REQUIRE(done.done.size() == 1);
  CHECK(uplink_of(network.path(0, 2, 0)) != pulled);
  return {done.done[0].second.delivered, pulled};
}

// 20 MB from host 0 to host 2 at 100 Gb/s take some 1.7 ms; 500 us in, the leaf0 uplink the
// transfer crosses is pulled. At flow level the transfer moves to the other spine at once and
// loses nothing. At packet level what was on the cable and queued for it is lost; the packets
// after them take the other spine, the receiver sees the gap and NACKs, and go-back-N resends
// from it: the transfer ends later by about a round trip and the resent window, well within 5% of
// the flow level's time, every byte sent is delivered or counted lost, and PFC never dropped.
TEST_CASE(
    "a cable pulled mid-transfer under PFC and DCQCN: resent on the other path, as flow level") {
  const Run flow = flow_level_pull();

  Simulator sim;
  const Topology topology = two_spines();
  const Routing routing(topology);
  testing::MemoryBackend output;
  const PacketNetworkConfig config = lossless_dcqcn();
  PacketNetwork network(sim, routing, config, 1, output);
  testing::Completions done;
  network.send(0, 2, kTransfer, 0, done);
  LinkEventPlayer events(sim, network, {LinkEvent{kPull, flow.pulled, std::nullopt, true, false}});
  events.start();
  (void)sim.run();
  REQUIRE(done.done.size() == 1);
  const QueuePair& transfer = network.flows()[0];
  CHECK(network.packets_lost_to_failures() > 0);
  CHECK(transfer.retransmitted_packets >= network.packets_lost_to_failures());
  const double packet_ps = static_cast<double>((done.done[0].second.delivered - Time::zero()).ps());
  const double flow_ps = static_cast<double>((flow.delivered - Time::zero()).ps());
  CHECK(packet_ps == doctest::Approx(flow_ps).epsilon(0.05));
  CHECK(packet_ps > flow_ps);  // the recovery costs something
  MESSAGE("delivered at " << packet_ps * 1e-6 << " us (flow level " << flow_ps * 1e-6 << " us), "
                          << network.packets_lost_to_failures() << " packets lost, "
                          << transfer.retransmitted_packets << " resent");
  const DataAccount bytes = network.data_account();
  CHECK(bytes.in_fabric == 0);
  CHECK(bytes.injected == bytes.delivered + bytes.dropped);
  CHECK(bytes.delivered >= kTransfer.count());
  CHECK(network.lossless_drops() == 0);
  CHECK(network.messages_in_flight() == 0);
}

// Hosts 0 -> 1 and 2 -> 3 on one switch, on disjoint ports. At 200 us host 0's cable drops to
// 25 Gb/s: from then on its transfer moves at a quarter of the rate (its frames' share of the
// wire is the same), so what was left takes four times as long; the other transfer is not touched
// at all, to the picosecond, at either level.
TEST_CASE("a link degraded to a quarter rate mid-run slows exactly the flows crossing it") {
  const Bytes size(10'000'000);
  const Time degrade = Time::zero() + Duration::us(200);
  auto run = [&](bool packet_level, bool degraded) {
    EitherLevel fabric(4, packet_level);
    testing::Completions done;
    fabric.network->send(0, 1, size, 0, done);
    fabric.network->send(2, 3, size, 0, done);
    std::vector<LinkEvent> changes;
    if (degraded) changes.push_back(LinkEvent{degrade, 0, BitRate::gbps(25), false, false});
    LinkEventPlayer events(fabric.sim, *fabric.control, changes);
    events.start();
    (void)fabric.sim.run();
    REQUIRE(done.done.size() == 2);
    std::vector<Time> delivered(2);
    for (const auto& [message, times] : done.done) {
      delivered[message.source == 0 ? 0 : 1] = times.delivered;
    }
    return delivered;
  };
  for (const bool packet_level : {false, true}) {
    CAPTURE(packet_level);
    const std::vector<Time> healthy = run(packet_level, false);
    const std::vector<Time> degraded = run(packet_level, true);
    CHECK(degraded[1] == healthy[1]);
    // Before the change a quarter... after it four times as long for what remained.
    const double before = static_cast<double>((degrade - Time::zero()).ps());
    const double healthy_ps = static_cast<double>((healthy[0] - Time::zero()).ps());
    const double expected = before + (healthy_ps - before) * 4;
    CHECK(static_cast<double>((degraded[0] - Time::zero()).ps()) ==
          doctest::Approx(expected).epsilon(0.01));
  }
}

// A pulled cable comes back: new queue pairs may use it again, and a queue pair that had no path
// (host 0's own cable was pulled) resumes once it is restored and delivers everything.
TEST_CASE("a restored cable carries traffic again and a stalled transfer resumes") {
  Simulator sim;
  const Topology topology = testing::star(2);
  const Routing routing(topology);
  testing::MemoryBackend output;
  PacketNetworkConfig config;
  config.switches.pfc.lossless.set(3);
  PacketNetwork network(sim, routing, config, 1, output);
  testing::Completions done;
  network.send(0, 1, Bytes(2'000'000), 0, done);
  const Time pull = Time::zero() + Duration::us(50);
  const Time back = Time::zero() + Duration::us(300);
  LinkEventPlayer events(sim, network,
                         {LinkEvent{pull, 0, std::nullopt, true, false},
                          LinkEvent{back, 0, std::nullopt, false, true}});
  events.start();
  (void)sim.run();
  REQUIRE(done.done.size() == 1);
  CHECK(done.done[0].second.delivered > back);
  CHECK(network.packets_lost_to_failures() > 0);
  const DataAccount bytes = network.data_account();
  CHECK(bytes.in_fabric == 0);
  CHECK(bytes.injected == bytes.delivered + bytes.dropped);
  CHECK(network.lossless_drops() == 0);
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// One transfer, host 0 to host 1 on a switch, on either level; `change` acts on the fabric at
// 200 us and `undo` (may be empty) at 400 us. Returns when its last byte arrived.
Time transfer_with(bool packet_level, const std::function<void(FabricControl&)>& change,
                   const std::function<void(FabricControl&)>& undo) {
  EitherLevel fabric(2, packet_level);
  Simulator& sim = fabric.sim;
  testing::Completions done;
  fabric.network->send(0, 1, Bytes(10'000'000), 0, done);
  struct Step {
    std::function<void(FabricControl&)> act;
    FabricControl* control;
    void run() { act(*control); }
  };
  Step first{change, fabric.control};
  Step second{undo, fabric.control};
  sim.schedule<&Step::run>(Time::zero() + Duration::us(200), &first);
  if (undo) sim.schedule<&Step::run>(Time::zero() + Duration::us(400), &second);
  (void)sim.run();
  REQUIRE(done.done.size() == 1);
  if (fabric.packets) {
    CHECK(fabric.packets->lossless_drops() == 0);
    const DataAccount bytes = fabric.packets->data_account();
    CHECK(bytes.injected == bytes.delivered + bytes.dropped);
  }
  return done.done[0].second.delivered;
}

// 10 MB take some 850 us at 100 Gb/s. From 200 us on, host 0's host path carries 25 Gb/s: what was
// left takes four times as long, at either level.
TEST_CASE("a host path slowed mid-transfer slows the transfer at both levels") {
  for (const bool packet_level : {false, true}) {
    CAPTURE(packet_level);
    const double healthy = static_cast<double>(
        (transfer_with(packet_level, [](FabricControl&) {}, {}) - Time::zero()).ps());
    const double slowed = static_cast<double>(
        (transfer_with(packet_level,
                       [](FabricControl& c) { c.set_host_path_rate(0, BitRate::gbps(25)); }, {}) -
         Time::zero())
            .ps());
    const double before = 200e6;
    CHECK(slowed == doctest::Approx(before + (healthy - before) * 4).epsilon(0.01));
  }
}

// Host 1's NIC storms its switch from 200 us to 400 us: nothing reaches it meanwhile, so the
// transfer ends about 200 us later, the same at both levels (at packet level the pause holds the
// switch's port, whose buffer and PFC back-pressure hold the sender; nothing is dropped).
TEST_CASE("a pause storm from the receiver's NIC holds a transfer for the storm's length") {
  for (const bool packet_level : {false, true}) {
    CAPTURE(packet_level);
    const double healthy = static_cast<double>(
        (transfer_with(packet_level, [](FabricControl&) {}, {}) - Time::zero()).ps());
    const double stormed =
        static_cast<double>((transfer_with(
                                 packet_level, [](FabricControl& c) { c.start_pause_storm(1); },
                                 [](FabricControl& c) { c.stop_pause_storm(1); }) -
                             Time::zero())
                                .ps());
    CHECK(stormed - healthy == doctest::Approx(200e6).epsilon(0.05));
  }
}

}  // namespace
}  // namespace lockstep
