// The machine a run simulates, assembled once from its scenario: the fabric at its level (packet
// or flow), the GPU servers on it (each server's NVLink domain, one NIC per GPU), and the host
// paths between GPUs and NICs (GPUDirect, a NIC on the other CPU socket, NCCL's socket fallback
// over each NIC's interface or one per node). Collectives of any communicator, traffic and jobs
// all run on its one network, whose ranks are the GPUs (or, without servers, the fabric's
// endpoints), so they share NVLink, NICs and the fabric; the fabric can change under them through
// its FabricControl. Units: Bytes, BitRate, Time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "models/fabric/routing.hpp"
#include "models/network/network.hpp"
#include "models/node/node_preset.hpp"
#include "models/node/server_config.hpp"
#include "models/transport/fabric_control.hpp"
#include "models/transport/flow_network.hpp"
#include "models/transport/network_config.hpp"
#include "models/transport/packet_network.hpp"
#include "sim/core/discarding_backend.hpp"

namespace lockstep {

struct ClusterSpec {
  NetworkConfig fabric;
  std::optional<NodePreset> servers;  // GPU servers on the fabric; none: one rank per endpoint
  HostsConfig hosts;
  std::uint64_t seed = 0;
};

class ClusterNetwork;

class Cluster {
 public:
  // `fabric` routes the spec's fabric topology; it is built once per run and outlives the cluster.
  // The fabric records into `output`; NVLink records nothing. Throws std::invalid_argument for
  // servers whose GPUs do not divide the fabric's endpoints or a host-staged NIC that no rank has.
  Cluster(Simulator& sim, const ClusterSpec& spec, const Routing& fabric, RecordBackend& output);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Every rank's messages: NVLink inside a server, the fabric between servers.
  [[nodiscard]] Network& network();
  [[nodiscard]] std::int32_t ranks() const { return routing_.topology().endpoint_count(); }
  // GPUs per server; 1 without servers.
  [[nodiscard]] std::int32_t gpus_per_node() const {
    return spec_.servers ? spec_.servers->gpus : 1;
  }
  [[nodiscard]] const std::optional<NodePreset>& servers() const { return spec_.servers; }
  [[nodiscard]] const Routing& routing() const { return routing_; }
  // Rate changes, failures and repairs of the fabric's cables during the run.
  [[nodiscard]] FabricControl& fabric();
  // The fabric at its level: one of the two is set.
  [[nodiscard]] PacketNetwork* packet_fabric() { return packets_.get(); }
  [[nodiscard]] FlowNetwork* flow_fabric() { return flows_.get(); }
  // What the endpoint's host path (GPU or host memory to its NIC) carries each way as the scenario
  // built it: the NIC's line rate, or less for a host-staged NIC or over sockets.
  [[nodiscard]] BitRate host_path_rate(std::int32_t endpoint) const;
  // Whether ranks a and b can exchange data both ways: on one server, or over the fabric.
  [[nodiscard]] bool connected(std::int32_t a, std::int32_t b) const;

  // Records the fabric's totals and flushes its tables; call once at the end of the run.
  void finish();

 private:
  // The host-side limits on the NICs (host_link.hpp): sockets, host-staged NICs, one socket
  // interface per node; the tighter one where several apply.
  template <class FabricNetwork>
  void limit_host_paths(FabricNetwork& network) const;
  // What one socket interface per node carries, when NCCL's sockets share one.
  [[nodiscard]] std::optional<BitRate> node_interface_limit() const;
  // Otherwise each endpoint's own limit: a host-staged NIC's share, the socket stack's throughput;
  // none for a NIC that runs at its line rate.
  [[nodiscard]] std::vector<std::optional<BitRate>> own_host_limits() const;

  ClusterSpec spec_;
  const Routing& routing_;
  PacketNetworkConfig packet_config_;  // the packet fabric keeps a reference
  std::unique_ptr<PacketNetwork> packets_;
  std::unique_ptr<FlowNetwork> flows_;
  DiscardingBackend nvlink_output_;
  std::optional<Topology> nvlink_topology_;
  std::optional<Routing> nvlink_routing_;
  std::unique_ptr<FlowNetwork> nvlink_;
  std::unique_ptr<ClusterNetwork> servers_network_;
};

}  // namespace lockstep
