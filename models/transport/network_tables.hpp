// The tables both network backends record, with one meaning in both: per message its times and
// path, the wiring (every port and its peer), per port and traffic class the counters sampled over
// time and their totals at the end, and per flow its sending rate over time. A backend leaves the
// columns that have no meaning for it at zero (the flow-level backend has no queues, marks, pauses
// or drops); analysis/hdf5_schema.md says which.
#pragma once

#include <cstdint>
#include <vector>

#include "models/fabric/routing.hpp"
#include "sim/core/table.hpp"

namespace lockstep {

struct MessageRow {
  std::int64_t message;
  std::int64_t flow;
  std::int64_t source;
  std::int64_t destination;
  std::int64_t bytes;
  std::int64_t submitted_ps;
  std::int64_t first_sent_ps;
  std::int64_t delivered_ps;
  std::int64_t acknowledged_ps;
  std::int64_t hops;
  FixedText<96> path;  // node ids joined by '>', source first
};

struct PortRow {
  std::int64_t node;
  std::int64_t port;
  std::int64_t peer;
  std::int64_t peer_port;
  std::int64_t rate_bps;
  std::int64_t delay_ps;
};

struct PortSampleRow {
  std::int64_t time_ps;
  std::int64_t node;
  std::int64_t port;
  std::int64_t traffic_class;
  std::int64_t queue_bytes;
  std::int64_t bytes_sent;
  std::int64_t ecn_marked;
  std::int64_t pauses_sent;
  std::int64_t pauses_received;
  std::int64_t paused_ps;
  std::int64_t dropped_packets;
  std::int64_t xoff_sent;
  std::int64_t xoff_refreshed;
  std::int64_t xon_sent;
  std::int64_t resent_packets;
};

struct PortTotalRow {
  std::int64_t node;
  std::int64_t port;
  std::int64_t traffic_class;
  std::int64_t bytes_sent;
  std::int64_t packets_sent;
  std::int64_t max_queue_bytes;
  std::int64_t ecn_marked;
  std::int64_t pauses_sent;
  std::int64_t pauses_received;
  std::int64_t paused_ps;
  std::int64_t dropped_packets;
  std::int64_t dropped_bytes;
  std::int64_t xoff_sent;
  std::int64_t xoff_refreshed;
  std::int64_t xon_sent;
  std::int64_t resent_packets;
  std::int64_t resent_bytes;
};

// A queue pair's totals at the end of the run. The flow-level backend resends nothing and never
// fails a queue pair: its rows name the queue pairs.
struct QueuePairRow {
  std::int64_t flow;
  std::int64_t source;
  std::int64_t destination;
  std::int64_t queue_pair;  // which of the (source, destination) queue pairs
  std::int64_t resent_packets;
  std::int64_t resent_payload_bytes;
  std::int64_t timeouts;  // local ACK timeouts that fired with packets outstanding
  std::int64_t cnps_received;
  std::int64_t failed_ps;  // when its retries ran out; -1 if they never did
  std::int64_t failed_messages;
};

struct FlowSampleRow {
  std::int64_t time_ps;
  std::int64_t flow;
  std::int64_t rate_bps;
  std::int64_t cnps_received;
};

[[nodiscard]] TableLayout message_layout();
[[nodiscard]] TableLayout port_layout();
[[nodiscard]] TableLayout port_sample_layout();
[[nodiscard]] TableLayout port_total_layout();
[[nodiscard]] TableLayout flow_sample_layout();
[[nodiscard]] TableLayout queue_pair_layout();

// The six tables, opened together in the order both backends write them.
struct NetworkTables {
  explicit NetworkTables(RecordBackend& output)
      : messages(output, message_layout()),
        ports(output, port_layout()),
        port_samples(output, port_sample_layout()),
        port_totals(output, port_total_layout()),
        flow_samples(output, flow_sample_layout()),
        queue_pairs(output, queue_pair_layout()) {}

  void flush() {
    messages.flush();
    ports.flush();
    port_samples.flush();
    port_totals.flush();
    flow_samples.flush();
    queue_pairs.flush();
  }

  Table<MessageRow> messages;
  Table<PortRow> ports;
  Table<PortSampleRow> port_samples;
  Table<PortTotalRow> port_totals;
  Table<FlowSampleRow> flow_samples;
  Table<QueuePairRow> queue_pairs;
};

// The messages table's path column: "0>16>17>1" for hops leaving nodes 0, 16 and 17 to reach 1.
[[nodiscard]] FixedText<96> path_text(const std::vector<Hop>& hops, NodeId destination);

// Appends a row per port of the topology to the ports table.
void record_wiring(const Topology& topology, Table<PortRow>& ports);

}  // namespace lockstep
