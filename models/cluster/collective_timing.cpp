#include "models/cluster/collective_timing.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

#include "models/collective/communicator.hpp"
#include "models/collective/nccl_choice.hpp"
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
  // Every hop between nodes needs a fabric path, else the collective would wait forever.
  auto check_reachable = [&](std::int32_t local_a, std::int32_t local_b) {
    const std::int32_t a = layout.members[static_cast<std::size_t>(local_a)];
    const std::int32_t b = layout.members[static_cast<std::size_t>(local_b)];
    if (!cluster.connected(a, b)) {
      throw std::invalid_argument("ranks " + std::to_string(a) + " and " + std::to_string(b) +
                                  " have no path between them over the fabric");
    }
  };
  const NcclCommunicator nccl{servers,
                              nodes,
                              gpus,
                              fabric.topology().nic_rate(),
                              setup.channels,
                              setup.pxn,
                              setup.cluster.hosts.queue_pairs_per_connection};
  NcclCollective made =
      make_nccl_collective(sim, communicator, nccl, op, size, algorithm, protocol, check_reachable);
  const std::unique_ptr<Collective>& collective = made.collective;
  const std::int32_t channels_run = made.channels;
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
    const std::function<bool()>& stop, const HostFloor& host_floor) {
  const auto iteration = [&](const TimedCollective& run) {
    return host_floor ? std::max(run.time, host_floor(run.channels)) : run.time;
  };
  std::optional<FastestCollective> fastest;
  std::optional<Duration> best;
  std::uint64_t events = 0;
  for (const auto& [algorithm, protocol] : pairs) {
    std::optional<TimedCollective> run =
        time_collective(setup, fabric, op, size, algorithm, protocol, stop, best);
    if (!run) return std::nullopt;
    events += run->events;
    if (run->completed && (!best || iteration(*run) < *best)) {
      best = iteration(*run);
      fastest = FastestCollective{std::move(*run), algorithm, protocol, 0};
    }
  }
  if (fastest) fastest->events = events;
  return fastest;
}

}  // namespace lockstep
