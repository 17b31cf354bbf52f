// The NVLink domains of a cluster as a topology: one NVSwitch per node ("nvswitch<n>", node
// endpoint count + n) and one link per GPU to it, at the preset's NVLink bandwidth and hop latency.
// GPU g of node n is endpoint n x gpus + g, the same number as its rank and its NIC, so the NVLink
// network and the fabric agree on ids. Nodes are not joined: traffic between nodes takes the
// fabric. Switch buffers are irrelevant here (NVLink runs at flow level) and set to zero.
#pragma once

#include <cstdint>

#include "models/fabric/topology.hpp"
#include "models/node/node_preset.hpp"

namespace lockstep {

// nodes >= 1. Throws std::invalid_argument as Topology does.
[[nodiscard]] Topology build_nvlink_domains(std::int32_t nodes, const NodePreset& preset);

}  // namespace lockstep
