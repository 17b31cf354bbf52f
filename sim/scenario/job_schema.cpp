#include "sim/scenario/job_schema.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

namespace lockstep {
namespace {

Schema<GradientAllReduce> all_reduce_schema() {
  Schema<GradientAllReduce> s;
  s.choice("algorithm", &GradientAllReduce::algorithm,
           {{"ring", AllReduceAlgorithm::kRing},
            {"recursive_doubling", AllReduceAlgorithm::kRecursiveDoubling},
            {"rabenseifner", AllReduceAlgorithm::kRabenseifner}},
           "ring", "the recursive algorithms need a power-of-two rank count")
      .value("latency", &GradientAllReduce::latency, "10us",
             "latency of one step of the collective (alpha)")
      .value("bandwidth", &GradientAllReduce::bandwidth, "400Gbps",
             "per-rank bandwidth of the collective (1/beta)", above(BitRate::bps(0)));
  return s;
}

Schema<SlowRank> slow_rank_schema() {
  Schema<SlowRank> s;
  s.value("rank", &SlowRank::rank, std::nullopt, "which rank is slow", at_least<std::int64_t>(0))
      .value("slowdown", &SlowRank::slowdown, std::nullopt,
             "extra compute time per step, e.g. 10% (a thermally throttled GPU)", at_least(0.0));
  return s;
}

// A log-normal of a larger coefficient of variation draws steps of any length: 1000% is already
// beyond any GPU measured.
constexpr double kMostJitter = 10.0;

Constraint<double> between(double low, double high) {
  return [low, high](const double& v) -> std::optional<std::string> {
    if (v < low || v > high) {
      return "must lie between " + Codec<double>::format(low) + " and " +
             Codec<double>::format(high);
    }
    return std::nullopt;
  };
}

// The job's simulated length in seconds, counted in doubles so that absurd inputs cannot
// overflow the count itself, when it would pass the picosecond clock's range (with room for the
// log-normal's spread); empty otherwise.
std::optional<double> too_long(const DataParallelJobConfig& job) {
  double slowest = 0.0;
  for (const SlowRank& slow : job.slow_ranks) slowest = std::max(slowest, slow.slowdown);
  const double ranks = static_cast<double>(job.ranks);
  // The ring's 2(n-1) steps, each a latency and the n-th part of the data at the bandwidth: the
  // slowest of the three alpha-beta algorithms at large sizes is within a factor 2 of it.
  const double all_reduce = 2.0 * (ranks - 1) *
                            (job.all_reduce.latency.seconds() +
                             static_cast<double>(job.gradient_size.count()) * 8 / ranks /
                                 static_cast<double>(job.all_reduce.bandwidth.bps()));
  const double step =
      job.compute_per_step.seconds() * (1 + slowest) * (1 + 4 * job.compute_jitter) +
      2 * all_reduce;
  const double total = step * static_cast<double>(job.steps);
  constexpr double kLongestSeconds = 9.2e6;  // 2^63 ps
  if (!(total < kLongestSeconds / 2)) return total;
  return std::nullopt;
}

}  // namespace

Schema<DataParallelJobConfig> job_schema() {
  using Job = DataParallelJobConfig;
  Schema<Job> s;
  s.value("ranks", &Job::ranks, "64", "data-parallel ranks", at_least<std::int64_t>(1))
      .value("steps", &Job::steps, "20", "training steps to run", at_least<std::int64_t>(1))
      .value("compute_per_step", &Job::compute_per_step, "400ms",
             "mean forward + backward time of one rank per step", above(Duration()))
      .value("compute_jitter", &Job::compute_jitter, "2%",
             "coefficient of variation of a rank's compute time per step (log-normal)",
             between(0.0, kMostJitter))
      .value("gradient_size", &Job::gradient_size, "2.6GB", "gradient bytes all-reduced per step",
             at_least(Bytes()))
      .section("all_reduce", &Job::all_reduce, all_reduce_schema(),
               "the gradient all-reduce, priced by the alpha-beta model")
      .list("slow_ranks", &Job::slow_ranks, slow_rank_schema(), "ranks whose compute is slower")
      .rank_list("placement", &Job::placement,
                 "on a network: the GPU (network rank) each job rank runs on, in rank order "
                 "(default: the first ones, in order)")
      .check([](const Job& job, const Schema<Job>::Checker& report) {
        if (needs_power_of_two_ranks(job.all_reduce.algorithm) &&
            !std::has_single_bit(static_cast<std::uint64_t>(job.ranks))) {
          report.error("ranks", std::to_string(job.ranks) +
                                    " ranks: the chosen all-reduce algorithm needs a power of two");
        }
        if (!job.placement.empty() &&
            static_cast<std::int64_t>(job.placement.size()) != job.ranks) {
          report.error("placement", "places " + std::to_string(job.placement.size()) +
                                        " ranks; the job has " + std::to_string(job.ranks));
        }
        std::vector<std::int32_t> placed = job.placement;
        std::sort(placed.begin(), placed.end());
        if (std::adjacent_find(placed.begin(), placed.end()) != placed.end()) {
          report.error("placement", "places two ranks on one GPU");
        }
        if (const std::optional<double> seconds = too_long(job)) {
          char line[200];
          std::snprintf(line, sizeof line,
                        "%.3g s of steps (compute, the slowest rank's slowdown and the "
                        "all-reduce): the run would pass the longest simulated time, about "
                        "106 days",
                        *seconds);
          report.error("steps", line);
        }
        for (std::size_t i = 0; i < job.slow_ranks.size(); ++i) {
          if (job.slow_ranks[i].rank >= job.ranks) {
            report.error("slow_ranks[" + std::to_string(i) + "].rank",
                         "rank " + std::to_string(job.slow_ranks[i].rank) +
                             " does not exist (ranks: " + std::to_string(job.ranks) + ")");
          }
        }
      });
  return s;
}

}  // namespace lockstep
