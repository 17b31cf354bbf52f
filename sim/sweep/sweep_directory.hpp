// Where a sweep keeps its study: DIR/points/NNNN.h5 for each finished point (written by its own
// `lockstep run`, so complete or absent), NNNN.log with what that run printed, NNNN.failed with
// the message of a point that failed, DIR/points.txt naming every point's overrides (so a resumed
// sweep knows it is the same study), and DIR/index.h5. A point's state is read from these files
// alone, which is what lets any process, on any machine sharing DIR, resume or index the sweep.
#pragma once

#include <filesystem>
#include <string>

#include "sim/sweep/sweep_plan.hpp"

namespace lockstep {

enum class PointState { kPending, kDone, kFailed };

class SweepDirectory {
 public:
  SweepDirectory(std::filesystem::path root, std::size_t points);

  [[nodiscard]] const std::filesystem::path& root() const { return root_; }
  [[nodiscard]] std::filesystem::path point_file(std::size_t index) const;
  [[nodiscard]] std::filesystem::path log_file(std::size_t index) const;
  [[nodiscard]] std::filesystem::path failure_file(std::size_t index) const;
  [[nodiscard]] std::filesystem::path manifest_file() const { return root_ / "points.txt"; }
  [[nodiscard]] std::filesystem::path index_file() const { return root_ / "index.h5"; }

  [[nodiscard]] PointState state(std::size_t index) const;
  [[nodiscard]] std::string failure_message(std::size_t index) const;

 private:
  [[nodiscard]] std::filesystem::path stem(std::size_t index) const;

  std::filesystem::path root_;
  int digits_;
};

// The text of DIR/points.txt for a plan: one line per point with the arguments its run gets.
[[nodiscard]] std::string manifest_text(const SweepPlan& plan);

// Writes `text` to `path` through a temporary file beside it and a rename, so that a reader, or a
// second process writing the same text, never sees half of it. Throws std::runtime_error on
// failure.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace lockstep
