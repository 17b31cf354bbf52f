// The packet-level backend of `Network`: every cable of a Topology becomes two Links, every switch
// a Switch and every endpoint a Nic, wired port to port as the Topology numbers them and routed by
// its Routing. A queue pair (source, destination, index) becomes a QueuePair record on first use,
// with ECMP entropy hashed from those three values. The network records the wiring (every port and
// its peer) and what its components count: per message its times and path, per port and traffic
// class counters sampled at a fixed period (only those that moved) and their totals at the end, and
// per flow its DCQCN rate over time.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "models/fabric/cut_link.hpp"
#include "models/fabric/lost_packets.hpp"
#include "models/fabric/routing.hpp"
#include "models/fabric/switch.hpp"
#include "models/fabric/topology.hpp"
#include "models/network/network.hpp"
#include "models/transport/fabric_control.hpp"
#include "models/transport/network_tables.hpp"
#include "models/transport/nic.hpp"
#include "sim/core/table.hpp"

namespace lockstep {

struct PacketNetworkConfig {
  SwitchConfig switches;
  TransportConfig transport;
  std::optional<Duration> sample_period;  // absent: totals only
};

// The PFC headroom each port of switch `node` reserves per lossless class: the configured one, or
// derived from its cable's rate and delay and the MTU (shared_buffer.hpp).
[[nodiscard]] std::vector<Bytes> switch_headroom(const Topology& topology, NodeId node,
                                                 const PacketNetworkConfig& config);

// The first switch whose buffer cannot hold the headroom its ports reserve, as a sentence naming
// it and both sizes; empty when every switch can. What validation reports before a run.
[[nodiscard]] std::optional<std::string> buffer_problem(const Topology& topology,
                                                        const PacketNetworkConfig& config);

// Where data bytes are, network-wide: injected = delivered + in the fabric + dropped at all times.
struct DataAccount {
  std::int64_t injected = 0;   // payload bytes of data packets sent by NICs, resends included
  std::int64_t delivered = 0;  // payload bytes of data packets that reached their destination NIC
  std::int64_t dropped = 0;    // payload bytes dropped by switches and NIC receive buffers
  std::int64_t in_fabric = 0;  // payload bytes in queues, serializers, links and NIC buffers
};

class PacketNetwork final : public Network, public FabricControl, public MessageListener {
 public:
  PacketNetwork(Simulator& sim, const Routing& routing, const PacketNetworkConfig& config,
                std::uint64_t seed, RecordBackend& output);

  // Has the event loop fetch what events will touch ahead of them, in as many stages as a fabric
  // with this much port and NIC state needs. The constructor calls it for its own fabric; a test
  // may call it again to run a small fabric as a large one runs.
  static void look_ahead(Simulator& sim, std::size_t fabric_state_bytes);
  ~PacketNetwork() override;

  std::uint64_t send(std::int32_t source, std::int32_t destination, Bytes size,
                     std::uint32_t queue_pair, MessageListener& listener) override;
  [[nodiscard]] std::int32_t endpoint_count() const override;
  [[nodiscard]] Duration latency(std::int32_t source, std::int32_t destination,
                                 std::uint32_t queue_pair) const override;
  // From the NICs: records the message, then tells whoever sent it.
  void on_message_complete(const Message& message, const MessageTimes& times) override;
  void on_message_delivered(const Message& message, Time delivered) override;
  void on_message_failed(const Message& message, Time failed) override;

  // The endpoint's host path carries `rate` at most (Nic::limit_host_path), with a receive buffer
  // that pauses its switch at one PFC headroom of backlog (the round trip of its cable plus the
  // pause response and two frames, as switches reserve): reference.md gives no NIC buffer size, so
  // the NIC gets what PFC needs, one headroom to fill before pausing and one for what still
  // arrives (or the configured headroom, as switches take it). Call before any traffic. Throws
  // std::invalid_argument for an unknown endpoint or a rate that is not positive.
  void limit_endpoint(std::int32_t endpoint, BitRate rate);
  // One host path of `rate` that the endpoints' NICs share (the interface a node's sockets use).
  void limit_endpoints(const std::vector<std::int32_t>& endpoints, BitRate rate);

  // At packet level a failed cable loses the packets on it and those queued to go onto it, and the
  // ports at its ends drop whatever is routed to them until it is restored; a queue pair moved to
  // another path keeps its packets already on the old one going there (each packet carries its
  // route), and its transport recovers what was lost (go-back-N on a NACK, or its timeout).
  void set_cable_rate(CableId cable, BitRate rate) override;
  void fail_cable(CableId cable) override;
  void restore_cable(CableId cable) override;
  void set_host_path_rate(std::int32_t endpoint, BitRate rate) override;
  void start_pause_storm(std::int32_t endpoint) override;
  void stop_pause_storm(std::int32_t endpoint) override;

  [[nodiscard]] Nic& nic(std::int32_t endpoint) {
    return *nics_[static_cast<std::size_t>(endpoint)];
  }
  [[nodiscard]] Switch& switch_node(NodeId node);
  [[nodiscard]] const std::deque<QueuePair>& flows() const { return flows_; }
  [[nodiscard]] const Topology& topology() const { return routing_.topology(); }

  // Messages sent and not yet acknowledged.
  [[nodiscard]] std::int64_t messages_in_flight() const;
  // Data packets and their payload bytes lost to failed cables.
  [[nodiscard]] std::int64_t packets_lost_to_failures() const { return lost_.data_packets(); }
  // Every packet whose serialization onto any link completed.
  [[nodiscard]] std::int64_t packet_hops() const;
  [[nodiscard]] DataAccount data_account() const;
  // Drops on lossless classes: PFC headroom that was too small (must stay zero).
  [[nodiscard]] std::int64_t lossless_drops() const;
  [[nodiscard]] std::int64_t pause_frames_sent() const;

  // Records the per-port totals and flushes every table; call once at the end of the run.
  void finish();

 private:
  struct SentMessage;

  void sample();
  QueuePair& flow_for(std::int32_t source, std::int32_t destination, std::uint32_t queue_pair);
  [[nodiscard]] const Routing& routing() const { return rerouted_ ? *rerouted_ : routing_; }
  // The cables the flow's data and its answers cross now.
  [[nodiscard]] bool crosses_any(const QueuePair& flow, const std::vector<CableId>& cables) const;
  // Gives the flow the current routing's paths if it has them (the old ones are kept for the
  // packets on them); true if it moved.
  bool reroute(QueuePair& flow);
  // The port at each end of the cable goes down (true) or comes up.
  void set_cable_down(CableId cable, bool down);
  [[nodiscard]] EgressPort& port_of(NodeId node, PortIndex port);
  template <class Visit>
  void for_each_port(Visit&& visit) const;

  Simulator& sim_;
  const Routing& routing_;
  const PacketNetworkConfig& config_;
  std::uint64_t seed_;
  PacketPool packets_;
  std::vector<std::unique_ptr<Switch>> switches_;
  std::vector<std::unique_ptr<Nic>> nics_;
  std::deque<HostLink> host_links_;      // those that limit_endpoint(s) gave NICs
  std::vector<HostLink*> host_link_of_;  // by endpoint; null without a limit
  std::deque<QueuePair> flows_;
  std::unique_ptr<Routing> rerouted_;  // without the failed cables, once one failed
  std::vector<CableId> failed_cables_;
  LostPackets lost_{packets_};
  std::deque<CutLink> cuts_;                               // one per direction of each cut
  std::deque<std::vector<std::uint16_t>> retired_routes_;  // packets on old paths still read them
  std::map<std::tuple<std::int32_t, std::int32_t, std::uint32_t>, std::uint32_t> flow_ids_;
  std::vector<MessageListener*> listeners_;  // by message id
  std::uint64_t next_message_ = 0;

  NetworkTables tables_;
  // Per port, in for_each_port order: the counters and each class's paused time at the last sample.
  struct SampledPort {
    PortCounters counters;
    std::array<Duration, kTrafficClasses> paused;
  };
  std::vector<SampledPort> last_sampled_;
};

}  // namespace lockstep
