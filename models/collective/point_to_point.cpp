#include "models/collective/point_to_point.hpp"

#include <stdexcept>

namespace lockstep {

PointToPoint::PointToPoint(Simulator& sim, Network& network, std::int32_t sender,
                           std::int32_t receiver, Bytes size,
                           std::optional<ProtocolOverheads> overheads)
    : CollectiveAlgorithm(sim, network, {sender, receiver}, overheads, NcclAlgorithm::kRing),
      sender_(sender),
      receiver_(receiver),
      size_(size) {
  if (sender == receiver) throw std::invalid_argument("a rank cannot send to itself");
  if (overheads && sender / overheads->gpus_per_node != receiver / overheads->gpus_per_node) {
    messages_ = overheads->queue_pairs_per_connection;
  }
  std::vector<std::int64_t> per_rank(static_cast<std::size_t>(network.endpoint_count()), 0);
  per_rank[static_cast<std::size_t>(sender)] = messages_;
  per_rank[static_cast<std::size_t>(receiver)] = messages_;
  expect_transfers(std::move(per_rank));
}

void PointToPoint::launch(std::int32_t rank) {
  if (rank != sender_) return;
  // Each message takes the connection's next queue pair (connection_queue_pair).
  for (std::int32_t k = 0; k < messages_; ++k) {
    send(sender_, receiver_, even_share(size_, messages_, k), 0, 0);
  }
}

void PointToPoint::arrived(const Message& /*message*/, Time /*ready*/, std::uint64_t /*tag*/) {}

}  // namespace lockstep
