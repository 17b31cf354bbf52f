// A scenario's network: which backend, topology, switch behaviour, transport, and what to sample.
// Turned into either backend's configuration by packet_network_config() and flow_network_config().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/fabric/switch_config.hpp"
#include "models/fabric/topology_config.hpp"
#include "models/transport/flow_network.hpp"
#include "models/transport/packet_network.hpp"

namespace lockstep {

// Which backend carries the traffic: packet by packet, or as max-min fair fluid flows. A training
// job may also run on the analytic level, which prices each collective by formula (no contention);
// the fabric under it is then built at flow level for what else needs one.
enum class NetworkModel { kPacket, kFlow, kAnalytic };
enum class CongestionControl { kNone, kDcqcn };
enum class DcqcnProfile { kPaper, kNicFirmware, kHpccReference };

struct TransportScenarioConfig {
  Bytes payload_per_packet = Bytes(1000);
  Bytes header = Bytes(62);
  std::int64_t traffic_class = 3;
  std::int64_t qp_timeout = kNcclIbTimeout;  // the exponent: 4.096 us x 2^qp_timeout
  std::int64_t retry_count = kNcclIbRetryCount;
  CongestionControl congestion_control = CongestionControl::kDcqcn;
  DcqcnProfile dcqcn_profile = DcqcnProfile::kHpccReference;
};

// A change to one cable at a point of the run: its rate in both directions (0 stops it without
// routing noticing, as a port stuck in pause or a cable that stopped passing light would), or a
// failure that routing notices (flows move off it). The cable is the first one joining nodes `a`
// and `b`, named as switches are or as host<i>.
struct LinkEventConfig {
  Duration at;
  std::string a;
  std::string b;
  std::optional<BitRate> rate;
  bool down = false;
  bool up = false;
};

struct NetworkConfig {
  NetworkModel model = NetworkModel::kPacket;
  TopologyConfig topology;
  SwitchConfig switches;  // the buffer size comes from the topology
  TransportScenarioConfig transport;
  std::optional<Duration> sample_period;
  std::vector<LinkEventConfig> link_events;
};

// DCQCN runs at `nic_rate`, the endpoints' link rate.
[[nodiscard]] PacketNetworkConfig packet_network_config(const NetworkConfig& config,
                                                        BitRate nic_rate);
// The flow backend has no switch behaviour or congestion control: it takes the framing and
// sampling.
[[nodiscard]] FlowNetworkConfig flow_network_config(const NetworkConfig& config);

}  // namespace lockstep
