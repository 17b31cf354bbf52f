// What NCCL's collectives cost among the GPUs of one server, as `lockstep nccl-tests` times them:
// NCCL's choice of algorithm and protocol for the size (its cost model, nccl_default_choice; the
// fastest timed protocol for all-to-all and send/recv, which the model does not rate), with
// the NVLS, LL and Simple costs of nccl_protocol.hpp, on the server alone. A training job's groups
// that stay inside a server (tensor, context, expert parallelism) contend with nothing there (the
// NVSwitch is non-blocking), so each (operation, size, GPUs) is timed once, on a cluster of that
// one server, and remembered: a job has few such shapes and runs them thousands of times. The time
// is the GPUs' (collective_ps of nccl-tests), without the host's launch, which a training step's
// streams overlap. Units: Bytes, Duration.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>

#include "models/cluster/cluster.hpp"
#include "models/collective/collective_op.hpp"
#include "models/fabric/routing.hpp"
#include "models/fabric/topology.hpp"

namespace lockstep {

class NodeCollectiveTimes {
 public:
  // `spec` must name GPU servers (a preset); the fabric between them plays no part.
  explicit NodeCollectiveTimes(const ClusterSpec& spec);

  // `gpus` of one server, at least one and at most the server's. Zero bytes, or one GPU, take no
  // time.
  [[nodiscard]] Duration time(CollectiveOp op, Bytes size, std::int32_t gpus);

 private:
  ClusterSpec one_server_;
  Topology topology_;
  Routing routing_;
  std::map<std::tuple<CollectiveOp, std::int64_t, std::int32_t>, Duration> times_;
};

}  // namespace lockstep
