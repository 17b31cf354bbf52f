// NCCL's three protocols as the costs they add to a collective, from NCCL's own tuning model
// (NVIDIA/nccl src/graph/tuning.cc, figures in reference.md section 3):
// - how many bytes move per byte of data: LL writes a 4-byte flag with every 4 bytes (1/2 of the
//   wire is data), LL128 an 8-byte flag per 128-byte line (120/128), Simple none (1);
// - a base latency per collective (us, LL / LL128 / Simple): ring 6.6 / 14.0 / 8.4, tree 6.8 /
//   14.0 / 8.4;
// - a latency per step: the ring's over the network 2.7 / 4.0 / 14.0 us, over NVLink 0.6 / 1.9 /
//   3.4 us (reference.md); the tree's over the network 5.0 / 8.5 us and over NVLink 0.6 / 1.25 us
//   with LL and LL128 (hwLat, 2.19 on). The tree's Simple figures (28 us) are, by NCCL's own
//   comment, the time of a whole 256 KiB chunk, which the network model carries itself: its steps
//   are charged as the ring's.
// The network model already carries every transfer over its links with their propagation and
// serialization, which is what LL, the leanest protocol, costs on the wire; so a step adds the
// protocol's per-step latency beyond the ring's LL (ring: network 0 / 1.3 / 11.3 us, NVLink 0 /
// 1.3 / 2.8 us; tree: network 2.3 / 5.8 / 11.3 us, NVLink 0 / 0.65 / 2.8 us).
// NVLS (in-switch reduction, nvls_all_reduce.hpp) runs with Simple only: NCCL's model gives it its
// NVLink latency, 25 us, and no base latency; lockstep charges those 25 us before the transfers, as
// the base latency. Its kernel moves the data in NCCL's loops (nvls_loops.hpp), each a step of its
// warp groups with Simple's NVLink step latency (2.8 us beyond the wire), between its scatter and
// gather warps' copies of the first and the last loop through the GPU's memory. Its transfers reach
// 0.85 of the NVLink bandwidth (NCCL's nvlsEfficiency for Hopper, src/graph/tuning.cc), charged as
// wire bytes.
// NVLS-Tree (nvls_tree_all_reduce.hpp), Simple only: NCCL's model (tuning.cc, 2.19 on) gives it
// the NVLS latency inside the node, 23 us, charged first as the base latency, and 14 us per step
// between nodes (hwLat NET), of which the network model carries LL's 2.7: 11.3 us beyond the wire.
// Inside a node its loops are steps as NVLS's. Its transfers inside a node go through the switch
// at NVLS's efficiency; those between nodes are Simple's, at the NIC's full goodput.
// CollNet Direct (collnet_direct_all_reduce.hpp), Simple only: no base latency; NCCL's hwLat for it
// is 3.7 us over NVLink (issue NVIDIA/nccl#1334's table, 2.19 on) and 31 us for the network's
// reduction (2.23 on), charged beyond the wire: 3.1 and 28.3 us.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "sim/core/time.hpp"

namespace lockstep {

enum class NcclProtocol { kLL, kLL128, kSimple };
// kHierarchical is lockstep's textbook two-level all-reduce (hierarchical_all_reduce.hpp), not
// one of NCCL's: it is charged the ring's costs and only runs when named.
// kCollNetDirect is NCCL's all-reduce through switches that reduce (InfiniBand SHARP), which NCCL
// runs only with NCCL_COLLNET_ENABLE=1 (collnet_direct_all_reduce.hpp).
enum class NcclAlgorithm { kRing, kTree, kNvls, kNvlsTree, kHierarchical, kCollNetDirect };

struct ProtocolCost {
  double data_per_wire_byte = 1.0;
  double nvlink_efficiency = 1.0;  // the share of NVLink's rate a transfer inside a node reaches
  Duration base_latency;
  Duration network_step;  // beyond the wire, per step whose transfer crossed the network
  Duration nvlink_step;   // beyond the wire, per step whose transfer stayed inside a node
};

[[nodiscard]] ProtocolCost protocol_cost(NcclProtocol protocol, NcclAlgorithm algorithm);

// The most bus bandwidth LL reaches, NCCL's llMaxBw (tuning.cc), in GB/s of nccl-tests' busbw.
// Across nodes LL's steps go through NCCL's proxy threads, and NCCL reads the figure by the host
// CPUs' maker (2.19 on): 39.0 GB/s on two nodes and 20.4 on more with Intel CPUs, 22.5 and 19.0
// with AMD's. On one node it reads it by the GPUs' generation: 87.7 GB/s for Ampere, and for
// Hopper 141.0 in NCCL's tables that have a Blackwell row (2.19's had 87.7): lockstep models the
// NCCL of its H100 sweeps, 2.26.
[[nodiscard]] double ll_bus_bandwidth_ceiling(std::int32_t nodes, bool amd_cpus, bool hopper);

// What a step of a ring that crosses nodes costs at least, NCCL's net overhead (tuning.cc, 2.19
// on: "Inter-node rings still have to launch nsteps * net overhead"): 1 us with Intel CPUs, 2 us
// with AMD's, three times that with Simple; NCCL takes the larger of it and the step's NVLink
// latency for every step inside a node. Returned beyond the wire, as ProtocolCost's steps are:
// less the 0.6 us the NVLink path itself takes (LL's NVLink step). Zero on one node.
[[nodiscard]] Duration ring_step_overhead(NcclProtocol protocol, std::int32_t nodes, bool amd_cpus);

// NCCL's spellings: "LL", "LL128", "Simple"; "Ring", "Tree", "NVLS", "NVLSTree", "CollNetDirect"
// (case-insensitive, as NCCL reads them).
[[nodiscard]] std::string_view protocol_name(NcclProtocol protocol);
[[nodiscard]] std::optional<NcclProtocol> protocol_named(std::string_view name);
[[nodiscard]] std::string_view algorithm_name(NcclAlgorithm algorithm);
[[nodiscard]] std::optional<NcclAlgorithm> algorithm_named(std::string_view name);

// What NCCL_ALGO and NCCL_PROTO allow, in their syntax: a comma-separated list of names, or "^"
// followed by names to exclude; empty allows every one (of NCCL's: Hierarchical only when
// listed; CollNetDirect only when listed or `collnet` says NCCL_COLLNET_ENABLE=1). Empty optional
// for an unknown name.
[[nodiscard]] std::optional<std::vector<NcclAlgorithm>> allowed_algorithms(std::string_view spec,
                                                                           bool collnet = false);
[[nodiscard]] std::optional<std::vector<NcclProtocol>> allowed_protocols(std::string_view spec);

}  // namespace lockstep
