// The few figures of a finished point that a study compares across points (step time, MFU, the
// flows' p99 FCT, pause frames, how the run ended), read back from the point's own HDF5 file so
// that a resumed sweep indexes the points an earlier process ran exactly as its own.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>

namespace lockstep {

struct PointHeadline {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

  std::string kind;     // /meta/kind
  std::string outcome;  // /meta/outcome
  std::int64_t end_ps = -1;
  std::int64_t steps = 0;          // finished steps, every attempt's
  std::int64_t step_time_ps = -1;  // median over them; -1 without a job
  double mfu = kNone;              // medians, likewise
  double tflops_per_gpu = kNone;
  double tokens_per_second = kNone;
  double goodput = kNone;        // useful over total time
  std::int64_t flows = 0;        // a traffic run's completed flows
  std::int64_t fct_p99_ps = -1;  // their 99th percentile FCT (nearest rank); -1 without any
  std::int64_t pauses_sent = 0;  // PFC pause frames, every port and class
  std::int64_t ecn_marked = 0;
  std::int64_t dropped_packets = 0;
};

// Throws H5::Exception if the file is not a lockstep run's.
[[nodiscard]] PointHeadline read_point_headline(const std::filesystem::path& run_file);

}  // namespace lockstep
