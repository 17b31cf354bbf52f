// Configuration of the synchronous data-parallel job (see data_parallel_job.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "models/collective/alpha_beta.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

struct SlowRank {
  std::int64_t rank = 0;
  double slowdown = 0.0;  // extra compute time as a share: 0.1 makes every step 10% longer
};

struct GradientAllReduce {
  AllReduceAlgorithm algorithm = AllReduceAlgorithm::kRing;
  Duration latency;   // alpha: per step of the collective
  BitRate bandwidth;  // 1/beta: per rank

  [[nodiscard]] AlphaBeta cost() const { return AlphaBeta{latency, bandwidth}; }
};

struct DataParallelJobConfig {
  std::int64_t ranks = 0;
  std::int64_t steps = 0;
  Duration compute_per_step;    // mean forward + backward time of one rank
  double compute_jitter = 0.0;  // coefficient of variation of a rank's compute time per step
  Bytes gradient_size;          // all-reduced once per step
  GradientAllReduce all_reduce;
  std::vector<SlowRank> slow_ranks;
  // On a network: the network rank (GPU) each job rank runs on, in job-rank order; empty: the
  // first `ranks` ones, in order.
  std::vector<std::int32_t> placement;
};

}  // namespace lockstep
