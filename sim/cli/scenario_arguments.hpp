// The command-line arguments that choose and adjust a scenario, shared by `run` and `validate`:
// positional scenario files, --set key.path=value, and the shorthands --seed and --until. Every
// adjustment becomes a --set override, so one code path decodes and reports them.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/override.hpp"

namespace lockstep {

// scenarios/default.yaml of the source tree this program was built from.
[[nodiscard]] std::filesystem::path default_scenario_path();

class ScenarioArguments {
 public:
  void add_to(boost::program_options::options_description& options);

  // The one scenario named, or the default one.
  [[nodiscard]] std::filesystem::path scenario_path() const;
  [[nodiscard]] const std::vector<std::string>& scenario_paths() const { return scenarios_; }
  // --set arguments in order, then --seed and --until, which therefore win.
  [[nodiscard]] std::vector<Override> overrides() const;
  [[nodiscard]] bool until_given() const { return until_.has_value(); }

 private:
  std::vector<std::string> scenarios_;
  std::vector<std::string> sets_;
  std::optional<std::string> seed_;  // given, even if empty (then refused)
  std::optional<std::string> until_;
};

}  // namespace lockstep
