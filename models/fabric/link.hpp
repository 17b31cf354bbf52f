// One direction of a cable: a packet is put on it when its serialization starts at the sending
// port and arrives whole (store and forward) a serialization time plus a fixed delay later, in
// order. The in-flight packets wait in a FIFO and only the head has an event pending (htsim's
// trick), so the event set grows with links, not with packets in flight. The FIFO is chained
// through the packets, each holding the arrival time of the one behind it, and the pending event
// carries its packet: an arrival touches only the packet arriving (which the event loop
// prefetches) and never one sent later, which at scale would be a cache miss per hop. A control
// frame is handled ahead of data that lands at the same picosecond (Phase::kAhead), so where they
// meet they are served by priority even at a tie.
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
  [[nodiscard]] std::int64_t packets_in_flight() const {
    std::int64_t packets = 0;
    for (const Packet* p = head_; p != nullptr; p = p->next) ++packets;
    return packets;
  }

  // The first bit of `packet` leaves the sender now and its last after `serialization`.
  void carry(Packet* packet, Duration serialization) {
    const Time arrives_at = sim_.now() + serialization + delay_;
    const bool control = is_control(packet->kind);
    packet->next = nullptr;
    if (tail_ == nullptr) {
      head_ = packet;
      schedule_arrival(arrives_at, control, packet);
    } else {
      tail_->next = packet;
      tail_->next_arrives_at = arrives_at;
      tail_->next_is_control = control;
    }
    tail_ = packet;
  }

  // Data bytes being serialized onto or propagating on this link now (for conservation checks,
  // not the event loop).
  [[nodiscard]] std::int64_t data_bytes_in_flight() const;

 private:
  void schedule_arrival(Time at, bool control, Packet* packet) {
    sim_.schedule_in_phase<&Link::arrive>(at, control ? Phase::kAhead : Phase::kNormal, this,
                                          packet);
  }

  static void fetch_receiver(void* link, std::uint64_t /*packet*/) {
    const auto* self = static_cast<const Link*>(link);
    PacketReceiver::prefetch_lines(self->receiver_, self->receiver_hot_lines_);
  }
  static void fetch_for_packet(void* link, std::uint64_t packet) {
    const auto* self = static_cast<const Link*>(link);
    self->receiver_->prefetch_for(*reinterpret_cast<const Packet*>(packet), self->receiver_port_);
  }

  void arrive(Packet* packet) {
    head_ = packet->next;
    if (head_ != nullptr) {
      schedule_arrival(packet->next_arrives_at, packet->next_is_control, head_);
    } else {
      tail_ = nullptr;
    }
    packet->next = nullptr;
    receiver_->receive(packet, receiver_port_);
  }

  Simulator& sim_;
  Duration delay_;
  PacketReceiver* receiver_ = nullptr;
  std::uint16_t receiver_port_ = 0;
  std::uint8_t receiver_hot_lines_ = 0;
  Packet* head_ = nullptr;
  Packet* tail_ = nullptr;
};

inline std::int64_t Link::data_bytes_in_flight() const {
  std::int64_t bytes = 0;
  for (const Packet* p = head_; p != nullptr; p = p->next) {
    if (p->kind == PacketKind::kData) bytes += p->payload_bytes;
  }
  return bytes;
}

}  // namespace lockstep
