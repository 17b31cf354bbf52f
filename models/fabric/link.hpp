// One direction of a cable: packets that finished serialization at the sending port propagate for a
// fixed delay and arrive in order. The in-flight packets wait in a FIFO and only the head has an
// event pending (htsim's trick), so the event set grows with links, not with packets in flight.
// Store and forward: a packet is handed on only once its last bit has arrived.
#pragma once

#include <cstdint>

#include "models/fabric/packet.hpp"
#include "sim/core/simulator.hpp"

namespace lockstep {

// A node that packets arrive at: a switch or an endpoint's NIC.
class PacketReceiver {
 public:
  virtual ~PacketReceiver() = default;
  virtual void receive(Packet* packet, std::uint16_t ingress_port) = 0;
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
  }

  // The last bit of `packet` left the sender now.
  void carry(Packet* packet) {
    packet->arrives_at = sim_.now() + delay_;
    const bool idle = in_flight_.empty();
    in_flight_.push(packet);
    if (idle) sim_.schedule<&Link::arrive>(packet->arrives_at, this);
  }

  // Data bytes propagating on this link now (for conservation checks, not the event loop).
  [[nodiscard]] std::int64_t data_bytes_in_flight() const;

 private:
  void arrive() {
    Packet* packet = in_flight_.pop();
    if (!in_flight_.empty()) sim_.schedule<&Link::arrive>(in_flight_.front()->arrives_at, this);
    receiver_->receive(packet, receiver_port_);
  }

  Simulator& sim_;
  Duration delay_;
  PacketReceiver* receiver_ = nullptr;
  std::uint16_t receiver_port_ = 0;
  PacketFifo in_flight_;
};

inline std::int64_t Link::data_bytes_in_flight() const {
  std::int64_t bytes = 0;
  for (const Packet* p = in_flight_.front(); p != nullptr; p = p->next) {
    if (p->kind == PacketKind::kData) bytes += p->payload_bytes;
  }
  return bytes;
}

}  // namespace lockstep
