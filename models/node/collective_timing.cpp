#include "models/node/collective_timing.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

#include "models/collective/channel_rings.hpp"
#include "models/collective/communicator.hpp"
#include "models/collective/double_binary_tree.hpp"
#include "models/collective/hierarchical_all_reduce.hpp"
#include "models/collective/nvls_all_reduce.hpp"
#include "models/collective/tree_all_reduce.hpp"
#include "models/node/cluster_network.hpp"
#include "models/node/nvlink_domain.hpp"
#include "sim/core/discarding_backend.hpp"

namespace lockstep {
namespace {

// Passes progress on to the caller's monitor, and stops the run when the caller asks (Ctrl-C).
class StopWhenAsked final : public RunMonitor {
 public:
  StopWhenAsked(RunMonitor* progress, const std::function<bool()>& stop)
      : progress_(progress), stop_(stop) {}
  void on_progress(Simulator& sim) override {
    if (progress_ != nullptr) progress_->on_progress(sim);
    if (stop_()) sim.stop();
  }

 private:
  RunMonitor* progress_;
  const std::function<bool()>& stop_;
};

}  // namespace

CommunicatorLayout communicator_of(const CollectiveSetup& setup, std::int32_t cluster_ranks) {
  std::vector<std::int32_t> members = setup.communicator;
  if (members.empty()) {
    for (std::int32_t r = 0; r < cluster_ranks; ++r) members.push_back(r);
  }
  return communicator_layout(members, cluster_ranks, setup.node ? setup.node->gpus : 1);
}

std::optional<TimedCollective> time_collective(const CollectiveSetup& setup, const Routing& fabric,
                                               CollectiveOp op, Bytes size, NcclAlgorithm algorithm,
                                               NcclProtocol protocol, RunMonitor* monitor,
                                               const std::function<bool()>& stop) {
  if (algorithm != NcclAlgorithm::kRing && op != CollectiveOp::kAllReduce) {
    throw std::invalid_argument("the " + std::string(algorithm_name(algorithm)) +
                                " algorithm runs all_reduce only");
  }
  const Topology& topology = fabric.topology();
  // The cluster's ranks, and the communicator's, which the algorithms number node-major.
  const std::int32_t cluster_ranks = topology.endpoint_count();
  const std::int32_t cluster_gpus = setup.node ? setup.node->gpus : 1;
  const CommunicatorLayout layout = communicator_of(setup, cluster_ranks);
  const std::int32_t ranks = static_cast<std::int32_t>(layout.members.size());
  const std::int32_t gpus = layout.gpus_per_node;
  const std::int32_t nodes = layout.nodes;
  if (algorithm == NcclAlgorithm::kNvls) {
    if (!setup.node || !setup.node->nvlink_sharp || nodes != 1) {
      throw std::invalid_argument(
          "NVLS needs one node whose NVSwitch reduces (dgx-h100, dgx-h200); across nodes it "
          "needs CollNet, which lockstep does not model");
    }
    if (protocol != NcclProtocol::kSimple) {
      throw std::invalid_argument("NVLS runs with the Simple protocol only");
    }
  }
  Simulator sim;
  DiscardingBackend discard;
  const BitRate nic_rate = topology.cable(topology.ports(0)[0].cable).rate;
  const PacketNetworkConfig packet_config = packet_network_config(setup.fabric, nic_rate);
  const FlowNetworkConfig flow_config = flow_network_config(setup.fabric);
  std::unique_ptr<Network> fabric_network;
  for (const std::int32_t r : setup.host_staged_nics) {
    if (r < 0 || r >= cluster_ranks) throw std::invalid_argument("no rank " + std::to_string(r));
  }
  // The tighter of the host-side limits a NIC is under, from its own link's rate.
  std::vector<std::optional<std::int64_t>> limit(static_cast<std::size_t>(cluster_ranks));
  for (const std::int32_t r : setup.host_staged_nics) {
    const BitRate own = topology.cable(topology.ports(r)[0].cable).rate;
    limit[static_cast<std::size_t>(r)] = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(static_cast<double>(own.bps()) * kHostStagedShare));
  }
  const bool shared_interface =
      setup.transport == FabricTransport::kSocket && setup.socket_interface;
  if (setup.transport == FabricTransport::kSocket && !shared_interface) {
    for (std::optional<std::int64_t>& l : limit) {
      l = std::min(l.value_or(kSocketThroughput.bps()), kSocketThroughput.bps());
    }
  }
  auto limit_endpoints = [&](auto& network) {
    if (shared_interface) {
      // Everything goes through host memory and the one interface: NIC placement stops mattering.
      const BitRate node_limit = std::min(*setup.socket_interface, kSocketThroughput);
      for (std::int32_t node = 0; node < cluster_ranks / cluster_gpus; ++node) {
        std::vector<std::int32_t> gpus_of_node;
        for (std::int32_t g = 0; g < cluster_gpus; ++g) {
          gpus_of_node.push_back(node * cluster_gpus + g);
        }
        network.limit_endpoints(gpus_of_node, node_limit);
      }
      return;
    }
    for (std::int32_t e = 0; e < cluster_ranks; ++e) {
      if (const std::optional<std::int64_t>& l = limit[static_cast<std::size_t>(e)]) {
        network.limit_endpoint(e, BitRate::bps(*l));
      }
    }
  };
  if (setup.fabric.model == NetworkModel::kPacket) {
    auto packets = std::make_unique<PacketNetwork>(sim, fabric, packet_config, setup.seed, discard);
    limit_endpoints(*packets);
    fabric_network = std::move(packets);
  } else {
    auto flows = std::make_unique<FlowNetwork>(sim, fabric, flow_config, setup.seed, discard);
    limit_endpoints(*flows);
    fabric_network = std::move(flows);
  }
  Network* cluster_network = fabric_network.get();
  std::optional<Topology> nvlink_topology;
  std::optional<Routing> nvlink_routing;
  std::unique_ptr<FlowNetwork> nvlink;
  std::unique_ptr<ClusterNetwork> cluster;
  // NVLink moves data in flits without acknowledgement frames that would share its links: no
  // header or control frames in its fluid model.
  FlowNetworkConfig nvlink_config;
  nvlink_config.header = Bytes(0);
  nvlink_config.control_frame = Bytes(0);
  if (setup.node) {
    nvlink_topology.emplace(build_nvlink_domains(cluster_ranks / cluster_gpus, *setup.node));
    nvlink_routing.emplace(*nvlink_topology);
    nvlink =
        std::make_unique<FlowNetwork>(sim, *nvlink_routing, nvlink_config, setup.seed, discard);
    cluster = std::make_unique<ClusterNetwork>(*nvlink, *fabric_network, cluster_gpus);
    cluster_network = cluster.get();
  }
  CommunicatorNetwork communicator(*cluster_network, layout.members);
  Network* network = &communicator;
  // Every hop between nodes needs a fabric path, else the collective would wait forever.
  auto check_reachable = [&](std::int32_t local_a, std::int32_t local_b) {
    const std::int32_t a = layout.members[static_cast<std::size_t>(local_a)];
    const std::int32_t b = layout.members[static_cast<std::size_t>(local_b)];
    if (a / cluster_gpus != b / cluster_gpus &&
        (!fabric.reachable(a, b) || !fabric.reachable(b, a))) {
      throw std::invalid_argument("ranks " + std::to_string(a) + " and " + std::to_string(b) +
                                  " have no path between them over the fabric");
    }
  };
  // On a bare fabric every endpoint is its own node, so the rail-aligned rings are the
  // communicator's order on every channel.
  const std::vector<std::vector<std::int32_t>> channel_rings =
      rail_aligned_rings(nodes, gpus, setup.channels);
  const std::vector<std::vector<std::int32_t>> trees = double_binary_trees(nodes, gpus);
  if (algorithm == NcclAlgorithm::kHierarchical) {
    // Across nodes, the GPUs of one index form a ring.
    for (std::int32_t r = 0; r < ranks; ++r) check_reachable(r, (r + gpus) % ranks);
  } else if (algorithm == NcclAlgorithm::kRing) {
    for (const std::vector<std::int32_t>& ring : channel_rings) {
      for (std::size_t i = 0; i < ring.size(); ++i)
        check_reachable(ring[i], ring[(i + 1) % ring.size()]);
    }
  } else if (algorithm == NcclAlgorithm::kTree) {
    for (const std::vector<std::int32_t>& parents : trees) {
      for (std::size_t r = 0; r < parents.size(); ++r) {
        if (parents[r] >= 0) check_reachable(static_cast<std::int32_t>(r), parents[r]);
      }
    }
  }
  const ProtocolOverheads overheads{protocol, gpus};
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
    case NcclAlgorithm::kHierarchical:
      collective =
          std::make_unique<HierarchicalAllReduce>(sim, *network, nodes, gpus, size, overheads);
      break;
  }
  // Periodic sampling keeps a packet network busy forever, so the run stops at the collective's
  // end rather than when nothing is left to do.
  collective->when_finished([&sim] { sim.stop(); });
  StopWhenAsked stop_when_asked(monitor, stop);
  // Often enough for Ctrl-C to answer within a fraction of a second.
  constexpr std::uint64_t kMonitorPeriodEvents = 1 << 16;
  sim.set_monitor(&stop_when_asked, kMonitorPeriodEvents);
  collective->start();
  (void)sim.run();
  if (!collective->finished()) return std::nullopt;
  return TimedCollective{collective->finished_at() - collective->started_at(), sim.now(),
                         sim.events_processed(), layout.members, collective->rank_transfer_times()};
}

}  // namespace lockstep
