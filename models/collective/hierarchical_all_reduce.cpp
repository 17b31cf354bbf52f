#include "models/collective/hierarchical_all_reduce.hpp"

#include <stdexcept>

namespace lockstep {

HierarchicalAllReduce::HierarchicalAllReduce(Simulator& sim, Network& network, std::int32_t nodes,
                                             std::int32_t gpus, Bytes size,
                                             std::optional<ProtocolOverheads> overheads)
    : Collective(sim, network.endpoint_count(), every_endpoint(network)),
      network_(network),
      nodes_(nodes),
      gpus_(gpus),
      size_(size),
      overheads_(overheads) {
  if (nodes < 1 || gpus < 1 || nodes * gpus != network.endpoint_count()) {
    throw std::invalid_argument("a hierarchical all-reduce needs nodes x GPUs = the network's " +
                                std::to_string(network.endpoint_count()) + " endpoints");
  }
  create(0);
}

void HierarchicalAllReduce::create(int phase) {
  phase_ = phase;
  if (phase == kDone) {
    all_done(sim_.now());
    for (const std::int32_t rank : participants()) rank_done(rank, sim_.now());
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
    runs_.push_back(std::make_unique<RingCollective>(sim_, network_,
                                                     std::vector<std::vector<std::int32_t>>{ranks},
                                                     op, bytes, overheads_, queue_pair));
    runs_.back()->when_finished([this] { part_finished(); });
    runs_.back()->when_failed([this](const TransferFailure& failure) { fail(failure); });
  }
  if (phase == 0) return;
  for (std::size_t i = first; i < runs_.size(); ++i) runs_[i]->start();
}

void HierarchicalAllReduce::on_arrival(std::int32_t rank, Time at) {
  runs_[static_cast<std::size_t>(rank / gpus_)]->arrive(rank, at);
}

void HierarchicalAllReduce::on_arrivals(const std::vector<std::int32_t>& ranks) {
  // Node by node, as the phase's collectives were created.
  std::vector<char> arriving(static_cast<std::size_t>(network_.endpoint_count()), 0);
  for (const std::int32_t rank : ranks) arriving[static_cast<std::size_t>(rank)] = 1;
  for (std::int32_t n = 0; n < nodes_; ++n) {
    bool whole_node = true;
    for (std::int32_t g = 0; g < gpus_; ++g) {
      whole_node = whole_node && arriving[static_cast<std::size_t>(n * gpus_ + g)] != 0;
    }
    RingCollective& node = *runs_[static_cast<std::size_t>(n)];
    if (whole_node) {
      node.start();
      continue;
    }
    for (std::int32_t g = 0; g < gpus_; ++g) {
      if (arriving[static_cast<std::size_t>(n * gpus_ + g)] != 0)
        node.arrive(n * gpus_ + g, sim_.now());
    }
  }
}

void HierarchicalAllReduce::on_abort() {
  for (const std::unique_ptr<RingCollective>& run : runs_) run->abort();
}

void HierarchicalAllReduce::part_finished() {
  if (--running_ == 0) create(phase_ + 1);
}

std::vector<RankTransferTimes> HierarchicalAllReduce::rank_transfer_times() const {
  std::vector<RankTransferTimes> total(static_cast<std::size_t>(network_.endpoint_count()));
  for (const std::unique_ptr<RingCollective>& run : runs_) {
    const std::vector<RankTransferTimes> times = run->rank_transfer_times();
    for (std::size_t r = 0; r < total.size(); ++r) {
      total[r].sent += times[r].sent;
      total[r].received += times[r].received;
    }
  }
  return total;
}

std::int64_t HierarchicalAllReduce::messages_in_flight() const {
  std::int64_t in_flight = 0;
  for (const std::unique_ptr<RingCollective>& run : runs_) in_flight += run->messages_in_flight();
  return in_flight;
}

bool HierarchicalAllReduce::settled() const {
  if (!Collective::settled()) return false;
  for (const std::unique_ptr<RingCollective>& run : runs_) {
    if (!run->settled()) return false;
  }
  return true;
}

}  // namespace lockstep
