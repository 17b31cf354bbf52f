#include "models/cluster/nccl_collective.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "models/collective/channel_rings.hpp"
#include "models/collective/collnet_direct_all_reduce.hpp"
#include "models/collective/double_binary_tree.hpp"
#include "models/collective/hierarchical_all_reduce.hpp"
#include "models/collective/nccl_choice.hpp"
#include "models/collective/nvls_all_reduce.hpp"
#include "models/collective/nvls_loops.hpp"
#include "models/collective/nvls_tree_all_reduce.hpp"
#include "models/collective/ring_collective.hpp"
#include "models/collective/tree_all_reduce.hpp"
#include "models/gpu/gpu_spec.hpp"

namespace lockstep {

std::int32_t nccl_channels_for(const NodePreset& preset, std::int32_t nodes,
                               std::int32_t ranks_per_node, BitRate nic, NcclAlgorithm algorithm,
                               NcclProtocol protocol, Bytes size) {
  const NcclSystem system = nccl_system(preset, nodes, ranks_per_node, nic);
  return nccl_channels(system, nccl_graphs(system), algorithm, protocol, size);
}

NcclRing nccl_ring(const NodePreset& preset, std::int32_t nodes, std::int32_t ranks_per_node,
                   BitRate nic, CollectiveOp op, NcclProtocol protocol, Bytes size) {
  if (!nccl_rates(op)) return NcclRing{std::min(preset.gpus, kMostChannels), std::nullopt};
  const NcclSystem system = nccl_system(preset, nodes, ranks_per_node, nic);
  const NcclGraphs graphs = nccl_graphs(system);
  NcclRing ring{nccl_channels(system, graphs, NcclAlgorithm::kRing, protocol, size), std::nullopt};
  if (const std::optional<float> bus_bandwidth =
          nccl_bus_bandwidth(system, graphs, op, NcclAlgorithm::kRing, protocol)) {
    ring.channel_ceiling = BitRate::bps(std::llround(static_cast<double>(*bus_bandwidth) * 8e9 /
                                                     static_cast<double>(graphs.channels)));
  }
  return ring;
}

NcclSystem nccl_system(const NodePreset& preset, std::int32_t nodes, std::int32_t ranks_per_node,
                       BitRate nic) {
  return NcclSystem{preset.compute_capability,
                    preset.cpu == CpuVendor::kAmd,
                    nodes,
                    ranks_per_node,
                    preset.nvlink_bandwidth,
                    preset.gpu_nic_pcie,
                    nic,
                    preset.nvlink_sharp && ranks_per_node > 2};
}

std::pair<NcclAlgorithm, NcclProtocol> nccl_default_choice(const NcclCommunicator& communicator,
                                                           CollectiveOp op, Bytes size) {
  const std::pair fallback{NcclAlgorithm::kRing, NcclProtocol::kSimple};
  const std::optional<NodePreset>& servers = communicator.servers;
  if (!servers) return fallback;
  const std::vector pairs =
      runnable_pairs(op, *allowed_algorithms(""), *allowed_protocols(""), servers->nvlink_sharp,
                     communicator.nodes, communicator.gpus);
  const std::optional<NcclTunerChoice> choice = nccl_tuner_choice(
      nccl_system(*servers, communicator.nodes, communicator.gpus, communicator.nic), op, size,
      pairs);
  return choice ? std::pair{choice->algorithm, choice->protocol} : fallback;
}

NcclCollective make_nccl_collective(
    Simulator& sim, Network& network, const NcclCommunicator& communicator, CollectiveOp op,
    Bytes size, NcclAlgorithm algorithm, NcclProtocol protocol,
    const std::function<void(std::int32_t, std::int32_t)>& must_reach) {
  const std::int32_t nodes = communicator.nodes;
  const std::int32_t gpus = communicator.gpus;
  const std::int32_t ranks = nodes * gpus;
  const std::optional<NodePreset>& servers = communicator.servers;
  const auto reach = [&must_reach](std::int32_t a, std::int32_t b) {
    if (must_reach) must_reach(a, b);
  };
  const std::optional<NcclRing> nccl =
      servers ? std::optional<NcclRing>(
                    nccl_ring(*servers, nodes, gpus, communicator.nic, op, protocol, size))
              : std::nullopt;
  const std::int32_t channels = communicator.channels > 0 ? communicator.channels
                                : nccl                    ? nccl->channels
                                                          : 1;
  // On a bare fabric every endpoint is its own node, so the rail-aligned rings are the
  // communicator's order on every channel.
  const std::vector<std::vector<std::int32_t>> channel_rings =
      rail_aligned_rings(nodes, gpus, channels);
  // The communicator's trees, of which the collective runs the first of NCCL's channel order.
  const std::vector<std::vector<std::int32_t>> communicator_trees =
      double_binary_trees(nodes, gpus);
  const std::int32_t tree_channels =
      communicator.channels > 0 ? communicator.channels
      : servers ? nccl_channels_for(*servers, nodes, gpus, communicator.nic, NcclAlgorithm::kTree,
                                    protocol, size)
                : static_cast<std::int32_t>(communicator_trees.size());
  const std::vector<std::vector<std::int32_t>> trees(
      communicator_trees.begin(),
      communicator_trees.begin() +
          std::min<std::ptrdiff_t>(tree_channels,
                                   static_cast<std::ptrdiff_t>(communicator_trees.size())));
  if (algorithm == NcclAlgorithm::kHierarchical) {
    // Across nodes, the GPUs of one index form a ring.
    for (std::int32_t r = 0; r < ranks; ++r) reach(r, (r + gpus) % ranks);
  } else if (algorithm == NcclAlgorithm::kRing && op == CollectiveOp::kAllToAll) {
    // Every rank to every other, across rails through the relay on the receiver's rail (PXN).
    for (std::int32_t r = 0; r < ranks; ++r) {
      for (std::int32_t q = 0; q < ranks; ++q) {
        if (r / gpus == q / gpus) continue;
        reach(communicator.pxn ? r / gpus * gpus + q % gpus : r, q);
      }
    }
  } else if (algorithm == NcclAlgorithm::kRing) {
    for (const std::vector<std::int32_t>& ring : channel_rings) {
      for (std::size_t i = 0; i < ring.size(); ++i) reach(ring[i], ring[(i + 1) % ring.size()]);
    }
  } else if (algorithm == NcclAlgorithm::kNvlsTree) {
    // GPU h of every node talks to GPU h of the others over the fabric.
    for (std::int32_t r = 0; r < ranks; ++r) reach(r, (r + gpus) % ranks);
  } else if (algorithm == NcclAlgorithm::kCollNetDirect) {
    // GPU h of every node reaches the switch that GPU h of every other node reaches.
    for (std::int32_t r = 0; r < ranks; ++r) {
      for (std::int32_t other = r % gpus; other < ranks; other += gpus) {
        if (other != r) reach(r, other);
      }
    }
  } else if (algorithm == NcclAlgorithm::kTree) {
    for (const std::vector<std::int32_t>& parents : trees) {
      for (std::size_t r = 0; r < parents.size(); ++r) {
        if (parents[r] >= 0) reach(static_cast<std::int32_t>(r), parents[r]);
      }
    }
  }
  const bool amd_cpus = servers && servers->cpu == CpuVendor::kAmd;
  ProtocolOverheads overheads{protocol, gpus, {}, {}, communicator.pxn};
  overheads.queue_pairs_per_connection = communicator.queue_pairs_per_connection;
  if (servers) {
    if (const std::optional<GpuSpec> gpu = gpu_spec(servers->gpu)) {
      overheads.gpu_memory = gpu->hbm_measured;
    }
  }
  if (algorithm == NcclAlgorithm::kRing) {
    overheads.nvlink_step_floor = ring_step_overhead(protocol, nodes, amd_cpus);
  }
  if (algorithm == NcclAlgorithm::kRing && nccl && nccl->channel_ceiling) {
    overheads.network_stream_ceiling = nccl->channel_ceiling;
    overheads.nvlink_stream_ceiling = nccl->channel_ceiling;
  } else if (protocol == NcclProtocol::kLL) {
    const bool hopper = servers && servers->compute_capability >= 90;
    const double ceiling = ll_bus_bandwidth_ceiling(nodes, amd_cpus, hopper);
    // busbw is what each rank sends per second, over a ring's channels; a tree all-reduce's is
    // twice its algbw, what each rank sends up (or down) the communicator's trees. A tree's share
    // of the ceiling is its own, however few of the communicator's trees the size runs on.
    const std::size_t streams = algorithm == NcclAlgorithm::kRing   ? channel_rings.size()
                                : algorithm == NcclAlgorithm::kTree ? 2 * communicator_trees.size()
                                                                    : 0;
    if (streams > 0) {
      const BitRate per_stream =
          BitRate::bps(static_cast<std::int64_t>(ceiling * 8e9 / static_cast<double>(streams)));
      (nodes > 1 ? overheads.network_stream_ceiling : overheads.nvlink_stream_ceiling) = per_stream;
    }
  }
  const std::int32_t channels_run =
      algorithm == NcclAlgorithm::kRing   ? static_cast<std::int32_t>(channel_rings.size())
      : algorithm == NcclAlgorithm::kTree ? static_cast<std::int32_t>(trees.size())
      : algorithm == NcclAlgorithm::kNvls || algorithm == NcclAlgorithm::kNvlsTree
          ? kNvlsChannelsSm90
          : 1;
  NcclCollective made{nullptr, channels_run};
  std::unique_ptr<Collective>& collective = made.collective;
  switch (algorithm) {
    case NcclAlgorithm::kRing:
      collective =
          std::make_unique<RingCollective>(sim, network, channel_rings, op, size, overheads);
      break;
    case NcclAlgorithm::kTree:
      collective = std::make_unique<TreeAllReduce>(sim, network, trees, size, overheads);
      break;
    case NcclAlgorithm::kNvls:
      collective = std::make_unique<NvlsAllReduce>(sim, network, size, overheads);
      break;
    case NcclAlgorithm::kNvlsTree:
      collective = std::make_unique<NvlsTreeAllReduce>(sim, network, nodes, gpus, size, overheads);
      break;
    case NcclAlgorithm::kHierarchical:
      collective =
          std::make_unique<HierarchicalAllReduce>(sim, network, nodes, gpus, size, overheads);
      break;
    case NcclAlgorithm::kCollNetDirect:
      collective =
          std::make_unique<CollNetDirectAllReduce>(sim, network, nodes, gpus, size, overheads);
      break;
  }
  return made;
}

}  // namespace lockstep
