// One collective timed on fresh networks, as `lockstep nccl-tests` runs each size of its sweep:
// over a fabric alone (one rank per endpoint, every channel on the endpoints' order), or over GPU
// servers (NVLink inside each node at flow level, one NIC per GPU on the fabric, NCCL's
// rail-aligned rings and double binary trees). The fabric runs at its configured level.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "models/collective/collective_op.hpp"
#include "models/collective/nccl_protocol.hpp"
#include "models/fabric/routing.hpp"
#include "models/node/node_preset.hpp"
#include "models/transport/network_config.hpp"
#include "sim/core/simulator.hpp"

namespace lockstep {

struct CollectiveSetup {
  NetworkConfig fabric;
  std::uint64_t seed = 0;
  std::optional<NodePreset> node;  // GPU servers: NVLink inside, one NIC per GPU
  std::int32_t channels = 1;       // rings (the tree algorithm always uses two trees)
};

struct TimedCollective {
  Duration time;  // from the start to the last chunk arrived and noticed
  Time end;       // when that simulation stopped (soon after the collective's end)
  std::uint64_t events = 0;
};

// `fabric` is the setup's fabric routing. Throws std::invalid_argument for Tree with another
// operation than all-reduce (as in NCCL), or when two ranks that must talk over the fabric have no
// path (a fabric without spines between rails, say). Empty when `stop` turned true before the
// collective finished (Ctrl-C); the run loop calls `monitor` (may be null) as Simulator::run does.
[[nodiscard]] std::optional<TimedCollective> time_collective(const CollectiveSetup& setup,
                                                             const Routing& fabric, CollectiveOp op,
                                                             Bytes size, NcclAlgorithm algorithm,
                                                             NcclProtocol protocol,
                                                             RunMonitor* monitor,
                                                             const std::function<bool()>& stop);

}  // namespace lockstep
