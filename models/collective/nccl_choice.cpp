#include "models/collective/nccl_choice.hpp"

namespace lockstep {

std::vector<std::pair<NcclAlgorithm, NcclProtocol>> runnable_pairs(
    CollectiveOp op, const std::vector<NcclAlgorithm>& algorithms,
    const std::vector<NcclProtocol>& protocols, bool switch_reduces, std::int32_t nodes,
    std::int32_t gpus_per_node) {
  std::vector<std::pair<NcclAlgorithm, NcclProtocol>> out;
  for (const NcclAlgorithm a : algorithms) {
    if (a != NcclAlgorithm::kRing && op != CollectiveOp::kAllReduce) continue;
    if (!switch_algorithm_available(a, switch_reduces, nodes, gpus_per_node)) continue;
    const bool simple_only = a == NcclAlgorithm::kNvls || a == NcclAlgorithm::kNvlsTree ||
                             a == NcclAlgorithm::kCollNetDirect;
    for (const NcclProtocol p : protocols) {
      if (!simple_only || p == NcclProtocol::kSimple) out.emplace_back(a, p);
    }
  }
  return out;
}

bool switch_algorithm_available(NcclAlgorithm algorithm, bool switch_reduces, std::int32_t nodes,
                                std::int32_t gpus_per_node) {
  const bool nvls_runs = switch_reduces && gpus_per_node >= 2;
  switch (algorithm) {
    case NcclAlgorithm::kNvls:
      return nvls_runs && nodes == 1;
    case NcclAlgorithm::kNvlsTree:
      return nvls_runs && nodes > 1;
    case NcclAlgorithm::kCollNetDirect:
      return nodes > 1;  // the switches reduce across nodes
    case NcclAlgorithm::kRing:
    case NcclAlgorithm::kTree:
    case NcclAlgorithm::kHierarchical:
      return true;
  }
  return true;
}

}  // namespace lockstep
