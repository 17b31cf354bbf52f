// A packet as the fabric sees it: a small pooled value carried by pointer from port to port. Sizes
// are wire bytes (payload plus headers). Packets live in a pool owned by the network and are
// chained through `next` into FIFOs, so queueing one allocates nothing.
#pragma once

#include <cstdint>

#include "sim/core/object_pool.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

enum class PacketKind : std::uint8_t {
  kData,
  kAck,    // cumulative: everything before `sequence` arrived
  kNack,   // go-back-N: resend from `sequence`
  kCnp,    // DCQCN congestion notification, receiver to sender
  kPause,  // IEEE 802.1Qbb per-priority pause; hop by hop, never routed
};

// Ends a route (Packet::route_ahead), so that the last switch can read one entry past its own.
inline constexpr std::uint16_t kRouteEnd = 0xFFFF;

// Control frames (ACK, NACK, CNP, pause) travel in a strict-priority class of their own, ahead of
// data and never paused, as RoCE deployments configure them.
[[nodiscard]] constexpr bool is_control(PacketKind kind) { return kind != PacketKind::kData; }

struct alignas(64) Packet {
  PacketKind kind = PacketKind::kData;
  std::uint8_t priority = 0;  // traffic class of data packets; for a pause, the class it pauses
  bool ecn_capable = true;
  bool congestion_experienced = false;  // ECN CE mark set by a switch
  std::uint16_t pause_quanta = 0;       // for kPause: in units of 512 bit times; 0 resumes
  std::uint16_t ingress_port = 0;       // at the switch holding it, for buffer accounting
  std::int32_t size_bytes = 0;          // on the wire
  std::uint32_t flow = 0;               // queue pair, network-wide
  std::int32_t payload_bytes = 0;       // data bytes carried (data packets)
  std::uint64_t sequence = 0;           // packet sequence number within the flow
  // The flow's ECMP path, looked up once when the flow was set up (its owner keeps the ports, ended
  // by kRouteEnd): the egress port to take at the next switch, and those at the switches after it.
  // A switch reads its port here, in the packet it holds, rather than in routing tables that at
  // scale miss the cache on every hop; and it reads the next switch's from the path while it works,
  // so that a miss on the path does not delay the load of its own egress port.
  const std::uint16_t* route_ahead = nullptr;
  std::uint16_t next_egress = 0;
  // ACK or NACK: a CNP for its flow rides on it (CnpCarrier::kAckOrNack), in place of a frame.
  bool carries_cnp = false;
  // Data: sent before (a timeout or NACK went back over it), counted by every port it leaves.
  bool resent = false;
  Packet* next = nullptr;  // FIFO chaining
};
// One cache line: at scale, touching packets is what the packet path's cost is made of.
static_assert(sizeof(Packet) == 64);

// Slabs of 2 MiB: one huge page each (object_pool.hpp).
using PacketPool = ObjectPool<Packet, 32768>;

// Intrusive FIFO of packets: O(1) push and pop, no allocation. It also counts what it took in and
// gave out over its life, which queue counters are made of.
class PacketFifo {
 public:
  [[nodiscard]] bool empty() const { return head_ == nullptr; }
  [[nodiscard]] const Packet* front() const { return head_; }
  [[nodiscard]] std::int64_t bytes() const { return bytes_; }
  [[nodiscard]] std::int64_t bytes_pushed() const { return bytes_pushed_; }
  [[nodiscard]] std::int64_t popped() const { return popped_; }

  void push(Packet* p) {
    p->next = nullptr;
    if (tail_ == nullptr) {
      head_ = p;
    } else {
      tail_->next = p;
    }
    tail_ = p;
    bytes_ += p->size_bytes;
    bytes_pushed_ += p->size_bytes;
  }

  Packet* pop() {
    Packet* p = head_;
    head_ = p->next;
    if (head_ == nullptr) tail_ = nullptr;
    p->next = nullptr;
    bytes_ -= p->size_bytes;
    ++popped_;
    return p;
  }

  // Empties the FIFO and returns its packets still chained through `next`; they never count as
  // given out (a port that loses its queue did not send it).
  Packet* take_all() {
    Packet* chain = head_;
    bytes_pushed_ -= bytes_;
    head_ = tail_ = nullptr;
    bytes_ = 0;
    return chain;
  }

 private:
  Packet* head_ = nullptr;
  Packet* tail_ = nullptr;
  std::int64_t bytes_ = 0;
  std::int64_t bytes_pushed_ = 0;
  std::int64_t popped_ = 0;
};

}  // namespace lockstep
