#include "models/cluster/cluster.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/node/cluster_network.hpp"
#include "models/node/nvlink_domain.hpp"

namespace lockstep {
namespace {

// NVLink moves data in flits without acknowledgement frames that would share its links: no header
// or control frames in its fluid model.
FlowNetworkConfig nvlink_config() {
  FlowNetworkConfig config;
  config.header = Bytes(0);
  config.control_frame = Bytes(0);
  return config;
}

}  // namespace

Cluster::Cluster(Simulator& sim, const ClusterSpec& spec, const Routing& fabric,
                 RecordBackend& output)
    : spec_(spec), routing_(fabric) {
  const Topology& topology = fabric.topology();
  const std::int32_t endpoints = topology.endpoint_count();
  const std::int32_t gpus = gpus_per_node();
  if (gpus < 1 || endpoints % gpus != 0) {
    throw std::invalid_argument(std::to_string(gpus) + " GPUs per server do not divide the " +
                                std::to_string(endpoints) + " endpoints of the fabric");
  }
  for (const std::int32_t r : spec_.hosts.nics_on_other_socket) {
    if (r < 0 || r >= endpoints) throw std::invalid_argument("no rank " + std::to_string(r));
  }
  if (spec_.fabric.model == NetworkModel::kPacket) {
    packet_config_ = packet_network_config(spec_.fabric, topology.nic_rate());
    packets_ = std::make_unique<PacketNetwork>(sim, fabric, packet_config_, spec_.seed, output);
    limit_host_paths(*packets_);
  } else {
    flows_ = std::make_unique<FlowNetwork>(sim, fabric, flow_network_config(spec_.fabric),
                                           spec_.seed, output);
    limit_host_paths(*flows_);
  }
  if (spec_.servers) {
    nvlink_topology_.emplace(build_nvlink_domains(endpoints / gpus, *spec_.servers));
    nvlink_routing_.emplace(*nvlink_topology_);
    nvlink_ = std::make_unique<FlowNetwork>(sim, *nvlink_routing_, nvlink_config(), spec_.seed,
                                            nvlink_output_);
    Network& fabric_network =
        packets_ ? static_cast<Network&>(*packets_) : static_cast<Network&>(*flows_);
    servers_network_ = std::make_unique<ClusterNetwork>(*nvlink_, fabric_network, gpus);
  }
}

Cluster::~Cluster() = default;

Network& Cluster::network() {
  if (servers_network_) return *servers_network_;
  if (packets_) return *packets_;
  return *flows_;
}

FabricControl& Cluster::fabric() {
  if (packets_) return *packets_;
  return *flows_;
}

bool Cluster::connected(std::int32_t a, std::int32_t b) const {
  return a / gpus_per_node() == b / gpus_per_node() ||
         (routing_.reachable(a, b) && routing_.reachable(b, a));
}

void Cluster::finish() {
  if (packets_) packets_->finish();
  if (flows_) flows_->finish();
}

BitRate Cluster::host_path_rate(std::int32_t endpoint) const {
  if (const std::optional<BitRate> shared = node_interface_limit()) return *shared;
  const Topology& topology = routing_.topology();
  return own_host_limits()[static_cast<std::size_t>(endpoint)].value_or(
      topology.cable(topology.ports(endpoint)[0].cable).rate);
}

std::optional<BitRate> Cluster::node_interface_limit() const {
  const HostsConfig& hosts = spec_.hosts;
  if (hosts.transport != FabricTransport::kSocket || !hosts.socket_interface) return std::nullopt;
  return std::min(*hosts.socket_interface, kSocketThroughput);
}

std::vector<std::optional<BitRate>> Cluster::own_host_limits() const {
  const Topology& topology = routing_.topology();
  const std::int32_t ranks = topology.endpoint_count();
  const HostsConfig& hosts = spec_.hosts;
  std::vector<std::optional<BitRate>> limit(static_cast<std::size_t>(ranks));
  for (const std::int32_t r : host_staged_nics(hosts, ranks)) {
    const BitRate own = topology.cable(topology.ports(r)[0].cable).rate;
    limit[static_cast<std::size_t>(r)] = BitRate::bps(std::max<std::int64_t>(
        1, static_cast<std::int64_t>(static_cast<double>(own.bps()) * kHostStagedShare)));
  }
  if (hosts.transport == FabricTransport::kSocket) {
    for (std::optional<BitRate>& l : limit) {
      l = std::min(l.value_or(kSocketThroughput), kSocketThroughput);
    }
  }
  return limit;
}

template <class FabricNetwork>
void Cluster::limit_host_paths(FabricNetwork& network) const {
  const std::int32_t ranks = routing_.topology().endpoint_count();
  if (const std::optional<BitRate> shared = node_interface_limit()) {
    // Everything goes through host memory and the one interface: NIC placement stops mattering.
    const std::int32_t gpus = gpus_per_node();
    for (std::int32_t node = 0; node < ranks / gpus; ++node) {
      std::vector<std::int32_t> gpus_of_node;
      for (std::int32_t g = 0; g < gpus; ++g) gpus_of_node.push_back(node * gpus + g);
      network.limit_endpoints(gpus_of_node, *shared);
    }
    return;
  }
  const std::vector<std::optional<BitRate>> limit = own_host_limits();
  for (std::int32_t e = 0; e < ranks; ++e) {
    if (const std::optional<BitRate>& l = limit[static_cast<std::size_t>(e)]) {
      network.limit_endpoint(e, *l);
    }
  }
}

}  // namespace lockstep
