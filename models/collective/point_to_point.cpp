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
  std::vector<std::int64_t> per_rank(static_cast<std::size_t>(network.endpoint_count()), 0);
  per_rank[static_cast<std::size_t>(sender)] = 1;
  per_rank[static_cast<std::size_t>(receiver)] = 1;
  expect_transfers(std::move(per_rank));
}

void PointToPoint::launch(std::int32_t rank) {
  if (rank == sender_) send(sender_, receiver_, size_, 0, 0);
}

void PointToPoint::arrived(const Message& /*message*/, Time /*ready*/, std::uint64_t /*tag*/) {}

}  // namespace lockstep
