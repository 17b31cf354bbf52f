// One send and its matching receive, as a pipeline stage hands activations or gradients to the
// next (NCCL's ncclSend / ncclRecv pair, which Megatron's p2p_communication issues): the sender's
// `size` bytes go to the receiver as one transfer once both have joined, since NCCL's proxy sends
// only into a posted receive buffer; between nodes with several queue pairs per connection
// (ProtocolOverheads::queue_pairs_per_connection), as one part on each, as NCCL's steps take them
// in turn. Both finish when the data has arrived. Participants are two endpoints of the network
// (typically a pipeline communicator's members); the protocol's costs are charged as for every
// collective algorithm (collective_algorithm.hpp).
#pragma once

#include <cstdint>
#include <optional>

#include "models/collective/collective_algorithm.hpp"

namespace lockstep {

class PointToPoint final : public CollectiveAlgorithm {
 public:
  // Throws std::invalid_argument when sender == receiver, or as CollectiveAlgorithm does.
  PointToPoint(Simulator& sim, Network& network, std::int32_t sender, std::int32_t receiver,
               Bytes size, std::optional<ProtocolOverheads> overheads = {});

 private:
  void launch(std::int32_t rank) override;
  void arrived(const Message& message, Time ready, std::uint64_t tag) override;

  std::int32_t sender_;
  std::int32_t receiver_;
  Bytes size_;
  std::int32_t messages_ = 1;
};

}  // namespace lockstep
