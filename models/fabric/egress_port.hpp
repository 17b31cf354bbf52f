// The transmit side of a port: per-class FIFOs, a serializer at the link rate, and IEEE 802.1Qbb
// per-class pause. Control frames (ACK, NACK, CNP, pause) go first, in their own never-paused
// queue; data classes are served in strict priority, highest class first. A packet's transmission,
// once started, completes even if a pause arrives (802.1Qbb pauses the next frame, not the current
// one). Pause time is counted in quanta of 512 bit times at this port's rate. A packet is handed to
// the link when its serialization starts, to arrive a serialization time plus the propagation delay
// later. The port owns the link it transmits on.
//
// The owner hears of a departure at one of two moments (DepartureNotice). A switch hears when the
// packet leaves the queue, and frees its buffer then, as the ns-3 HPCC switch that SimAI and
// ASTRA-sim build on does (SwitchNotifyDequeue). Its port then needs no event at the end of a
// serialization unless a packet waits for the wire to free: a packet arriving at an idle port, or
// at one whose last bit is leaving at that very instant, starts at once. That is most hops of
// traffic that is not congested: a quarter to a third of all events in the benchmarks. A NIC hears
// when the last bit of a data packet left, to refill the wire, so its port has the event for every
// data packet; its control frames need none, since no owner hears of them. The event never touches
// the packet that left: what the owner needs of it is kept in the port, and the event carries the
// packet expected next instead, so the event loop fetches it ahead (at scale a packet that waited
// in a queue is a miss to memory).
//
// At scale a port is cold whenever its next packet comes, so its layout is counted in cache lines:
// the link and the transmission in progress; the rest of what every packet touches, with the
// control queue; then one line per data class, its queue with its counters. Bytes and packets sent
// are derived from what each queue took in, so a departure updates no counter line.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>

#include "models/fabric/link.hpp"
#include "models/fabric/packet.hpp"
#include "models/fabric/port_counters.hpp"
#include "sim/core/bit_rate.hpp"
#include "sim/core/simulator.hpp"

namespace lockstep {

// What the owner of a port learns of a packet that left: the packet itself is on the link by then,
// perhaps already arrived and gone (zero delay), so this is a copy taken when it started.
struct Departure {
  std::int32_t size_bytes = 0;
  std::uint16_t ingress_port = 0;
  std::uint8_t traffic_class = 0;
  bool control = false;
};

// When the owner of a port is told that a packet left it.
enum class DepartureNotice : std::uint8_t {
  kAtDequeue,  // as its serialization starts
  kAtLastBit,  // as its serialization ends
};

// Told when a data packet has left one of its ports (a switch frees buffer; a NIC refills). Of
// control frames it hears nothing: they hold no buffer and refill nothing.
class PortOwner {
 public:
  virtual ~PortOwner() = default;
  virtual void on_departure(const Departure& departure, std::uint16_t port) = 0;
  // A data packet starts to leave `port` with more than mark_leaving_above() bytes queued behind
  // it: the owner may mark it congestion-experienced (ECN at dequeue).
  virtual void on_congested_departure(Packet& /*packet*/, std::uint16_t /*port*/,
                                      std::int64_t /*queue_bytes*/) {}
  // A transmission on `port` ends soon and `expected_next` (if any, in cache) should follow it:
  // fetch what hearing of a departure there will touch.
  virtual void prefetch_departure(const Packet* /*expected_next*/, std::uint16_t /*port*/) const {}
  // Later, once what prefetch_departure fetched has landed: one step further through it.
  virtual void prefetch_departure_through(std::uint16_t /*port*/) const {}
};

class alignas(64) EgressPort {
 public:
  // `delay`: the propagation delay of the link this port transmits on.
  EgressPort(Simulator& sim, BitRate rate, Duration delay, PortOwner& owner, DepartureNotice notice,
             std::uint16_t index);
  EgressPort(const EgressPort&) = delete;
  EgressPort& operator=(const EgressPort&) = delete;

  // Queues the packet, or, on a port that is down, hands it to what went_down() was given.
  void enqueue(Packet* packet);

  // The link now runs at `rate` from the next packet on (the one being serialized finishes at the
  // old rate); 0 holds every packet until a rate is set again. A rate of 0 leaves rate() at the
  // last one, which pause quanta are timed by. Throws std::invalid_argument for a negative rate.
  void set_rate(BitRate rate);
  // The link went down: the port loses its queues, whose packets it returns chained through `next`
  // for its owner to release what they hold (data packets counted as drops), and hands every packet
  // sent to it from now on to `lost`, until come_up().
  [[nodiscard]] Packet* went_down(PacketReceiver& lost);
  void come_up();
  // Read on every packet's way through a switch, so kept in the port's first cache line; down() is
  // behind it.
  [[nodiscard]] bool halted() const { return halted_; }
  [[nodiscard]] bool down() const { return lost_ != nullptr; }

  // Fetches what enqueueing a packet of `traffic_class` and starting its transmission will read.
  void prefetch(int traffic_class) const {
    __builtin_prefetch(this);
    __builtin_prefetch(reinterpret_cast<const char*>(this) + 64);
    __builtin_prefetch(&data_[static_cast<std::size_t>(traffic_class)]);
  }

  // The event loop's second look at the end of a transmission a few events ahead
  // (Simulator::look_ahead_for): the port's first line and the packet expected next are in cache
  // by then; the rest of the port and what its owner will touch are fetched.
  static void look_ahead_for_departures(Simulator& sim);

  // From now on the owner hears of every data packet that leaves more than `bytes` behind it in its
  // class's queue (on_congested_departure). Never, unless called.
  void mark_leaving_above(Bytes bytes);

  // A pause frame for `traffic_class` arrived from the peer (quanta 0 resumes at once).
  void apply_pause(int traffic_class, std::uint16_t quanta);

  [[nodiscard]] std::int64_t queue_bytes(int traffic_class) const {
    return data_[static_cast<std::size_t>(traffic_class)].fifo.bytes();
  }
  [[nodiscard]] bool paused(int traffic_class) const {
    return data_[static_cast<std::size_t>(traffic_class)].paused_until > sim().now();
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
  void count_ecn_mark(int traffic_class) { ++rare(traffic_class).ecn_marked; }
  void count_drop(int traffic_class, std::int64_t bytes);
  void count_resend(const Packet& packet);

  // Sends the peer a pause frame of `frame_bytes` for `traffic_class`, taken from `packets`
  // (quanta 0 resumes the class), and counts it as a pause, a refresh of the last one, or a resume.
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
    std::int64_t congested_above = std::numeric_limits<std::int64_t>::max();
  };
  static_assert(sizeof(Queue) == 64);
  // Counted where something unusual happens: a mark, a drop, a pause, a resent packet.
  struct RareCounts {
    std::int64_t ecn_marked = 0;
    std::int64_t dropped_packets = 0;
    std::int64_t dropped_bytes = 0;
    std::int64_t resent_packets = 0;  // transmissions started
    std::int64_t resent_bytes = 0;
    Time resent_leaving_until;  // the last one started finishes serializing then
    std::int64_t resent_leaving_bytes = 0;
    std::int64_t xoff_sent = 0;
    std::int64_t xoff_refreshed = 0;
    std::int64_t xon_sent = 0;
    bool peer_paused = false;  // the last pause frame sent for the class was an XOFF
    std::int64_t pauses_received = 0;
    Time pause_started;
    Duration paused_before;  // closed pause intervals
  };
  [[nodiscard]] RareCounts& rare(int traffic_class) {
    if (rare_ == nullptr) rare_ = std::make_unique<std::array<RareCounts, kTrafficClasses>>();
    return (*rare_)[static_cast<std::size_t>(traffic_class)];
  }
  // All zero until the first rare event.
  [[nodiscard]] RareCounts rare_counts(std::size_t traffic_class) const {
    return rare_ == nullptr ? RareCounts{} : (*rare_)[traffic_class];
  }
  static constexpr std::uint16_t kControlBit = 1U << kTrafficClasses;

  [[nodiscard]] Simulator& sim() const { return link_.simulator(); }
  // Starts the next packet now if the wire is free, or makes sure a packet waiting finds it freed.
  void serve();
  void start_next();
  // `expected_next` is only fetched ahead by the event loop: the head of the queue served last.
  void finish_transmission(const Packet* expected_next);
  static void look_ahead(void* port, std::uint64_t expected_next);
  // And the last: a control frame queued since then goes first.
  static void last_look(void* port, std::uint64_t expected_next);
  void on_pause_expired(std::uint64_t traffic_class);
  [[nodiscard]] Packet* next_packet();
  [[nodiscard]] bool transmitting() const { return busy_until_ > sim().now(); }
  // What is sent counts as what a queue took in less what it still holds and what is leaving it.
  [[nodiscard]] bool leaving(const PacketFifo& fifo) const;

  // First cache line: the link, and who the port tells (read by the look ahead, which can wait for
  // no other line).
  Link link_;
  PortOwner& owner_;
  std::uint16_t index_;
  DepartureNotice notice_;
  bool finish_pending_ = false;  // an event is due when the wire frees
  bool halted_ = false;          // down, or at rate 0: nothing starts
  std::uint16_t nonempty_ = 0;   // bit c set when data_[c] holds packets; kControlBit for control_
  // Second: the transmission in progress, the rest of what every packet touches, and the control
  // queue.
  Departure in_transmission_;
  Time busy_until_;           // the last bit of the packet in transmission leaves then
  std::int64_t ps_per_byte_;  // whole_ps_per_byte(rate_)
  PacketFifo control_;
  // Then one line per data class.
  std::array<Queue, kTrafficClasses> data_;
  BitRate rate_;
  bool stopped_ = false;            // set_rate(0)
  PacketReceiver* lost_ = nullptr;  // set while the link is down
  // Allocated when the first of them happens: most ports of a large fabric never mark, drop or
  // pause, and what a port holds is memory a run must first touch (some 10 us a page here).
  std::unique_ptr<std::array<RareCounts, kTrafficClasses>> rare_;
};

}  // namespace lockstep
