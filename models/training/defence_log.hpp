// The `defences` table: one row each time a defence acts (a watchdog fires, a node is drained, a
// job restarts, a PFC watchdog stops a storm), with what it acted on and why, so that a run shows
// when the cluster reacted and to what (analysis/hdf5_schema.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/core/table.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

struct DefenceRow {
  FixedText<24> defence;  // watchdog, health_check, straggler_detector, restart, ...
  std::int64_t at_ps;
  FixedText<48> target;   // "rank 5", "node 3", "nic 12"
  FixedText<200> detail;  // for people: the figures behind the action
};

[[nodiscard]] TableLayout defence_layout();

class DefenceLog {
 public:
  explicit DefenceLog(RecordBackend& output) : rows_(output, defence_layout()) {}

  void record(std::string_view defence, Time at, const std::string& target,
              const std::string& detail) {
    rows_.append(DefenceRow{defence, at.ps(), std::string_view(target), std::string_view(detail)});
  }
  [[nodiscard]] std::size_t actions() const { return rows_.rows(); }
  void flush() { rows_.flush(); }

 private:
  Table<DefenceRow> rows_;
};

}  // namespace lockstep
