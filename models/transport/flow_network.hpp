// The flow-level backend of `Network`: the same topology, ECMP paths and queue pairs as the packet
// backend, with bandwidth shared max-min fairly instead of packet by packet, for studies at a scale
// where packets would be billions of events.
//
// A queue pair (source, destination, index) is one fluid flow on its ECMP path (the packet
// backend's path for the same seed). While it has bytes to send it takes its max-min fair share of
// every link direction on the path, and its acknowledgements take a share of the reverse path in
// proportion (one control frame per data packet). Its messages drain in order at that rate. A
// message's bytes on the wire are its payload plus one header per packet, exactly as the packet
// backend frames it. Rates are recomputed (MaxMinSolver) only when a queue pair starts or stops
// sending, a link's rate changes or a cap is set, once for all the changes of an instant's normal
// events, and only for the flows those changes reach.
//
// Timing: a message starts draining when it reaches the head of its queue pair. Once its last byte
// has drained at the source, its last packet is forwarded store-and-forward: one serialization per
// further hop at that hop's link rate (of a full packet when the message has more than one, since
// the last packet then waits behind a full one at every hop) plus every hop's propagation. So a
// message alone on an idle path of equal rates is delivered exactly when the packet backend
// delivers it, and short messages are not free.
// Its acknowledgement (one control frame) then returns over the reverse path the same way. Drain
// times are rounded up to the next picosecond; the overshoot is carried into the next message.
//
// Run-time changes: a link direction's rate can change (degraded, paused: 0); a failed cable stops
// both directions, and the queue pairs that crossed it move at once to another shortest path
// (resilient ECMP: the others keep theirs), as do new queue pairs; with no path left they stall.
//
// It leaves out queues, ECN, PFC and DCQCN (a fluid flow takes its share at once: no transients, no
// head-of-line blocking), packet loss, and the time data spends between hops when counting a link's
// bytes (a link counts bytes as the source drains them). Units: Bytes, BitRate and Time at the
// interface; shares in bit/s as doubles inside (see max_min_solver.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "models/fabric/routing.hpp"
#include "models/fabric/topology.hpp"
#include "models/network/network.hpp"
#include "models/transport/fabric_control.hpp"
#include "models/transport/max_min_solver.hpp"
#include "models/transport/network_tables.hpp"
#include "sim/core/flat_hash_map.hpp"
#include "sim/core/streaming_quantiles.hpp"
#include "sim/core/table.hpp"
#include "sim/core/timer.hpp"

namespace lockstep {

struct FlowNetworkConfig {
  Bytes payload_per_packet = Bytes(1000);
  Bytes header = Bytes(62);
  Bytes control_frame = Bytes(64);        // one acknowledgement per data packet
  int data_class = 3;                     // the traffic class its counters are recorded under
  std::optional<Duration> sample_period;  // absent: totals only
};

class FlowNetwork final : public Network, public FabricControl {
 public:
  // What the rate recomputations cost, for benchmarks: wall time is measured, never recorded in
  // the output (it would break determinism).
  struct Recomputations {
    std::int64_t count = 0;
    std::int64_t flows_refilled = 0;  // summed over all recomputations
    std::int64_t expansions = 0;      // times the bottleneck check grew the re-filled set
    StreamingQuantiles wall_ns;       // of each recomputation
  };

  FlowNetwork(Simulator& sim, const Routing& routing, const FlowNetworkConfig& config,
              std::uint64_t seed, RecordBackend& output);
  ~FlowNetwork() override;
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  std::uint64_t send(std::int32_t source, std::int32_t destination, Bytes size,
                     std::uint32_t queue_pair, MessageListener& listener) override;
  [[nodiscard]] std::int32_t endpoint_count() const override;
  [[nodiscard]] Duration latency(std::int32_t source, std::int32_t destination,
                                 std::uint32_t queue_pair) const override;

  // The direction of a link leaving `node` through its port `port` now runs at `rate` (0 stops it:
  // a paused port). Throws std::invalid_argument for a port that does not exist.
  void set_link_rate(NodeId node, PortIndex port, BitRate rate);
  void set_cable_rate(CableId cable, BitRate rate) override;
  void fail_cable(CableId cable) override;
  void restore_cable(CableId cable) override;
  void set_host_path_rate(std::int32_t endpoint, BitRate rate) override;
  // The flow level has no pause frames: the switch's port toward the NIC stops until the storm
  // ends, but the back-pressure that spreads a real storm upstream is not modelled.
  void start_pause_storm(std::int32_t endpoint) override;
  void stop_pause_storm(std::int32_t endpoint) override;
  // A host-side limit on one queue pair's rate (e.g. what its PCIe path sustains).
  void limit_queue_pair(std::int32_t source, std::int32_t destination, std::uint32_t queue_pair,
                        BitRate cap);
  // A host-side limit on what an endpoint sends, and separately on what it receives, each shared by
  // its queue pairs (what a TCP socket stack sustains, or a NIC whose data is staged through host
  // memory). Replaces a limit the endpoint had. Throws std::invalid_argument for an unknown
  // endpoint or a cap that is not positive.
  void limit_endpoint(std::int32_t endpoint, BitRate cap);
  // One such limit shared by several endpoints (the GPUs of a node whose traffic all goes through
  // one host interface).
  void limit_endpoints(const std::vector<std::int32_t>& endpoints, BitRate cap);

  // The queue pair's current rate (0 when idle or unknown), and its path (empty when unknown).
  [[nodiscard]] double rate_bps(std::int32_t source, std::int32_t destination,
                                std::uint32_t queue_pair) const;
  [[nodiscard]] std::vector<Hop> path(std::int32_t source, std::int32_t destination,
                                      std::uint32_t queue_pair) const;
  // Wire bytes of data (payload and headers) of fully drained messages that crossed the link
  // direction leaving `node` through `port`.
  [[nodiscard]] std::int64_t link_bytes_sent(NodeId node, PortIndex port) const;
  // Messages sent and not yet acknowledged.
  [[nodiscard]] std::int64_t messages_in_flight() const;
  [[nodiscard]] const Recomputations& recomputations() const { return recomputations_; }

  // Records the per-port totals and flushes every table; call once at the end of the run.
  void finish();

 private:
  struct QueuePair;
  struct InFlight;
  struct LinkState;

  QueuePair& queue_pair_for(std::int32_t source, std::int32_t destination, std::uint32_t index);
  [[nodiscard]] const QueuePair* find_queue_pair(std::int32_t source, std::int32_t destination,
                                                 std::uint32_t index) const;
  [[nodiscard]] std::int32_t link_of(NodeId node, CableId cable) const;
  void route(QueuePair& qp);
  void start_sending(QueuePair& qp);
  void stop_sending(QueuePair& qp);
  void change_link_rate(std::int32_t link, BitRate rate);
  void request_recompute();
  void recompute();
  // Brings the queue pair's progress and its links' byte counts up to now at the old rate.
  void settle(QueuePair& qp);
  void set_rate(QueuePair& qp, double rate_bps);
  void arm_drain(QueuePair& qp);
  void on_drained(std::uint64_t queue_pair);
  void on_delivered(std::uint64_t in_flight);
  void on_acknowledged(std::uint64_t in_flight);
  void settle_link(LinkState& link);
  void sample();

  Simulator& sim_;
  const Routing& routing_;
  std::unique_ptr<Routing> rerouted_;  // the routing without the failed cables, once one failed
  const FlowNetworkConfig config_;
  std::uint64_t seed_;
  MaxMinSolver solver_;
  std::vector<LinkState> links_;  // two per cable: 2c carries a -> b, 2c + 1 carries b -> a
  std::vector<CableId> failed_cables_;
  std::vector<std::pair<BitRate, BitRate>> rate_before_failure_;  // of each failed cable's links
  std::deque<QueuePair> queue_pairs_;
  // Looked up at every message; never iterated.
  FlatHashMap<QueuePairKey, std::uint32_t, QueuePairKeyHash> queue_pair_ids_;
  std::vector<std::int32_t> queue_pair_of_flow_;  // by solver flow id
  // The solver resources that limit what an endpoint sends and receives, or -1.
  struct EndpointLimit {
    MaxMinSolver::ResourceId send = -1;
    MaxMinSolver::ResourceId receive = -1;
  };
  std::vector<EndpointLimit> endpoint_limit_;
  std::map<std::int32_t, BitRate> storming_;  // endpoint -> its switch port's rate before the storm
  std::vector<InFlight> in_flight_;           // drained messages awaiting acknowledgement
  std::vector<std::uint64_t> free_in_flight_;
  std::uint64_t next_message_ = 0;
  bool recompute_pending_ = false;
  Recomputations recomputations_;

  NetworkTables tables_;
};

}  // namespace lockstep
