// One egress port against a fake owner and a fake far end, at 100 Gb/s with a 1 us cable, where a
// 1,000 B frame takes 80 ns to serialize: when the owner hears of a departure, when packets arrive,
// and how many events that costs.
#include <doctest/doctest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "models/fabric/egress_port.hpp"

namespace lockstep {
namespace {

using Seen = std::vector<std::pair<std::int64_t, std::int32_t>>;  // (time ps, frame bytes)

struct Owner final : PortOwner {
  Simulator& sim;
  Seen told;
  explicit Owner(Simulator& s) : sim(s) {}
  void on_departure(const Departure& departure, std::uint16_t /*port*/) override {
    told.emplace_back(sim.now().ps(), departure.size_bytes);
  }
};

struct FarEnd final : PacketReceiver {
  Simulator& sim;
  Seen arrived;
  std::vector<PacketKind> kinds;
  explicit FarEnd(Simulator& s) : sim(s) {}
  void receive(Packet* packet, std::uint16_t /*ingress_port*/) override {
    arrived.emplace_back(sim.now().ps(), packet->size_bytes);
    kinds.push_back(packet->kind);
  }
};

Packet frame(PacketKind kind, std::int32_t bytes) {
  Packet p;
  p.kind = kind;
  p.priority = 3;
  p.size_bytes = bytes;
  return p;
}

struct Sender {
  EgressPort& port;
  Packet* later = nullptr;
  void enqueue_later() { port.enqueue(later); }
};

constexpr std::int64_t kNs = 1'000;
constexpr std::int64_t kCable = 1'000 * kNs;

// One port, its owner and its far end, on a 100 Gb/s cable 1 us long.
struct OnePort {
  explicit OnePort(DepartureNotice notice)
      : port(sim, BitRate::gbps(100), Duration::us(1), owner, notice, 0) {
    port.link().connect(far_end, 0);
  }
  Simulator sim;
  Owner owner{sim};
  FarEnd far_end{sim};
  EgressPort port;
};

TEST_CASE("a switch port hears of data leaving as it starts, and has an event only for a waiter") {
  OnePort wire(DepartureNotice::kAtDequeue);
  auto& [sim, owner, far_end, port] = wire;
  Packet a = frame(PacketKind::kData, 1'000);
  Packet b = frame(PacketKind::kData, 1'000);
  Packet c = frame(PacketKind::kData, 1'000);
  Packet ack = frame(PacketKind::kAck, 1'000);
  // a starts at once and b waits for it; c comes the picosecond b's last bit leaves and finds the
  // wire free; an ACK passes 1 ms later, unheard of.
  port.enqueue(&a);
  port.enqueue(&b);
  Sender sender{port, &c};
  sim.schedule<&Sender::enqueue_later>(Time::from_ps(160 * kNs), &sender);
  Sender acker{port, &ack};
  sim.schedule<&Sender::enqueue_later>(Time::from_ps(1'000'000 * kNs), &acker);
  CHECK(sim.run() == RunOutcome::kDrained);
  CHECK(owner.told == Seen{{0, 1'000}, {80 * kNs, 1'000}, {160 * kNs, 1'000}});
  CHECK(far_end.arrived == Seen{{80 * kNs + kCable, 1'000},
                                {160 * kNs + kCable, 1'000},
                                {240 * kNs + kCable, 1'000},
                                {1'000'080 * kNs + kCable, 1'000}});
  // The senders' two events, four arrivals, and one end of serialization: the one b waited for.
  CHECK(sim.events_processed() == 7);
  CHECK(port.packets_transmitted() == 4);
}

TEST_CASE("a NIC port hears of a data packet as its last bit leaves, and never of control") {
  OnePort wire(DepartureNotice::kAtLastBit);
  auto& [sim, owner, far_end, port] = wire;
  Packet a = frame(PacketKind::kData, 1'000);
  Packet ack = frame(PacketKind::kAck, 1'000);
  Packet b = frame(PacketKind::kData, 500);
  Packet lone_ack = frame(PacketKind::kAck, 1'000);
  // a starts at once; the ACK, queued after b, still goes before it; 1 ms later an ACK alone.
  port.enqueue(&a);
  port.enqueue(&b);
  port.enqueue(&ack);
  Sender sender{port, &lone_ack};
  sim.schedule<&Sender::enqueue_later>(Time::from_ps(1'000'000 * kNs), &sender);
  CHECK(sim.run() == RunOutcome::kDrained);
  CHECK(owner.told == Seen{{80 * kNs, 1'000}, {200 * kNs, 500}});
  CHECK(far_end.arrived == Seen{{80 * kNs + kCable, 1'000},
                                {160 * kNs + kCable, 1'000},
                                {200 * kNs + kCable, 500},
                                {1'000'080 * kNs + kCable, 1'000}});
  // Four arrivals, the sender's event, and ends of serialization at 80, 160 and 200 ns: none for
  // the lone ACK, whose departure no one needs to hear of.
  CHECK(sim.events_processed() == 8);
}

TEST_CASE(
    "a control frame landing with a data packet reaches the port first, whichever left first") {
  Simulator sim;
  Owner owner(sim);
  FarEnd far_end(sim);
  EgressPort data_side(sim, BitRate::gbps(100), Duration::us(1), owner, DepartureNotice::kAtDequeue,
                       0);
  EgressPort control_side(sim, BitRate::gbps(100), Duration::us(1), owner,
                          DepartureNotice::kAtDequeue, 1);
  data_side.link().connect(far_end, 0);
  control_side.link().connect(far_end, 1);
  // Both 80 ns on the wire, both sent at 0: they land at the same picosecond.
  Packet data = frame(PacketKind::kData, 1'000);
  Packet ack = frame(PacketKind::kAck, 1'000);
  data_side.enqueue(&data);
  control_side.enqueue(&ack);
  CHECK(sim.run() == RunOutcome::kDrained);
  CHECK(far_end.arrived == Seen{{80 * kNs + kCable, 1'000}, {80 * kNs + kCable, 1'000}});
  CHECK(far_end.kinds == std::vector<PacketKind>{PacketKind::kAck, PacketKind::kData});
}

}  // namespace
}  // namespace lockstep
