#include "models/cluster/collective_alone.hpp"

#include <algorithm>
#include <memory>

#include "models/collective/communicator.hpp"
#include "models/collective/fluid_replay.hpp"
#include "models/collective/traffic_tally.hpp"
#include "sim/core/discarding_backend.hpp"

namespace lockstep {
namespace {

// An idle copy of the machine with the communicator's ranks on it.
struct IdleMachine {
  IdleMachine(const ClusterSpec& spec, const Routing& routing,
              const std::vector<std::int32_t>& members, std::uint32_t first_queue_pair)
      : cluster(sim, spec, routing, discard),
        network(cluster.network(), members, first_queue_pair) {}

  // How long `collective` takes on it alone; empty if it never ends.
  std::optional<Duration> run(Collective& collective) {
    collective.when_finished([this] { sim.stop(); });
    collective.start();
    (void)sim.run();
    if (!collective.finished()) return std::nullopt;
    return collective.finished_at() - collective.started_at();
  }

  Simulator sim;
  DiscardingBackend discard;
  Cluster cluster;
  CommunicatorNetwork network;
};

}  // namespace

std::optional<CollectiveAlone> collective_alone(const ClusterSpec& spec, const Routing& routing,
                                                const std::vector<std::int32_t>& members,
                                                std::uint32_t first_queue_pair,
                                                const NcclCommunicator& communicator,
                                                CollectiveOp op, Bytes size,
                                                NcclAlgorithm algorithm, NcclProtocol protocol) {
  ClusterSpec idle = spec;
  idle.fabric.model = NetworkModel::kFlow;
  idle.fabric.link_events.clear();
  idle.fabric.sample_period.reset();

  IdleMachine stepped(idle, routing, members, first_queue_pair);
  TrafficTally stepped_traffic(stepped.sim, stepped.network);
  const std::unique_ptr<Collective> collective =
      make_nccl_collective(stepped.sim, stepped_traffic, communicator, op, size, algorithm,
                           protocol)
          .collective;
  const std::optional<Duration> time = stepped.run(*collective);
  if (!time) return std::nullopt;
  const std::vector<QueuePairTraffic> traffic = stepped_traffic.traffic();
  std::vector<FluidFlow> fluid;
  for (const QueuePairTraffic& carried : traffic) {
    fluid.push_back(FluidFlow{carried.pair, carried.bytes,
                              carried.first_sent - collective->started_at(), Duration()});
  }

  // The same flows with nothing after them, to learn when each one's bytes are in: what the
  // step-by-step run took beyond that follows them.
  IdleMachine streamed(idle, routing, members, first_queue_pair);
  TrafficTally streamed_traffic(streamed.sim, streamed.network);
  FluidReplay replay(streamed.sim, streamed_traffic, fluid, algorithm);
  if (!streamed.run(replay)) return std::nullopt;
  const std::vector<QueuePairTraffic> flowed = streamed_traffic.traffic();

  for (std::size_t i = 0; i < fluid.size(); ++i) {
    fluid[i].then = std::max(Duration(), *time - (flowed[i].last_delivered - replay.started_at()));
  }
  return CollectiveAlone{*time, std::move(fluid)};
}

}  // namespace lockstep
