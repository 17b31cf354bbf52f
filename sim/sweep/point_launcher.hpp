// Runs sweep points as child processes, `lockstep run BASE --set ... -o DIR/points/NNNN.h5`, each
// with its output to its own log, as many at a time as the caller allows. A child is the program
// itself (/proc/self/exe), so a sweep runs the version that planned it, and a point that crashes or
// runs out of memory takes only itself down. Children get SIGTERM if the sweep dies, so that a
// killed sweep leaves no run behind it writing.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "sim/sweep/sweep_directory.hpp"
#include "sim/sweep/sweep_plan.hpp"

namespace lockstep {

struct FinishedPoint {
  std::size_t index = 0;
  bool succeeded = false;
  bool interrupted = false;  // stopped by a signal: neither done nor failed
  double wall_seconds = 0;
  std::string message;  // a failed point's, as recorded in its .failed file
};

class PointLauncher {
 public:
  PointLauncher(const SweepPlan& plan, const SweepDirectory& directory);

  void start(const SweepPoint& point);
  [[nodiscard]] std::size_t running() const { return children_.size(); }
  // The next child to end, if one has (or, with `block`, once one does); records its failure.
  [[nodiscard]] std::optional<FinishedPoint> collect(bool block);
  // Asks every child to stop (as Ctrl-C would: each removes its partial output) and waits.
  void stop_all();

 private:
  struct Child {
    std::size_t index;
    std::chrono::steady_clock::time_point started;
  };

  [[nodiscard]] FinishedPoint finish(pid_t pid, int status);

  const SweepPlan& plan_;
  const SweepDirectory& directory_;
  std::filesystem::path program_;
  std::map<pid_t, Child> children_;
};

}  // namespace lockstep
