#include "models/collective/collective_op.hpp"

#include <array>
#include <utility>

namespace lockstep {
namespace {

constexpr std::array<std::pair<CollectiveOp, std::string_view>, 7> kNames{{
    {CollectiveOp::kAllReduce, "all_reduce"},
    {CollectiveOp::kReduceScatter, "reduce_scatter"},
    {CollectiveOp::kAllGather, "all_gather"},
    {CollectiveOp::kAllToAll, "alltoall"},
    {CollectiveOp::kSendRecv, "sendrecv"},
    {CollectiveOp::kBroadcast, "broadcast"},
    {CollectiveOp::kReduce, "reduce"},
}};

}  // namespace

std::string_view collective_name(CollectiveOp op) {
  for (const auto& [which, name] : kNames) {
    if (which == op) return name;
  }
  return "unknown";
}

std::optional<CollectiveOp> collective_named(std::string_view name) {
  for (const auto& [which, known] : kNames) {
    if (known == name) return which;
  }
  return std::nullopt;
}

double bus_bandwidth_factor(CollectiveOp op, std::int64_t ranks) {
  const auto n = static_cast<double>(ranks);
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2.0 * (n - 1.0) / n;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll:
      return (n - 1.0) / n;
    case CollectiveOp::kSendRecv:
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
      return 1.0;
  }
  return 1.0;
}

}  // namespace lockstep
