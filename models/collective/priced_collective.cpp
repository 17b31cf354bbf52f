#include "models/collective/priced_collective.hpp"

#include <algorithm>

namespace lockstep {

PricedCollective::PricedCollective(Simulator& sim, std::int32_t endpoints,
                                   std::vector<std::int32_t> participants, Duration time)
    : Collective(sim, endpoints, std::move(participants)),
      endpoints_(endpoints),
      time_(time),
      yet_to_join_(static_cast<std::int64_t>(this->participants().size())) {}

std::vector<RankTransferTimes> PricedCollective::rank_transfer_times() const {
  return std::vector<RankTransferTimes>(static_cast<std::size_t>(endpoints_));
}

void PricedCollective::on_arrival(std::int32_t /*rank*/, Time at) { joined(at); }

void PricedCollective::on_arrivals(const std::vector<std::int32_t>& ranks) {
  for (std::size_t i = 0; i < ranks.size(); ++i) joined(sim_.now());
}

void PricedCollective::joined(Time at) {
  last_join_ = std::max(last_join_, at);
  if (--yet_to_join_ == 0) schedule_counted<&PricedCollective::end>(last_join_ + time_, this);
}

void PricedCollective::end() {
  event_ran();
  if (!running()) return;
  for (const std::int32_t rank : participants()) rank_done(rank, sim_.now());
  all_done(sim_.now());
}

}  // namespace lockstep
