#include "sim/scenario/server_schema.hpp"

namespace lockstep {

Schema<ServersConfig> servers_schema() {
  std::vector<std::pair<std::string, std::string>> presets;
  for (const NodePreset& preset : node_presets()) presets.emplace_back(preset.name, preset.name);
  Schema<ServersConfig> s;
  s.choice("preset", &ServersConfig::preset, presets, "dgx-h100",
           "the server: GPUs, NVLink and NVSwitch (reference.md section 1)")
      .value("gpus", &ServersConfig::gpus, std::nullopt,
             "GPUs per server, each with its NIC on the fabric (default: the preset's)",
             at_least<std::int32_t>(1))
      .value("nvlink_bandwidth", &ServersConfig::nvlink_bandwidth, std::nullopt,
             "NVLink bandwidth per GPU and direction (default: the preset's)",
             above(BitRate::bps(0)))
      .value("nvlink_latency", &ServersConfig::nvlink_latency, std::nullopt,
             "latency of one NVLink hop, GPU to NVSwitch (default: the preset's)",
             at_least(Duration()));
  return s;
}

Schema<HostsConfig> hosts_schema() {
  Schema<HostsConfig> s;
  s.choice("transport", &HostsConfig::transport,
           {{"rdma", FabricTransport::kRdma}, {"socket", FabricTransport::kSocket}}, "rdma",
           "between nodes: RDMA, or NCCL's TCP-socket fallback (as with NCCL_IB_DISABLE=1)")
      .value("socket_interface", &HostsConfig::socket_interface, std::nullopt,
             "with sockets: the rate of the one interface per node they use (NCCL_SOCKET_IFNAME "
             "on a front-end port), shared by the node's GPUs (default: every NIC's own)",
             above(BitRate::bps(0)))
      .value("gpudirect", &HostsConfig::gpudirect, "true",
             "GPUDirect RDMA; false stages every NIC's data through host memory at half its rate")
      .rank_list("nics_on_other_socket", &HostsConfig::nics_on_other_socket,
                 "ranks whose NIC sits on the other CPU socket: their data goes through host "
                 "memory at half the NIC's rate")
      .value("queue_pairs_per_connection", &HostsConfig::queue_pairs_per_connection, "1",
             "NCCL_IB_QPS_PER_CONNECTION: queue pairs NCCL opens for each connection between "
             "nodes over RDMA, each message on the next in turn, so that ECMP spreads a "
             "channel over as many paths",
             between<std::int32_t>(1, kMostQueuePairsPerConnection))
      .check([](const HostsConfig& hosts, const Schema<HostsConfig>::Checker& report) {
        if (hosts.socket_interface && hosts.transport != FabricTransport::kSocket) {
          report.error("socket_interface", "applies to sockets: set `transport: socket`");
        }
        if (hosts.queue_pairs_per_connection > 1 && hosts.transport != FabricTransport::kRdma) {
          report.error("queue_pairs_per_connection",
                       "applies to RDMA: sockets have no queue pairs");
        }
      });
  return s;
}

}  // namespace lockstep
