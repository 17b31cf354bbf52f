#include "models/collective/hierarchical_all_reduce.hpp"

#include <stdexcept>

namespace lockstep {

HierarchicalAllReduce::HierarchicalAllReduce(Simulator& sim, Network& network, std::int32_t nodes,
                                             std::int32_t gpus, Bytes size,
                                             std::optional<ProtocolOverheads> overheads)
    : sim_(sim), network_(network), nodes_(nodes), gpus_(gpus), size_(size), overheads_(overheads) {
  if (nodes < 1 || gpus < 1 || nodes * gpus != network.endpoint_count()) {
    throw std::invalid_argument("a hierarchical all-reduce needs nodes x GPUs = the network's " +
                                std::to_string(network.endpoint_count()) + " endpoints");
  }
}

void HierarchicalAllReduce::start() {
  started_at_ = sim_.now();
  finished_at_ = sim_.now();
  begin(0);
}

void HierarchicalAllReduce::begin(int phase) {
  phase_ = phase;
  if (phase == kDone) {
    finished_at_ = sim_.now();
    return;
  }
  // Each phase on its own queue pairs, so no message waits behind another phase's.
  const auto queue_pair = static_cast<std::uint32_t>(phase);
  std::vector<std::pair<std::vector<std::int32_t>, Bytes>> groups;
  if (phase == 1) {
    for (std::int32_t g = 0; g < gpus_; ++g) {
      std::vector<std::int32_t> rail;
      for (std::int32_t n = 0; n < nodes_; ++n) rail.push_back(n * gpus_ + g);
      groups.emplace_back(rail, even_share(size_, gpus_, g));
    }
  } else {
    for (std::int32_t n = 0; n < nodes_; ++n) {
      std::vector<std::int32_t> node;
      for (std::int32_t g = 0; g < gpus_; ++g) node.push_back(n * gpus_ + g);
      groups.emplace_back(node, size_);
    }
  }
  const CollectiveOp op = phase == 0   ? CollectiveOp::kReduceScatter
                          : phase == 1 ? CollectiveOp::kAllReduce
                                       : CollectiveOp::kAllGather;
  running_ = static_cast<std::int32_t>(groups.size());
  const std::size_t first = runs_.size();
  for (auto& [ranks, bytes] : groups) {
    runs_.push_back(std::make_unique<CollectiveRun>(sim_, network_,
                                                    std::vector<std::vector<std::int32_t>>{ranks},
                                                    op, bytes, overheads_, queue_pair));
    runs_.back()->when_finished([this] { part_finished(); });
  }
  for (std::size_t i = first; i < runs_.size(); ++i) runs_[i]->start();
}

void HierarchicalAllReduce::part_finished() {
  if (--running_ == 0) begin(phase_ + 1);
}

std::vector<RankTransferTimes> HierarchicalAllReduce::rank_transfer_times() const {
  std::vector<RankTransferTimes> total(static_cast<std::size_t>(network_.endpoint_count()));
  for (const std::unique_ptr<CollectiveRun>& run : runs_) {
    for (std::size_t r = 0; r < total.size(); ++r) {
      total[r].sent += run->rank_transfer_times()[r].sent;
      total[r].received += run->rank_transfer_times()[r].received;
    }
  }
  return total;
}

}  // namespace lockstep
