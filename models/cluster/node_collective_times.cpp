#include "models/cluster/node_collective_times.hpp"

#include <algorithm>
#include <stdexcept>

#include "models/cluster/collective_timing.hpp"
#include "models/cluster/nccl_collective.hpp"
#include "models/collective/nccl_choice.hpp"

namespace lockstep {
namespace {

// The spec with its fabric cut down to one server: its NICs on their rail switches and nothing
// beyond, which a collective inside the server never reaches, nor what the hosts do to the NICs.
ClusterSpec one_server_of(ClusterSpec spec) {
  if (!spec.servers) throw std::invalid_argument("timing a collective in a server needs servers");
  TopologyConfig& topology = spec.fabric.topology;
  topology.kind = TopologyKind::kRailOptimized;
  topology.rail_optimized = RailOptimizedConfig{};
  topology.rail_optimized.servers = 1;
  topology.rail_optimized.nics_per_server = spec.servers->gpus;
  spec.fabric.link_events.clear();
  spec.hosts = HostsConfig{};
  spec.fabric.model = NetworkModel::kFlow;  // NVLink is flow-level at every level anyway
  return spec;
}

}  // namespace

NodeCollectiveTimes::NodeCollectiveTimes(const ClusterSpec& spec)
    : one_server_(one_server_of(spec)),
      topology_(build_topology(one_server_.fabric.topology)),
      routing_(topology_) {}

Duration NodeCollectiveTimes::time(CollectiveOp op, Bytes size, std::int32_t gpus) {
  if (gpus < 1 || gpus > one_server_.servers->gpus) {
    throw std::invalid_argument("a collective in one server runs on 1 to its GPUs");
  }
  if (gpus == 1 || size == Bytes(0)) return Duration();
  const auto key = std::make_tuple(op, size.count(), gpus);
  if (const auto found = times_.find(key); found != times_.end()) return found->second;
  CollectiveSetup setup;
  setup.cluster = one_server_;
  setup.channels = 0;  // as NCCL runs the size, as in nccl-tests
  for (std::int32_t gpu = 0; gpu < gpus; ++gpu) setup.communicator.push_back(gpu);
  if (!nccl_rates(op)) {
    // NCCL's model rates no pair for it: nccl-tests keeps the fastest it times.
    const auto pairs = runnable_pairs(op, *allowed_algorithms(""), *allowed_protocols(""),
                                      one_server_.servers->nvlink_sharp, 1, gpus);
    const std::optional<FastestCollective> fastest =
        time_fastest(setup, routing_, op, size, pairs, [] { return false; });
    return times_.emplace(key, fastest->timed.time).first->second;
  }
  const auto [algorithm, protocol] = nccl_default_choice(
      NcclCommunicator{one_server_.servers, 1, gpus, topology_.nic_rate()}, op, size);
  const std::optional<TimedCollective> timed =
      time_collective(setup, routing_, op, size, algorithm, protocol, [] { return false; });
  return times_.emplace(key, timed->time).first->second;
}

}  // namespace lockstep
