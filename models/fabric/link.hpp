// One direction of a cable: a packet is put on it when its serialization starts at the sending
// port and arrives whole (store and forward) a serialization time plus a fixed delay later, in
// order. Each packet's arrival is an event of its own, scheduled as it is put on the link, which
// carries the packet: putting a packet on the link touches only that packet, and an arrival only
// the packet arriving (which the event loop prefetches). Chaining the packets in flight so that
// only the first has an event pending (htsim's trick) keeps the event set smaller, but writes the
// line of the packet sent before, which at thousands of hosts has long left the cache: Perm-8192
// ran 4-8% slower so, Incast-128 3% more instructions. The link only counts what is on it. A
// control frame is handled ahead of data that lands at the same picosecond (Phase::kAhead), so
// where they meet they are served by priority even at a tie.
#pragma once

#include <cstddef>
#include <cstdint>

#include "models/fabric/packet.hpp"
#include "sim/core/simulator.hpp"

namespace lockstep {

// A node that packets arrive at: a switch or an endpoint's NIC.
class PacketReceiver {
 public:
  virtual ~PacketReceiver() = default;
  virtual void receive(Packet* packet, std::uint16_t ingress_port) = 0;
  // `packet` will arrive soon: fetch what receiving it will touch.
  virtual void prefetch_for(const Packet& /*packet*/, std::uint16_t /*ingress_port*/) const {}
  // How many cache lines from its start prefetch_for() and receive() read first: fetched before
  // prefetch_for() is called, which could otherwise wait on them (at scale the receiver is cold).
  [[nodiscard]] virtual std::uint8_t hot_lines() const { return 1; }
  // Fetches `lines` cache lines from `start`.
  static void prefetch_lines(const void* start, std::uint8_t lines) {
    const auto* bytes = static_cast<const char*>(start);
    for (std::uint8_t line = 0; line < lines; ++line) {
      __builtin_prefetch(bytes + std::ptrdiff_t{64} * line);
    }
  }
};

class Link {
 public:
  Link(Simulator& sim, Duration delay) : sim_(sim), delay_(delay) {}
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // Where the far end is; set once the node there exists.
  void connect(PacketReceiver& receiver, std::uint16_t receiver_port) {
    receiver_ = &receiver;
    receiver_port_ = receiver_port;
    receiver_hot_lines_ = receiver.hot_lines();
  }

  [[nodiscard]] Simulator& simulator() const { return sim_; }

  // The event loop's looks at an arrival a few events ahead (Simulator::look_ahead_for): the link
  // and its packet are in cache by the first, which has the receiver fetch what it will touch for
  // the packet. When the receivers are cold too (a fabric larger than the cache), the first look
  // fetches the receiver and a later one has it fetch the rest.
  static void look_ahead_for_arrivals(Simulator& sim, bool receivers_cold) {
    if (receivers_cold) {
      sim.look_ahead_for<&Link::arrive>(&Link::fetch_receiver, &Link::fetch_for_packet);
    } else {
      sim.look_ahead_for<&Link::arrive>(&Link::fetch_for_packet);
    }
  }
  [[nodiscard]] PacketReceiver* receiver() const { return receiver_; }
  [[nodiscard]] std::uint16_t receiver_port() const { return receiver_port_; }
  // Packets on the link now, the one being serialized onto it included.
  [[nodiscard]] std::int64_t packets_in_flight() const { return packets_in_flight_; }
  // Data bytes being serialized onto or propagating on this link now.
  [[nodiscard]] std::int64_t data_bytes_in_flight() const { return data_bytes_in_flight_; }

  // The first bit of `packet` leaves the sender now and its last after `serialization`.
  void carry(Packet* packet, Duration serialization) {
    const bool control = is_control(packet->kind);
    ++packets_in_flight_;
    if (!control) data_bytes_in_flight_ += packet->payload_bytes;
    sim_.schedule_in_phase<&Link::arrive>(sim_.now() + serialization + delay_,
                                          control ? Phase::kAhead : Phase::kNormal, this, packet);
  }

 private:
  static void fetch_receiver(void* link, std::uint64_t /*packet*/) {
    const auto* self = static_cast<const Link*>(link);
    PacketReceiver::prefetch_lines(self->receiver_, self->receiver_hot_lines_);
  }
  static void fetch_for_packet(void* link, std::uint64_t packet) {
    const auto* self = static_cast<const Link*>(link);
    self->receiver_->prefetch_for(*reinterpret_cast<const Packet*>(packet), self->receiver_port_);
  }

  void arrive(Packet* packet) {
    --packets_in_flight_;
    if (!is_control(packet->kind)) data_bytes_in_flight_ -= packet->payload_bytes;
    receiver_->receive(packet, receiver_port_);
  }

  Simulator& sim_;
  Duration delay_;
  PacketReceiver* receiver_ = nullptr;
  std::uint16_t receiver_port_ = 0;
  std::uint8_t receiver_hot_lines_ = 0;
  std::int32_t packets_in_flight_ = 0;
  std::int64_t data_bytes_in_flight_ = 0;
};

}  // namespace lockstep
