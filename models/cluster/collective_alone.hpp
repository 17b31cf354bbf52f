// A collective timed alone on an idle copy of the machine at flow level (IdleMachine), as a job's
// collectives across servers are (job_communicators.hpp): the analytic level takes the time, the
// flow level also the fluid, once per shape. One of NCCL's collectives runs there step by step as
// `lockstep nccl-tests` runs it (nccl_collective.hpp), which gives how long it takes and what it
// is as a fluid (fluid_replay.hpp): a flow for each of its queue pairs, of the bytes it carried
// over the whole run, followed by what the run took beyond them, so that a replay of them on the
// same idle machine takes as long. Units: Bytes, Time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/cluster/cluster.hpp"
#include "models/cluster/nccl_collective.hpp"
#include "models/collective/communicator.hpp"
#include "models/collective/fluid_replay.hpp"
#include "sim/core/discarding_backend.hpp"

namespace lockstep {

// An idle copy of `spec`'s machine at flow level, without its link events or sampling, with a
// communicator's ranks on it: `members` are the cluster's ranks its ranks stand for, and its queue
// pairs start at `first_queue_pair`, as the caller's will, so that ECMP hashes every flow onto the
// path the caller's would take.
class IdleMachine {
 public:
  IdleMachine(const ClusterSpec& spec, const Routing& routing,
              const std::vector<std::int32_t>& members, std::uint32_t first_queue_pair);

  [[nodiscard]] Simulator& sim() { return sim_; }
  [[nodiscard]] Network& network() { return network_; }
  // How long `collective`, made on this machine, takes alone; empty if it never ends (the fabric
  // has no path between some of its ranks).
  [[nodiscard]] std::optional<Duration> run(Collective& collective);

 private:
  Simulator sim_;
  DiscardingBackend discard_;
  Cluster cluster_;
  CommunicatorNetwork network_;
};

struct CollectiveAlone {
  Duration time;
  std::vector<FluidFlow> fluid;  // in the communicator's ranks
};

// `op` of `size` over `members` (node-major, as `communicator` lays them out) with `algorithm` and
// `protocol`, on IdleMachines of `spec`'s. Empty where the fabric has no path between some members.
[[nodiscard]] std::optional<CollectiveAlone> collective_alone(
    const ClusterSpec& spec, const Routing& routing, const std::vector<std::int32_t>& members,
    std::uint32_t first_queue_pair, const NcclCommunicator& communicator, CollectiveOp op,
    Bytes size, NcclAlgorithm algorithm, NcclProtocol protocol);

}  // namespace lockstep
