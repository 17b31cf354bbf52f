// Which of NCCL's algorithms and protocols may run an operation, as NCCL enables them: Tree, NVLS,
// NVLS-Tree (and lockstep's Hierarchical) run all-reduce only, NVLS and NVLS-Tree with the Simple
// protocol only. Both need NVSwitches that reduce (NVLink SHARP) and at least two GPUs of the
// communicator on each node; without CollNet, NVLS runs on one node and NVLS-Tree across several.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "models/collective/collective_op.hpp"
#include "models/collective/nccl_protocol.hpp"

namespace lockstep {

// The (algorithm, protocol) pairs among those allowed that NCCL could run `op` with, in the order
// the lists give them.
[[nodiscard]] std::vector<std::pair<NcclAlgorithm, NcclProtocol>> runnable_pairs(
    CollectiveOp op, const std::vector<NcclAlgorithm>& algorithms,
    const std::vector<NcclProtocol>& protocols, bool switch_reduces, std::int32_t nodes,
    std::int32_t gpus_per_node);

// Whether NCCL could run `algorithm` on a communicator of `nodes` nodes with `gpus_per_node` GPUs
// each, their NVSwitches reducing or not: false only for NVLS and NVLS-Tree where they cannot run.
[[nodiscard]] bool switch_algorithm_available(NcclAlgorithm algorithm, bool switch_reduces,
                                              std::int32_t nodes, std::int32_t gpus_per_node);

}  // namespace lockstep
