// What a scenario says about the machines at the fabric's endpoints (scenario keys `servers` and
// `hosts`, scenarios/README.md): GPU servers of a preset, with overrides, whose GPUs each have a
// NIC on the fabric; and how data gets from a GPU or host to its NIC and across: RDMA with
// GPUDirect, a NIC reached through host memory (on the other CPU socket, or GPUDirect off), or
// NCCL's TCP-socket fallback, over each NIC's own interface or one interface per node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/node/node_preset.hpp"
#include "sim/core/bit_rate.hpp"

namespace lockstep {

struct ServersConfig {
  std::string preset = "dgx-h100";
  std::optional<std::int32_t> gpus;  // per server; default the preset's
  std::optional<BitRate> nvlink_bandwidth;
  std::optional<Duration> nvlink_latency;  // per NVLink hop
};

// How data crosses the fabric: RDMA (GPUDirect, at the NIC's rate), or NCCL's socket transport,
// the fallback when NCCL finds no usable RDMA device (or NCCL_IB_DISABLE=1). Over sockets each
// NIC's host stack sustains what NCCL reached over 100 Gb/s TCP: 4-6 GB/s of all-reduce bus
// bandwidth, below half the line rate (NVIDIA/nccl issues 450 and 398, reference.md section 1);
// lockstep takes 5 GB/s per NIC, whatever the NIC's rate, since the CPU is the limit.
// Sockets run over each NIC's own interface (IPoIB or RoCE netdevs, one per GPU) unless the
// scenario names one host interface per node that NCCL picked instead (NCCL_SOCKET_IFNAME on a
// front-end Ethernet port, say): then the node's GPUs share it, at its rate or the socket stack's,
// whichever is lower.
enum class FabricTransport { kRdma, kSocket };
inline constexpr BitRate kSocketThroughput = BitRate::gbps(40);

// A NIC that its GPU reaches through host memory (the NIC on the other CPU socket, so NCCL turns
// GPUDirect RDMA off, or GPUDirect off altogether) moves data at half its rate each way: NCCL over
// 100 Gb/s InfiniBand without GPUDirect reached 6 GB/s of bus bandwidth, half of the 12 expected
// (NVIDIA/nccl issue 465; not in reference.md, the nearest measurement found).
inline constexpr double kHostStagedShare = 0.5;

// NCCL's most queue pairs per connection (NCCL_IB_MAX_QPS, src/transport/net_ib.cc).
inline constexpr std::int32_t kMostQueuePairsPerConnection = 128;

struct HostsConfig {
  FabricTransport transport = FabricTransport::kRdma;
  std::optional<BitRate> socket_interface;  // with sockets: one interface per node at this rate
  bool gpudirect = true;
  std::vector<std::int32_t> nics_on_other_socket;  // ranks whose NIC is on the other CPU socket
  // NCCL_IB_QPS_PER_CONNECTION over RDMA (connection_queue_pair in collective_algorithm.hpp).
  std::int32_t queue_pairs_per_connection = 1;
};

// The preset named by `servers` with its overrides applied; empty for an unknown preset.
[[nodiscard]] std::optional<NodePreset> server_node(const ServersConfig& servers);

// The ranks (of `ranks`) whose NIC their data reaches through host memory.
[[nodiscard]] std::vector<std::int32_t> host_staged_nics(const HostsConfig& hosts,
                                                         std::int32_t ranks);

}  // namespace lockstep
