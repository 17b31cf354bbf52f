#include "models/traffic/traffic_statistics.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace lockstep {

Duration nearest_rank_percentile(const std::vector<Duration>& sorted, int percent) {
  if (sorted.empty()) throw std::invalid_argument("nearest_rank_percentile: no values");
  if (percent <= 0 || percent > 100) {
    throw std::invalid_argument("nearest_rank_percentile: percent must lie in (0, 100], got " +
                                std::to_string(percent));
  }
  // ceil(p n / 100) in integers; p n / 100 > 0, so the rank is at least 1.
  const auto n = static_cast<std::uint64_t>(sorted.size());
  const std::uint64_t rank = (static_cast<std::uint64_t>(percent) * n + 99) / 100;
  return sorted[static_cast<std::size_t>(rank - 1)];
}

std::optional<FctStatistics> fct_statistics(std::vector<Duration> fcts) {
  if (fcts.empty()) return {};
  std::sort(fcts.begin(), fcts.end());
  return FctStatistics{.count = static_cast<std::int64_t>(fcts.size()),
                       .min = fcts.front(),
                       .median = nearest_rank_percentile(fcts, 50),
                       .p99 = nearest_rank_percentile(fcts, 99),
                       .max = fcts.back()};
}

}  // namespace lockstep
