#include "models/collective/nccl_choice.hpp"

namespace lockstep {

std::vector<std::pair<NcclAlgorithm, NcclProtocol>> runnable_pairs(
    CollectiveOp op, const std::vector<NcclAlgorithm>& algorithms,
    const std::vector<NcclProtocol>& protocols, bool nvls_available) {
  std::vector<std::pair<NcclAlgorithm, NcclProtocol>> out;
  for (const NcclAlgorithm a : algorithms) {
    if (a != NcclAlgorithm::kRing && op != CollectiveOp::kAllReduce) continue;
    if (a == NcclAlgorithm::kNvls && !nvls_available) continue;
    for (const NcclProtocol p : protocols) {
      if (a != NcclAlgorithm::kNvls || p == NcclProtocol::kSimple) out.emplace_back(a, p);
    }
  }
  return out;
}

}  // namespace lockstep
