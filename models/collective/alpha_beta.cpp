#include "models/collective/alpha_beta.hpp"

#include <cassert>

namespace lockstep {
namespace {

Bytes ceil_divide(Bytes size, std::int64_t parts) {
  return Bytes((size.count() + parts - 1) / parts);
}

Duration step(const AlphaBeta& cost, Bytes bytes) {
  return cost.alpha + tx_time(bytes, cost.bandwidth);
}

}  // namespace

Duration ring_collective_time(CollectiveOp op, std::int64_t ranks, Bytes size,
                              const AlphaBeta& cost) {
  assert(ranks >= 1);
  if (ranks == 1) return Duration();
  switch (op) {
    case CollectiveOp::kAllReduce:
      // Reduce-scatter then all-gather, n-1 steps each, one chunk per step.
      return step(cost, ceil_divide(size, ranks)) * (2 * (ranks - 1));
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll:
      return step(cost, ceil_divide(size, ranks)) * (ranks - 1);
    case CollectiveOp::kSendRecv:
      return step(cost, size);
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
      return cost.alpha * (ranks - 1) + tx_time(size, cost.bandwidth);
  }
  return Duration();
}

}  // namespace lockstep
