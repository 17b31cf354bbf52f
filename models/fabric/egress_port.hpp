// The transmit side of a port: per-class FIFOs, a serializer at the link rate, and IEEE 802.1Qbb
// per-class pause. Control frames (ACK, NACK, CNP, pause) go first, in their own never-paused
// queue; data classes are served in strict priority, highest class first. A packet's transmission,
// once started, completes even if a pause arrives (802.1Qbb pauses the next frame, not the current
// one). Pause time is counted in quanta of 512 bit times at this port's rate. A packet is handed to
// the link when its serialization starts, to arrive a serialization time plus the propagation delay
// later, and one event per packet marks the end of its serialization, when the owner learns that it
// left and the next one starts. That event never touches the packet that left: what the owner needs
// of it is kept in the port, and the event carries the packet expected next instead, so the event
// loop fetches it ahead (at scale a packet that waited in a queue is a miss to memory). The port
// owns the link it transmits on. At scale a port is cold whenever its next packet comes, so its
// layout is counted in cache lines: the link and the transmission in progress; the rest of what
// every packet touches, with the control queue; then one line per data class, its queue with its
// counters. Bytes and packets sent are derived from what each queue took in, so a departure
// updates no counter line.
#pragma once

#include <array>
#include <cstdint>

#include "models/fabric/link.hpp"
#include "models/fabric/packet.hpp"
#include "models/fabric/port_counters.hpp"
#include "sim/core/bit_rate.hpp"
#include "sim/core/simulator.hpp"

namespace lockstep {

// What the owner of a port learns of a packet whose last bit left: by then the packet is on the
// link, perhaps already arrived and gone (zero delay), so this is a copy taken when it started.
struct Departure {
  std::int32_t size_bytes = 0;
  std::uint16_t ingress_port = 0;
  std::uint8_t traffic_class = 0;
  bool control = false;
};

// Told when a packet has left one of its ports (a switch frees buffer; a NIC refills).
class PortOwner {
 public:
  virtual ~PortOwner() = default;
  virtual void on_departure(const Departure& departure, std::uint16_t port) = 0;
};

class alignas(64) EgressPort {
 public:
  // `delay`: the propagation delay of the link this port transmits on.
  EgressPort(Simulator& sim, BitRate rate, Duration delay, PortOwner& owner, std::uint16_t index);
  EgressPort(const EgressPort&) = delete;
  EgressPort& operator=(const EgressPort&) = delete;

  void enqueue(Packet* packet);

  // A pause frame for `traffic_class` arrived from the peer (quanta 0 resumes at once).
  void apply_pause(int traffic_class, std::uint16_t quanta);

  [[nodiscard]] std::int64_t queue_bytes(int traffic_class) const {
    return data_[static_cast<std::size_t>(traffic_class)].fifo.bytes();
  }
  [[nodiscard]] bool paused(int traffic_class) const {
    return data_[static_cast<std::size_t>(traffic_class)].paused_until > sim_.now();
  }
  // Total time the class has been paused up to now.
  [[nodiscard]] Duration paused_time(int traffic_class) const;
  [[nodiscard]] BitRate rate() const { return rate_; }
  [[nodiscard]] Link& link() { return link_; }
  [[nodiscard]] const Link& link() const { return link_; }
  [[nodiscard]] std::uint16_t index() const { return index_; }
  // The totals so far.
  [[nodiscard]] PortCounters counters() const;
  // Events the owner decides on, counted here per class.
  void count_ecn_mark(int traffic_class) {
    ++rare_[static_cast<std::size_t>(traffic_class)].ecn_marked;
  }
  void count_drop(int traffic_class, std::int64_t bytes);

  // Sends the peer a pause frame of `frame_bytes` for `traffic_class`, taken from `packets`
  // (quanta 0 resumes the class), and counts it.
  void send_pause(PacketPool& packets, int traffic_class, std::uint16_t quanta,
                  std::int32_t frame_bytes);
  // Payload bytes of data packets queued here (conservation checks only; a packet being serialized
  // is already on the link).
  [[nodiscard]] std::int64_t data_payload_held() const;
  // Packet-hops: every packet whose serialization onto the link completed.
  [[nodiscard]] std::int64_t packets_transmitted() const;

 private:
  // A queue and what is counted as packets enter it, in one cache line.
  struct alignas(64) Queue {
    PacketFifo fifo;
    std::int64_t max_bytes = 0;
    Time paused_until;  // data classes: the peer's pause holds the class until then
  };
  // Counted where something unusual happens: a mark, a drop, a pause.
  struct RareCounts {
    std::int64_t ecn_marked = 0;
    std::int64_t dropped_packets = 0;
    std::int64_t dropped_bytes = 0;
    std::int64_t pauses_sent = 0;
    std::int64_t pauses_received = 0;
    Time pause_started;
    Duration paused_before;  // closed pause intervals
  };
  static constexpr std::uint32_t kControlBit = 1U << kTrafficClasses;

  void start_next();
  // `expected_next` is only fetched ahead by the event loop: the head of the queue served last.
  void finish_transmission(const Packet* expected_next);
  void on_pause_expired(std::uint64_t traffic_class);
  [[nodiscard]] Packet* next_packet();
  // What is sent counts as what a queue took in less what it still holds and what is leaving it.
  [[nodiscard]] bool leaving(const PacketFifo& fifo) const;

  // First cache line: the link and the transmission in progress.
  Link link_;
  Departure in_transmission_;
  std::uint16_t index_;
  bool transmitting_ = false;
  std::uint32_t nonempty_ = 0;  // bit c set when data_[c] holds packets; kControlBit for control_
  // Second: the rest of what every packet touches, and the control queue.
  Simulator& sim_;
  BitRate rate_;
  PortOwner& owner_;
  PacketFifo control_;
  // Then one line per data class.
  std::array<Queue, kTrafficClasses> data_;
  std::array<RareCounts, kTrafficClasses> rare_;
};

}  // namespace lockstep
