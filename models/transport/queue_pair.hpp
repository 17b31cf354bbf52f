// One queue pair's state at both ends: the sender's messages, sequence numbers, pacing and DCQCN
// reaction point, and the receiver's expected sequence and DCQCN notification point. Kept in one
// record per queue pair in the network's table, so a NIC finds either half by the packet's flow id
// without a hash lookup. Sequence numbers run across messages; a message occupies a contiguous
// range of them.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "models/cc/dcqcn.hpp"
#include "models/fabric/packet.hpp"
#include "models/network/message.hpp"
#include "sim/core/timer.hpp"

namespace lockstep {

struct PendingMessage {
  Message message;
  MessageTimes times;
  std::uint64_t first_sequence = 0;
  std::uint64_t end_sequence = 0;  // one past its last packet
  std::int64_t last_payload = 0;   // bytes in its last packet (the others carry a full payload)
  bool sent = false;               // its first packet has left (first_sent is then valid)
  bool delivered = false;
};

// Where a route's packets start: the egress port at the first switch, and the ports after it (in
// the flow's route vector), which the packet carries on (Packet::route_ahead). Kept beside the
// sequence numbers so that sending reads no route vector.
struct RouteStart {
  const std::uint16_t* ahead = nullptr;
  std::uint16_t first = kRouteEnd;
};

// Laid out by who reads what, in whole cache lines: at thousands of hosts a flow is cold whenever a
// packet of it reaches its NIC, and the NIC fetches the lines of the role it plays ahead of the
// packet (Nic::prefetch_for): the sender's first kSenderLines lines, or the receiver's
// kReceiverLines after them (tests/unit/queue_pair_layout_test.cpp holds the layout to that).
struct alignas(64) QueuePair {
  // Sender: what sending a packet and taking an ACK, NACK or CNP read.
  std::uint64_t next_sequence = 0;   // next packet to send (moves back on go-back-N)
  std::uint64_t unacknowledged = 0;  // oldest packet not yet acknowledged
  std::uint64_t end_sequence = 0;    // one past the last packet of the last message posted
  // Packets in [full_payload_from, full_payload_end) carry a full payload of a message already
  // under way, so sending them needs no message record: at scale that record is a cache miss of
  // its own, and only a message's first and last packets need it.
  std::uint64_t full_payload_from = 0;
  std::uint64_t full_payload_end = 0;
  // unacknowledged at which the oldest message is complete (the end of messages.front()).
  std::uint64_t completion_due_at = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t sent_end = 0;  // one past the highest packet ever sent: below it, a resend
  Time next_send_allowed;      // pacing at the current rate
  RouteStart to_destination;   // data's route
  std::uint32_t id = 0;
  std::uint8_t traffic_class = 0;
  bool active = false;            // in its NIC's list of flows with something to send
  std::int32_t retries_left = 0;  // timeouts it may still resend on before it fails
  // Created by the sending NIC, which it calls; in place, as the network's table never moves a
  // flow.
  std::optional<Timer> retransmit;
  std::optional<DcqcnReactionPoint> reaction_point;
  Time next_alpha_update;
  Time next_rate_increase;
  std::int64_t cnps_received = 0;
  // Its retries ran out: the queue pair is in the error state, is never made active again, so sends
  // nothing more, and fails every message posted to it (ibverbs' IBV_WC_RETRY_EXC_ERR, then
  // flushes).
  std::optional<Time> failed_at;

  // Receiver: what taking a data packet and answering it read, in a line of its own and the next.
  alignas(64) std::uint64_t expected_sequence = 0;
  // expected_sequence at which the oldest undelivered message is complete: below it, data needs no
  // look at the message records.
  std::uint64_t delivery_due_at = std::numeric_limits<std::uint64_t>::max();
  RouteStart to_source;           // ACKs', NACKs' and CNPs' route
  bool nack_outstanding = false;  // a NACK for expected_sequence went out; wait for it to be filled
  std::optional<DcqcnNotificationPoint> notification_point;
  std::int64_t cnps_sent = 0;

  // The rest: read when a message starts, completes or fails, and when a run reports.
  alignas(64) std::deque<PendingMessage> messages;  // not yet acknowledged, oldest first
  // The egress port at each switch on the way, then kRouteEnd (Packet::route_ahead): data takes the
  // first, ACKs, NACKs and CNPs the second.
  std::vector<std::uint16_t> route_to_destination;
  std::vector<std::uint16_t> route_to_source;
  std::int32_t source = 0;
  std::int32_t destination = 0;
  std::uint32_t index = 0;  // which of the (source, destination) queue pairs
  std::uint64_t entropy = 0;
  std::int64_t retransmitted_packets = 0;
  std::int64_t retransmitted_bytes = 0;  // payload of the resent packets
  std::int64_t timeouts = 0;
  std::int64_t failed_messages = 0;

  static constexpr int kSenderLines = 5;
  static constexpr int kReceiverLines = 2;

  [[nodiscard]] bool has_unsent() const { return next_sequence < end_sequence; }
  // Sets both routes (each ends with kRouteEnd) and where their packets start.
  void set_routes(std::vector<std::uint16_t> to_destination_ports,
                  std::vector<std::uint16_t> to_source_ports) {
    route_to_destination = std::move(to_destination_ports);
    route_to_source = std::move(to_source_ports);
    to_destination = RouteStart{route_to_destination.data() + 1, route_to_destination.front()};
    to_source = RouteStart{route_to_source.data() + 1, route_to_source.front()};
  }
};

}  // namespace lockstep
