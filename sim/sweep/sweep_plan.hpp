// A sweep file: one base scenario and the scenario keys to vary, expanded into the points of the
// study, each a list of `--set` overrides (and a seed when repetitions are asked for). The points'
// order is fixed by the file alone, so every process of a sweep, and every resumption of it,
// numbers them alike.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/diagnostics.hpp"

namespace lockstep {

struct SweepSetting {
  std::string key;    // a scenario key path, as `--set` takes it
  std::string value;  // YAML text, as `--set` takes it
};

struct SweepPoint {
  std::size_t index = 0;
  std::vector<SweepSetting> settings;  // the fixed `set:` first, then the varied keys
  std::optional<std::uint64_t> seed;
};

struct SweepPlan {
  std::filesystem::path base;           // the base scenario, made absolute
  std::vector<std::string> parameters;  // the varied keys, in the file's order
  bool seeded = false;                  // whether the file asks for `seeds`
  std::vector<SweepPoint> points;

  // The value the point gives a varied key.
  [[nodiscard]] static const std::string& value_of(const SweepPoint& point,
                                                   const std::string& parameter);
};

struct SweepPlanLoad {
  std::optional<SweepPlan> plan;  // empty when there are diagnostics
  Diagnostics diagnostics;
};

// A study larger than this is a mistake in a range's step, not a plan.
inline constexpr std::size_t kMostSweepPoints = 100'000;

[[nodiscard]] SweepPlanLoad load_sweep_file(const std::filesystem::path& path);

}  // namespace lockstep
