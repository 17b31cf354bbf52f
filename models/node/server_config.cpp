#include "models/node/server_config.hpp"

namespace lockstep {

std::optional<NodePreset> server_node(const ServersConfig& servers) {
  std::optional<NodePreset> node = node_preset(servers.preset);
  if (!node) return std::nullopt;
  if (servers.gpus) node->gpus = *servers.gpus;
  if (servers.nvlink_bandwidth) node->nvlink_bandwidth = *servers.nvlink_bandwidth;
  if (servers.nvlink_latency) node->nvlink_hop_latency = *servers.nvlink_latency;
  return node;
}

std::vector<std::int32_t> host_staged_nics(const HostsConfig& hosts, std::int32_t ranks) {
  if (hosts.gpudirect) return hosts.nics_on_other_socket;
  std::vector<std::int32_t> all;
  for (std::int32_t r = 0; r < ranks; ++r) all.push_back(r);
  return all;
}

}  // namespace lockstep
