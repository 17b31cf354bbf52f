// NCCL's own choice of algorithm, protocol and channels for a collective (NVIDIA/nccl 2.26.2): its
// cost model (src/graph/tuning.cc, ncclTopoTuneModel and ncclTopoGetAlgoTime) over the channels and
// bandwidths its topology search finds (src/graph/search.cc, ncclTopoCompute; src/graph/connect.cc,
// ncclTopoPostset), and the channels it runs a size on (src/enqueue.cc, topoGetAlgoInfo). NCCL runs
// the pair its model rates fastest, which is not always the fastest in fact: across four H100
// nodes it runs NVLS-Tree from 4 MiB to 64 MiB where the ring would be faster. lockstep runs that
// pair and times it on its fabric (`lockstep nccl-tests --choice nccl`, the default).
//
// The search is worked through for what lockstep's presets are: GPUs on NVSwitches, one NIC per GPU
// behind a PCIe switch (GPUDirect RDMA), InfiniBand or RoCE with no extra NIC latency:
// - one node (the network is trimmed away): the ring's speed is the fastest of NCCL's intra-node
//   speeds whose channels fill the NVLink best (6 x 60 GB/s on H100, 6 x 40 on A100), its channels
//   then doubled at half the speed (12 x 30, 12 x 20); the tree takes the ring's channels at the
//   speed they fit (12 x 30, 12 x 20); NVLS one channel per GPU at the speed where the head's
//   link carries its channels and the multicast, (channels + 1) x speed (8 x 40 on H100);
// - several nodes: the ring and the tree take one channel per NIC at the fastest inter-node speed
//   the GPU's path to its NIC carries (8 x 48 with 400 Gb/s NICs on PCIe Gen5, 8 x 24 with
//   200 Gb/s NICs); the tree's speed inside a node is then raised while the NVLink carries it and
//   it stays below twice the speed between nodes (30 on A100); NVLS takes as many channels, up to
//   one per GPU, as fill the head's link best (8 x 40 on H100) at 48 between nodes;
// - a tree whose channels leave the NVLink less than full (the NICs are the bottleneck) comes out
//   of the search in NCCL's plain tree pattern, which its model rates 0.85 of the balanced tree's:
//   the logged model times of NVIDIA/nccl#1453 (3 x 8 H100, 200 Gb/s NICs) need that factor and
//   no whole channel count fits them without it. That rule is read off the logs, not the search.
// - the communicator's channels: twice the ring's (or tree's, the fewer), 24 on one H100 or A100
//   node and 16 across nodes; NVLS's 16 on Hopper (NVLS_NCHANNELS_SM90).
// Verified against NCCL's own logged model times (tests/unit/nccl_tuner_test.cpp): NVIDIA/nccl#1595
// (8 x H100, Ring/Simple) and #1453 (Tree/LL and Tree/LL128) to the digits printed, and the
// choices NCCL reports for 8 x H100 (nccl-tests#309) and 64 x 8 H200 (nccl#1752).
//
// Not modelled, so not chosen: PAT (one GPU per node), NVLS for all-gather and reduce-scatter,
// CollNet (no figures for its graph here). All-to-all and send/recv are NCCL's point-to-point
// path, which its model does not rate. Units: Bytes, Time, BitRate; NCCL's model itself runs in
// float GB/s and microseconds, as NCCL computes it, so that its logged times come out.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "models/collective/collective_op.hpp"
#include "models/collective/nccl_protocol.hpp"
#include "sim/core/bit_rate.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

struct NcclSystem {
  std::int32_t compute_capability = 90;  // 80 Ampere, 90 Hopper
  bool amd_cpus = false;  // the host CPUs' maker, which NCCL reads for its proxies' costs
  std::int32_t nodes = 1;
  std::int32_t ranks_per_node = 1;
  BitRate nvlink;        // NCCL's NVLink figure per GPU: links x per-link bandwidth
  BitRate gpu_nic_pcie;  // the PCIe link between a GPU and its NIC
  BitRate nic;           // each NIC's line rate
  bool nvls = false;     // the NVSwitches reduce (NVLink SHARP)
};

// Whether NCCL's model rates `op` at all: not all-to-all and send/recv, NCCL's point-to-point path.
[[nodiscard]] constexpr bool nccl_rates(CollectiveOp op) {
  return op != CollectiveOp::kAllToAll && op != CollectiveOp::kSendRecv;
}

// One of the search's graphs: its channels and their bandwidth inside and between nodes, in NCCL's
// GB/s per channel.
struct NcclGraph {
  std::int32_t channels = 0;
  float bw_intra = 0.0F;
  float bw_inter = 0.0F;
  bool tree_pattern = false;  // NCCL_TOPO_PATTERN_TREE rather than the balanced tree
};

struct NcclGraphs {
  NcclGraph ring;
  NcclGraph tree;
  NcclGraph nvls;                  // channels 0 where NVLS cannot run
  std::int32_t channels = 0;       // the communicator's (comm->nChannels)
  std::int32_t nvls_channels = 0;  // comm->nvlsChannels
};

[[nodiscard]] NcclGraphs nccl_graphs(const NcclSystem& system);

// NCCL's modelled bus bandwidth of `algorithm` with `protocol` over the graph's channels, in its
// GB/s (ncclTopoTuneModel: channels x speed, then the protocol's ceilings: LL's llMaxBw, LL128's
// per-channel limits, the tree's), before the tree's per-size correction; empty where NCCL's model
// does not rate the pair.
[[nodiscard]] std::optional<float> nccl_bus_bandwidth(const NcclSystem& system,
                                                      const NcclGraphs& graphs, CollectiveOp op,
                                                      NcclAlgorithm algorithm,
                                                      NcclProtocol protocol);

// The channels NCCL runs `bytes` of `algorithm` with `protocol` on (enqueue.cc): the
// communicator's, fewer while each channel's threads would have less than their threshold of bytes
// (LL and LL128 8 bytes a thread, Simple 64, the ring's LL times the ranks); NVLS's own for NVLS
// and NVLS-Tree.
[[nodiscard]] std::int32_t nccl_channels(const NcclSystem& system, const NcclGraphs& graphs,
                                         NcclAlgorithm algorithm, NcclProtocol protocol,
                                         Bytes bytes);

// NCCL's modelled time for `bytes` of `op` (NCCL's count: the whole buffer of an all-reduce, the
// gathered or scattered whole of an all-gather or reduce-scatter) with one algorithm and protocol;
// empty where NCCL's model does not rate the pair (not enabled there, or no bandwidth).
[[nodiscard]] std::optional<Duration> nccl_model_time(const NcclSystem& system,
                                                      const NcclGraphs& graphs, CollectiveOp op,
                                                      NcclAlgorithm algorithm,
                                                      NcclProtocol protocol, Bytes bytes);

struct NcclTunerChoice {
  NcclAlgorithm algorithm = NcclAlgorithm::kRing;
  NcclProtocol protocol = NcclProtocol::kSimple;
  Duration model_time;
  std::int32_t channels = 0;  // nccl_channels for the size
};

// Among `pairs`, the one NCCL's model rates fastest, the first in NCCL's order (Tree, Ring, NVLS,
// NVLS-Tree; LL, LL128, Simple) on a tie. Empty when it rates none of them: all-to-all, send/recv,
// or only algorithms it has no graph for here (CollNetDirect, lockstep's Hierarchical).
[[nodiscard]] std::optional<NcclTunerChoice> nccl_tuner_choice(
    const NcclSystem& system, CollectiveOp op, Bytes bytes,
    const std::vector<std::pair<NcclAlgorithm, NcclProtocol>>& pairs);

}  // namespace lockstep
