#include "models/cluster/collective_timing.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "models/collective/channel_rings.hpp"
#include "models/collective/collnet_direct_all_reduce.hpp"
#include "models/collective/communicator.hpp"
#include "models/collective/double_binary_tree.hpp"
#include "models/collective/hierarchical_all_reduce.hpp"
#include "models/collective/nccl_choice.hpp"
#include "models/collective/nvls_all_reduce.hpp"
#include "models/collective/nvls_loops.hpp"
#include "models/collective/nvls_tree_all_reduce.hpp"
#include "models/collective/tree_all_reduce.hpp"
#include "models/gpu/gpu_spec.hpp"
#include "sim/core/discarding_backend.hpp"
#include "sim/core/quantity.hpp"

namespace lockstep {
namespace {

// Stops the run when the caller asks (Ctrl-C).
class StopWhenAsked final : public RunMonitor {
 public:
  explicit StopWhenAsked(const std::function<bool()>& stop) : stop_(stop) {}
  void on_progress(Simulator& sim) override {
    if (stop_()) sim.stop();
  }

 private:
  const std::function<bool()>& stop_;
};

}  // namespace

CommunicatorLayout communicator_of(const CollectiveSetup& setup, std::int32_t cluster_ranks) {
  std::vector<std::int32_t> members = setup.communicator;
  if (members.empty()) {
    for (std::int32_t r = 0; r < cluster_ranks; ++r) members.push_back(r);
  }
  return communicator_layout(members, cluster_ranks,
                             setup.cluster.servers ? setup.cluster.servers->gpus : 1);
}

std::optional<TimedCollective> time_collective(const CollectiveSetup& setup, const Routing& fabric,
                                               CollectiveOp op, Bytes size, NcclAlgorithm algorithm,
                                               NcclProtocol protocol,
                                               const std::function<bool()>& stop,
                                               std::optional<Duration> longest) {
  if (algorithm != NcclAlgorithm::kRing && op != CollectiveOp::kAllReduce) {
    throw std::invalid_argument("the " + std::string(algorithm_name(algorithm)) +
                                " algorithm runs all_reduce only");
  }
  // The cluster's ranks, and the communicator's, which the algorithms number node-major.
  const std::int32_t cluster_ranks = fabric.topology().endpoint_count();
  const CommunicatorLayout layout = communicator_of(setup, cluster_ranks);
  const std::int32_t ranks = static_cast<std::int32_t>(layout.members.size());
  const std::int32_t gpus = layout.gpus_per_node;
  const std::int32_t nodes = layout.nodes;
  const std::optional<NodePreset>& servers = setup.cluster.servers;
  if (algorithm == NcclAlgorithm::kNvls || algorithm == NcclAlgorithm::kNvlsTree) {
    if (!switch_algorithm_available(algorithm, servers && servers->nvlink_sharp, nodes, gpus)) {
      throw std::invalid_argument(
          algorithm == NcclAlgorithm::kNvls
              ? "NVLS needs one node whose NVSwitch reduces (dgx-h100, dgx-h200), with at least "
                "two of its GPUs; across nodes NVLSTree runs there"
              : "NVLSTree needs two or more nodes whose NVSwitches reduce (dgx-h100, dgx-h200), "
                "with at least two GPUs of the communicator on each");
    }
    if (protocol != NcclProtocol::kSimple) {
      throw std::invalid_argument(std::string(algorithm_name(algorithm)) +
                                  " runs with the Simple protocol only");
    }
  }
  if (algorithm == NcclAlgorithm::kCollNetDirect &&
      (nodes < 2 || protocol != NcclProtocol::kSimple)) {
    throw std::invalid_argument(
        "CollNetDirect runs across two or more nodes, with the Simple protocol only");
  }
  Simulator sim;
  DiscardingBackend discard;
  Cluster cluster(sim, setup.cluster, fabric, discard);
  CommunicatorNetwork communicator(cluster.network(), layout.members);
  Network* network = &communicator;
  // Every hop between nodes needs a fabric path, else the collective would wait forever.
  auto check_reachable = [&](std::int32_t local_a, std::int32_t local_b) {
    const std::int32_t a = layout.members[static_cast<std::size_t>(local_a)];
    const std::int32_t b = layout.members[static_cast<std::size_t>(local_b)];
    if (!cluster.connected(a, b)) {
      throw std::invalid_argument("ranks " + std::to_string(a) + " and " + std::to_string(b) +
                                  " have no path between them over the fabric");
    }
  };
  const std::optional<NcclRing> nccl =
      servers ? std::optional<NcclRing>(nccl_ring(*servers, nodes, gpus,
                                                  fabric.topology().nic_rate(), op, protocol, size))
              : std::nullopt;
  const std::int32_t channels = setup.channels > 0 ? setup.channels : nccl ? nccl->channels : 1;
  // On a bare fabric every endpoint is its own node, so the rail-aligned rings are the
  // communicator's order on every channel.
  const std::vector<std::vector<std::int32_t>> channel_rings =
      rail_aligned_rings(nodes, gpus, channels);
  // The communicator's trees, of which the collective runs the first of NCCL's channel order.
  const std::vector<std::vector<std::int32_t>> communicator_trees =
      double_binary_trees(nodes, gpus);
  const std::int32_t tree_channels =
      setup.channels > 0 ? setup.channels
      : servers          ? nccl_channels_for(*servers, nodes, gpus, fabric.topology().nic_rate(),
                                             NcclAlgorithm::kTree, protocol, size)
                         : static_cast<std::int32_t>(communicator_trees.size());
  const std::vector<std::vector<std::int32_t>> trees(
      communicator_trees.begin(),
      communicator_trees.begin() +
          std::min<std::ptrdiff_t>(tree_channels,
                                   static_cast<std::ptrdiff_t>(communicator_trees.size())));
  if (algorithm == NcclAlgorithm::kHierarchical) {
    // Across nodes, the GPUs of one index form a ring.
    for (std::int32_t r = 0; r < ranks; ++r) check_reachable(r, (r + gpus) % ranks);
  } else if (algorithm == NcclAlgorithm::kRing && op == CollectiveOp::kAllToAll) {
    // Every rank to every other, across rails through the relay on the receiver's rail (PXN).
    for (std::int32_t r = 0; r < ranks; ++r) {
      for (std::int32_t q = 0; q < ranks; ++q) {
        if (r / gpus == q / gpus) continue;
        check_reachable(setup.pxn ? r / gpus * gpus + q % gpus : r, q);
      }
    }
  } else if (algorithm == NcclAlgorithm::kRing) {
    for (const std::vector<std::int32_t>& ring : channel_rings) {
      for (std::size_t i = 0; i < ring.size(); ++i)
        check_reachable(ring[i], ring[(i + 1) % ring.size()]);
    }
  } else if (algorithm == NcclAlgorithm::kNvlsTree) {
    // GPU h of every node talks to GPU h of the others over the fabric.
    for (std::int32_t r = 0; r < ranks; ++r) check_reachable(r, (r + gpus) % ranks);
  } else if (algorithm == NcclAlgorithm::kCollNetDirect) {
    // GPU h of every node reaches the switch that GPU h of every other node reaches.
    for (std::int32_t r = 0; r < ranks; ++r) {
      for (std::int32_t other = r % gpus; other < ranks; other += gpus) {
        if (other != r) check_reachable(r, other);
      }
    }
  } else if (algorithm == NcclAlgorithm::kTree) {
    for (const std::vector<std::int32_t>& parents : trees) {
      for (std::size_t r = 0; r < parents.size(); ++r) {
        if (parents[r] >= 0) check_reachable(static_cast<std::int32_t>(r), parents[r]);
      }
    }
  }
  const bool amd_cpus = servers && servers->cpu == CpuVendor::kAmd;
  ProtocolOverheads overheads{protocol, gpus, {}, {}, setup.pxn};
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
  std::unique_ptr<Collective> collective;
  switch (algorithm) {
    case NcclAlgorithm::kRing:
      collective =
          std::make_unique<RingCollective>(sim, *network, channel_rings, op, size, overheads);
      break;
    case NcclAlgorithm::kTree:
      collective = std::make_unique<TreeAllReduce>(sim, *network, trees, size, overheads);
      break;
    case NcclAlgorithm::kNvls:
      collective = std::make_unique<NvlsAllReduce>(sim, *network, size, overheads);
      break;
    case NcclAlgorithm::kNvlsTree:
      collective = std::make_unique<NvlsTreeAllReduce>(sim, *network, nodes, gpus, size, overheads);
      break;
    case NcclAlgorithm::kHierarchical:
      collective =
          std::make_unique<HierarchicalAllReduce>(sim, *network, nodes, gpus, size, overheads);
      break;
    case NcclAlgorithm::kCollNetDirect:
      collective =
          std::make_unique<CollNetDirectAllReduce>(sim, *network, nodes, gpus, size, overheads);
      break;
  }
  // Periodic sampling keeps a packet network busy forever, so the run stops at the collective's
  // end rather than when nothing is left to do.
  collective->when_finished([&sim] { sim.stop(); });
  StopWhenAsked stop_when_asked(stop);
  // Often enough for Ctrl-C to answer within a fraction of a second.
  constexpr std::uint64_t kMonitorPeriodEvents = 1 << 16;
  sim.set_monitor(&stop_when_asked, kMonitorPeriodEvents);
  collective->start();
  const Time started = sim.now();
  const RunOutcome outcome = sim.run(longest ? started + *longest : Time::max());
  if (!collective->finished()) {
    if (stop()) return std::nullopt;
    if (outcome == RunOutcome::kDrained) {
      // Nothing left that could move it: a transfer waits for one that was never sent.
      throw std::logic_error(std::string(algorithm_name(algorithm)) + "/" +
                             std::string(protocol_name(protocol)) + " " +
                             std::string(collective_name(op)) + " of " + format(size) +
                             " stopped before its end with nothing left to run");
    }
    return TimedCollective{false,          *longest, sim.now(),   sim.events_processed(),
                           layout.members, {},       channels_run};
  }
  return TimedCollective{true,           collective->finished_at() - collective->started_at(),
                         sim.now(),      sim.events_processed(),
                         layout.members, collective->rank_transfer_times(),
                         channels_run};
}

std::optional<FastestCollective> time_fastest(
    const CollectiveSetup& setup, const Routing& fabric, CollectiveOp op, Bytes size,
    const std::vector<std::pair<NcclAlgorithm, NcclProtocol>>& pairs,
    const std::function<bool()>& stop) {
  std::optional<FastestCollective> fastest;
  std::uint64_t events = 0;
  for (const auto& [algorithm, protocol] : pairs) {
    std::optional<TimedCollective> run =
        time_collective(setup, fabric, op, size, algorithm, protocol, stop,
                        fastest ? std::optional<Duration>(fastest->timed.time) : std::nullopt);
    if (!run) return std::nullopt;
    events += run->events;
    if (run->completed && (!fastest || run->time < fastest->timed.time)) {
      fastest = FastestCollective{std::move(*run), algorithm, protocol, 0};
    }
  }
  if (fastest) fastest->events = events;
  return fastest;
}

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

}  // namespace lockstep
