// The textbook two-level all-reduce (reference.md section 3: k GPUs per node, N nodes): inside
// every node a ring reduce-scatter leaves each GPU with its node's sum of one k-th of the data;
// across nodes, the GPUs of one index all-reduce their k-th on a ring (one rail, one NIC each);
// inside every node a ring all-gather gives every GPU the whole result. Each phase starts once the
// previous one has ended on every node, and each is a ring collective (CollectiveRun) with its own
// NCCL protocol costs. This is lockstep's algorithm for what-ifs, not one of NCCL's (NCCL's ring
// and tree already respect nodes): it runs when asked for by name, never by automatic choice.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "models/collective/collective_run.hpp"

namespace lockstep {

class HierarchicalAllReduce {
 public:
  // Ranks are node x gpus + GPU, every endpoint of `network`. Throws std::invalid_argument when
  // nodes x gpus is not the network's endpoint count.
  HierarchicalAllReduce(Simulator& sim, Network& network, std::int32_t nodes, std::int32_t gpus,
                        Bytes size, std::optional<ProtocolOverheads> overheads = {});
  HierarchicalAllReduce(const HierarchicalAllReduce&) = delete;
  HierarchicalAllReduce& operator=(const HierarchicalAllReduce&) = delete;

  void start();
  [[nodiscard]] bool finished() const { return phase_ == kDone; }
  [[nodiscard]] Time started_at() const { return started_at_; }
  [[nodiscard]] Time finished_at() const { return finished_at_; }
  // Summed over the phases (CollectiveAlgorithm::rank_transfer_times).
  [[nodiscard]] std::vector<RankTransferTimes> rank_transfer_times() const;

 private:
  static constexpr int kDone = 3;

  // Starts phase `phase` (0 reduce-scatter, 1 all-reduce across nodes, 2 all-gather).
  void begin(int phase);
  void part_finished();

  Simulator& sim_;
  Network& network_;
  std::int32_t nodes_;
  std::int32_t gpus_;
  Bytes size_;
  std::optional<ProtocolOverheads> overheads_;
  // Every phase's collectives, kept to the end: their last acknowledgements may still arrive.
  std::vector<std::unique_ptr<CollectiveRun>> runs_;
  int phase_ = -1;
  std::int32_t running_ = 0;  // collectives of the current phase not finished yet
  Time started_at_;
  Time finished_at_;
};

}  // namespace lockstep
