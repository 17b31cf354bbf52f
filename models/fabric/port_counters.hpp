// What an egress port counts, per traffic class. Totals only; the network samples them over time.
#pragma once

#include <array>
#include <cstdint>

namespace lockstep {

inline constexpr int kTrafficClasses = 8;

struct ClassCounters {
  std::int64_t bytes_sent = 0;
  std::int64_t packets_sent = 0;
  std::int64_t ecn_marked = 0;
  std::int64_t dropped_packets = 0;
  std::int64_t dropped_bytes = 0;
  // Data packets, and their wire bytes, that a sender had sent before: a timeout or NACK resent
  // them. Of packets_sent and bytes_sent.
  std::int64_t resent_packets = 0;
  std::int64_t resent_bytes = 0;
  // Pause frames this node sent out of this port for the class: the sum of the three kinds below.
  std::int64_t pauses_sent = 0;
  std::int64_t xoff_sent = 0;        // pausing a class its peer was free to send
  std::int64_t xoff_refreshed = 0;   // pausing it again before the last pause ran out
  std::int64_t xon_sent = 0;         // resuming it (quanta 0)
  std::int64_t pauses_received = 0;  // pause frames that arrived on this port's cable for the class
  std::int64_t max_queue_bytes = 0;
};

struct PortCounters {
  std::array<ClassCounters, kTrafficClasses> classes;
  std::int64_t control_bytes_sent = 0;  // ACK, NACK, CNP and pause frames
};

}  // namespace lockstep
