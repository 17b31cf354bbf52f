// Summary statistics of flow completion times (FCT: from a flow's start to the moment its sender
// knows every byte arrived), computed exactly on the integer picosecond values: no interpolation,
// no floating point, no sampling. Percentiles use the nearest-rank definition: the p-th percentile
// of n sorted values is the value of rank ceil(p n / 100) (ranks from 1), always one of the values.
// So the median of an even count is the lower of the two middle values, and p99 of fewer than 100
// flows is the largest. Left out: means and histograms (the "flows" table has every value).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/core/time.hpp"

namespace lockstep {

struct FctStatistics {
  std::int64_t count = 0;
  Duration min;
  Duration median;
  Duration p99;
  Duration max;
};

// The nearest-rank `percent`-th percentile of `sorted` (ascending, not empty); 0 < percent <= 100.
[[nodiscard]] Duration nearest_rank_percentile(const std::vector<Duration>& sorted, int percent);

// Statistics of any order of values; empty when there are none.
[[nodiscard]] std::optional<FctStatistics> fct_statistics(std::vector<Duration> fcts);

}  // namespace lockstep
