#include "models/cluster/collective_alone.hpp"

#include <algorithm>
#include <memory>

#include "models/collective/fluid_replay.hpp"
#include "models/collective/traffic_tally.hpp"

namespace lockstep {
namespace {

ClusterSpec idle(ClusterSpec spec) {
  spec.fabric.model = NetworkModel::kFlow;
  spec.fabric.link_events.clear();
  spec.fabric.sample_period.reset();
  return spec;
}

}  // namespace

IdleMachine::IdleMachine(const ClusterSpec& spec, const Routing& routing,
                         const std::vector<std::int32_t>& members, std::uint32_t first_queue_pair)
    : cluster_(sim_, idle(spec), routing, discard_),
      network_(cluster_.network(), members, first_queue_pair) {}

std::optional<Duration> IdleMachine::run(Collective& collective) {
  collective.when_finished([this] { sim_.stop(); });
  collective.start();
  (void)sim_.run();
  if (!collective.finished()) return std::nullopt;
  return collective.finished_at() - collective.started_at();
}

std::optional<CollectiveAlone> collective_alone(const ClusterSpec& spec, const Routing& routing,
                                                const std::vector<std::int32_t>& members,
                                                std::uint32_t first_queue_pair,
                                                const NcclCommunicator& communicator,
                                                CollectiveOp op, Bytes size,
                                                NcclAlgorithm algorithm, NcclProtocol protocol) {
  IdleMachine stepped(spec, routing, members, first_queue_pair);
  TrafficTally stepped_traffic(stepped.sim(), stepped.network());
  const std::unique_ptr<Collective> collective =
      make_nccl_collective(stepped.sim(), stepped_traffic, communicator, op, size, algorithm,
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
  IdleMachine streamed(spec, routing, members, first_queue_pair);
  TrafficTally streamed_traffic(streamed.sim(), streamed.network());
  FluidReplay replay(streamed.sim(), streamed_traffic, fluid, algorithm);
  if (!streamed.run(replay)) return std::nullopt;
  const std::vector<QueuePairTraffic> flowed = streamed_traffic.traffic();

  for (std::size_t i = 0; i < fluid.size(); ++i) {
    fluid[i].then = std::max(Duration(), *time - (flowed[i].last_delivered - replay.started_at()));
  }
  return CollectiveAlone{*time, std::move(fluid)};
}

}  // namespace lockstep
