// The textbook two-level all-reduce (reference.md section 3: k GPUs per node, N nodes): inside
// every node a ring reduce-scatter leaves each GPU with its node's sum of one k-th of the data;
// across nodes, the GPUs of one index all-reduce their k-th on a ring (one rail, one NIC each);
// inside every node a ring all-gather gives every GPU the whole result. Each phase starts once the
// previous one has ended on every node, and each is a ring collective (RingCollective) with its own
// NCCL protocol costs. Ranks join the first phase's collective of their node as they arrive. This
// is lockstep's algorithm for what-ifs, not one of NCCL's (NCCL's ring and tree already respect
// nodes): it runs when asked for by name, never by automatic choice.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "models/collective/ring_collective.hpp"

namespace lockstep {

class HierarchicalAllReduce final : public Collective {
 public:
  // Ranks are node x gpus + GPU, every endpoint of `network`. Throws std::invalid_argument when
  // nodes x gpus is not the network's endpoint count.
  HierarchicalAllReduce(Simulator& sim, Network& network, std::int32_t nodes, std::int32_t gpus,
                        Bytes size, std::optional<ProtocolOverheads> overheads = {});

  // Summed over the phases.
  [[nodiscard]] std::vector<RankTransferTimes> rank_transfer_times() const override;
  [[nodiscard]] std::int64_t messages_in_flight() const override;
  [[nodiscard]] bool settled() const override;

 private:
  static constexpr int kDone = 3;

  void on_arrival(std::int32_t rank, Time at) override;
  void on_arrivals(const std::vector<std::int32_t>& ranks) override;
  void on_abort() override;
  // Creates phase `phase`'s collectives (0 reduce-scatter, 1 all-reduce across nodes, 2
  // all-gather); the first phase's ranks join as they arrive, the later phases' together.
  void create(int phase);
  void part_finished();

  Network& network_;
  std::int32_t nodes_;
  std::int32_t gpus_;
  Bytes size_;
  std::optional<ProtocolOverheads> overheads_;
  // Every phase's collectives, kept to the end: their last acknowledgements may still arrive.
  std::vector<std::unique_ptr<RingCollective>> runs_;
  int phase_ = 0;
  std::int32_t running_ = 0;  // collectives of the current phase not finished yet
};

}  // namespace lockstep
