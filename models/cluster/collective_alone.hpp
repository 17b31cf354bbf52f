// One of NCCL's collectives alone on an idle copy of the machine at flow level, run step by step as
// `lockstep nccl-tests` runs it (nccl_collective.hpp): how long it takes there, and what it is as a
// fluid (fluid_replay.hpp): a flow for each of its queue pairs, of the bytes it carried over the
// whole run, followed by what followed them there, so that a replay of them on the same idle
// machine takes as long. A job times a collective
// of one shape once this way, and then runs each of its collectives of that shape as the fluid
// (job_communicators.hpp). Units: Bytes, Time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/cluster/cluster.hpp"
#include "models/cluster/nccl_collective.hpp"
#include "models/collective/fluid_replay.hpp"

namespace lockstep {

struct CollectiveAlone {
  Duration time;
  std::vector<FluidFlow> fluid;  // in the communicator's ranks
};

// `op` of `size` over `members` (the cluster's ranks the communicator's ranks stand for, node-major
// as `communicator` lays them out), with `algorithm` and `protocol`, on `spec`'s machine without
// its link events or sampling. Its queue pairs start at `first_queue_pair`, as the caller's will,
// so that ECMP hashes every flow of the fluid onto the path the step-by-step run's took. Empty
// where the fabric has no path between some members: the run never ends.
[[nodiscard]] std::optional<CollectiveAlone> collective_alone(
    const ClusterSpec& spec, const Routing& routing, const std::vector<std::int32_t>& members,
    std::uint32_t first_queue_pair, const NcclCommunicator& communicator, CollectiveOp op,
    Bytes size, NcclAlgorithm algorithm, NcclProtocol protocol);

}  // namespace lockstep
