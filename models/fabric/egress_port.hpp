// The transmit side of a port: per-class FIFOs, a serializer at the link rate, and IEEE 802.1Qbb
// per-class pause. Control frames (ACK, NACK, CNP, pause) go first, in their own never-paused
// queue; data classes are served in strict priority, highest class first. A packet's transmission,
// once started, completes even if a pause arrives (802.1Qbb pauses the next frame, not the current
// one). Pause time is counted in quanta of 512 bit times at this port's rate. One event per packet:
// the end of its serialization, when it is handed to the link and the owner learns it left. The
// port owns the link it transmits on, in the same cache lines as what it touches per packet.
#pragma once

#include <array>
#include <cstdint>

#include "models/fabric/link.hpp"
#include "models/fabric/packet.hpp"
#include "models/fabric/port_counters.hpp"
#include "sim/core/bit_rate.hpp"
#include "sim/core/simulator.hpp"

namespace lockstep {

class EgressPort;

// Told when a packet has left one of its ports (a switch frees buffer; a NIC refills).
class PortOwner {
 public:
  virtual ~PortOwner() = default;
  virtual void on_departure(Packet* packet, std::uint16_t port) = 0;
};

class EgressPort {
 public:
  // `delay`: the propagation delay of the link this port transmits on.
  EgressPort(Simulator& sim, BitRate rate, Duration delay, PortOwner& owner, std::uint16_t index);
  EgressPort(const EgressPort&) = delete;
  EgressPort& operator=(const EgressPort&) = delete;

  void enqueue(Packet* packet);

  // A pause frame for `traffic_class` arrived from the peer (quanta 0 resumes at once).
  void apply_pause(int traffic_class, std::uint16_t quanta);

  [[nodiscard]] std::int64_t queue_bytes(int traffic_class) const {
    return data_[static_cast<std::size_t>(traffic_class)].bytes();
  }
  [[nodiscard]] bool paused(int traffic_class) const {
    return paused_until_[static_cast<std::size_t>(traffic_class)] > sim_.now();
  }
  // Total time the class has been paused up to now.
  [[nodiscard]] Duration paused_time(int traffic_class) const;
  [[nodiscard]] BitRate rate() const { return rate_; }
  [[nodiscard]] Link& link() { return link_; }
  [[nodiscard]] const Link& link() const { return link_; }
  [[nodiscard]] std::uint16_t index() const { return index_; }
  [[nodiscard]] PortCounters& counters() { return counters_; }
  [[nodiscard]] const PortCounters& counters() const { return counters_; }
  // Payload bytes of data packets queued or being serialized here (conservation checks only).
  [[nodiscard]] std::int64_t data_payload_held() const;
  // Packet-hops: every packet whose serialization onto the link completed.
  [[nodiscard]] std::int64_t packets_transmitted() const { return packets_transmitted_; }

 private:
  void start_next();
  void finish_transmission();
  void on_pause_expired(std::uint64_t traffic_class);
  [[nodiscard]] Packet* next_packet();

  // What every packet touches comes first, in as few cache lines as possible: at scale a port is
  // cold when its next packet comes, and each line is a miss.
  Link link_;
  Packet* in_transmission_ = nullptr;
  std::int64_t packets_transmitted_ = 0;
  Simulator& sim_;
  BitRate rate_;
  PortOwner& owner_;
  std::uint32_t nonempty_classes_ = 0;  // bit c set when data_[c] holds packets
  std::uint16_t index_;
  PacketFifo control_;
  std::array<PacketFifo, kTrafficClasses> data_;
  std::array<Time, kTrafficClasses> paused_until_{};
  std::array<Time, kTrafficClasses> pause_started_{};
  std::array<Duration, kTrafficClasses> paused_before_{};  // closed pause intervals
  PortCounters counters_;
};

}  // namespace lockstep
