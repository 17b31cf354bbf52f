// Which of NCCL's algorithms and protocols may run an operation, as NCCL enables them: Tree, NVLS
// (and lockstep's Hierarchical) run all-reduce only; NVLS runs with the Simple protocol only, and
// only where one node's NVSwitch reduces (NVLink SHARP) without CollNet.
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
    const std::vector<NcclProtocol>& protocols, bool nvls_available);

// NVLS needs the communicator on one node whose NVSwitch reduces.
[[nodiscard]] inline bool nvls_available(bool switch_reduces, std::int32_t communicator_nodes) {
  return switch_reduces && communicator_nodes == 1;
}

}  // namespace lockstep
