// A queue pair's local ACK timeout and retry budget, as an RDMA NIC has them: timeouts only resend
// what was not acknowledged, an acknowledgement that makes progress renews the budget, and a path
// that stays dead fails the queue pair at the time the NIC gives up, reporting every message on it
// (and every one posted later) to its sender.
#include <doctest/doctest.h>

#include "completions.hpp"
#include "memory_backend.hpp"
#include "models/transport/packet_network.hpp"
#include "small_topologies.hpp"

namespace lockstep {
namespace {

using testing::Completions;

constexpr std::int32_t kRetries = 3;

struct DyingChain {
  DyingChain() {
    config.switches.pfc.lossless.set(3);
    config.switches.ecn.enabled = false;
    config.transport.data_class = 3;
    config.transport.ack_timeout = qp_ack_timeout(10);
    config.transport.retry_count = kRetries;
  }

  Simulator sim;
  Topology topology = testing::chain();  // host0 - sw0 - sw1 - host1
  Routing routing{topology};
  PacketNetworkConfig config;
  testing::MemoryBackend output;
  std::unique_ptr<PacketNetwork> network;
};

TEST_CASE("the QP timeout is 4.096 us x 2^timeout, and timeout 0 never fires") {
  CHECK(qp_ack_timeout(1) == Duration::ps(8'192'000));
  CHECK(qp_ack_timeout(10) == Duration::ps(4'194'304'000));
  // NCCL_IB_TIMEOUT=20: about 4.3 s.
  CHECK(qp_ack_timeout(kNcclIbTimeout) == Duration::ps(4'294'967'296'000));
  CHECK_FALSE(qp_ack_timeout(0).has_value());
}

// The cable sw1 - host1 fails once a first message is through. The second message's packets all
// die there: its timer started with its first packet, at t1, and fires every timeout without an
// acknowledgement; the first kRetries firings resend all ten packets, the next fails the queue
// pair:
//   failed = t1 + (kRetries + 1) x 4.096 us x 2^10.
TEST_CASE("a queue pair whose path stays dead fails after its retries, when the NIC gives up") {
  DyingChain chain;
  chain.network =
      std::make_unique<PacketNetwork>(chain.sim, chain.routing, chain.config, 1, chain.output);
  PacketNetwork& network = *chain.network;
  Completions completions;
  (void)network.send(0, 1, Bytes(10'000), 0, completions);
  (void)chain.sim.run();
  REQUIRE(completions.done.size() == 1);

  network.fail_cable(chain.topology.cable_between(3, 1));
  const Time t1 = chain.sim.now();
  const std::uint64_t doomed = network.send(0, 1, Bytes(10'000), 0, completions);
  (void)chain.sim.run();

  const Time expected = t1 + *qp_ack_timeout(10) * (kRetries + 1);
  REQUIRE(completions.failed.size() == 1);
  CHECK(completions.failed[0].first.id == doomed);
  CHECK(completions.failed[0].second == expected);
  CHECK(completions.done.size() == 1);
  const QueuePair& flow = network.flows().front();
  CHECK(flow.failed_at == expected);
  CHECK(flow.timeouts == kRetries + 1);
  CHECK(flow.retransmitted_packets == 10 * kRetries);
  CHECK(flow.retransmitted_bytes == 10'000 * kRetries);
  CHECK(network.messages_in_flight() == 0);

  // A failed queue pair stays failed: what is posted to it fails at once, sending nothing.
  const std::int64_t sent_before = network.nic(0).data_payload_sent();
  const Time t2 = chain.sim.now();
  const std::uint64_t flushed = network.send(0, 1, Bytes(5'000), 0, completions);
  (void)chain.sim.run();
  REQUIRE(completions.failed.size() == 2);
  CHECK(completions.failed[1].first.id == flushed);
  CHECK(completions.failed[1].second == t2);
  CHECK(network.nic(0).data_payload_sent() == sent_before);
  CHECK(network.flows().front().failed_messages == 2);
}

// A queue pair that fails halfway through a large message stops sending at once: at 100 Gb/s a
// 10 MB message takes 850 us to leave, far longer than one 8.192 us timeout with no retry.
TEST_CASE("a queue pair that fails with packets still unsent sends none of them") {
  DyingChain chain;
  chain.config.transport.ack_timeout = qp_ack_timeout(1);
  chain.config.transport.retry_count = 0;
  chain.network =
      std::make_unique<PacketNetwork>(chain.sim, chain.routing, chain.config, 1, chain.output);
  PacketNetwork& network = *chain.network;
  Completions completions;
  (void)network.send(0, 1, Bytes(10'000'000), 0, completions);
  network.fail_cable(chain.topology.cable_between(3, 1));
  (void)chain.sim.run();
  REQUIRE(completions.failed.size() == 1);
  const Time failed = Time::zero() + *qp_ack_timeout(1);
  CHECK(completions.failed[0].second == failed);
  // Packets leave the NIC back to back, 1062 B in 84.96 ns: those started by the failure are all
  // it ever sends.
  const std::int64_t started = failed.ps() / 84'960 + 1;
  CHECK(network.nic(0).data_payload_sent() == started * 1000);
  CHECK(network.flows().front().next_sequence < network.flows().front().end_sequence);
  CHECK(chain.sim.pending() == 0);
}

// The cable comes back before the budget is spent: the next resend gets through, its
// acknowledgement makes progress, and the message completes with the resends it took.
TEST_CASE("a path that comes back within the retries completes the message") {
  DyingChain chain;
  chain.network =
      std::make_unique<PacketNetwork>(chain.sim, chain.routing, chain.config, 1, chain.output);
  PacketNetwork& network = *chain.network;
  const CableId cable = chain.topology.cable_between(3, 1);
  Completions completions;
  (void)network.send(0, 1, Bytes(10'000), 0, completions);
  network.fail_cable(cable);  // at t = 0: every packet of the message dies at sw1
  // Up between the second and third timeouts: two rounds of resends were lost.
  const Duration timeout = *qp_ack_timeout(10);
  (void)chain.sim.run(Time::zero() + Duration::ps(timeout.ps() * 5 / 2));
  network.restore_cable(cable);
  (void)chain.sim.run();
  REQUIRE(completions.done.size() == 1);
  CHECK(completions.failed.empty());
  const QueuePair& flow = network.flows().front();
  CHECK_FALSE(flow.failed_at.has_value());
  CHECK(flow.timeouts == 3);
  CHECK(flow.retransmitted_packets == 30);
  // Sent at the third timeout, it arrives: the message is acknowledged one round trip later.
  CHECK(completions.done[0].second.acknowledged > Time::zero() + timeout * 3);
  CHECK(completions.done[0].second.acknowledged < Time::zero() + timeout * 3 + Duration::us(20));
}

}  // namespace
}  // namespace lockstep
