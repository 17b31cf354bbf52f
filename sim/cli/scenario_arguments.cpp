#include "sim/cli/scenario_arguments.hpp"

namespace lockstep {

std::filesystem::path default_scenario_path() {
  return std::filesystem::path(LOCKSTEP_SCENARIO_DIR) / "worked-example.yaml";
}

void ScenarioArguments::add_to(boost::program_options::options_description& options) {
  namespace po = boost::program_options;
  options.add_options()("scenario", po::value(&scenarios_), "scenario file (YAML)")(
      "set", po::value(&sets_)->composing(),
      "override a scenario key: --set job.ranks=128 (repeatable)")(
      "seed", po::value<std::string>()->notifier([this](const std::string& v) { seed_ = v; }),
      "master seed (same as --set simulation.seed=N)")(
      "until", po::value<std::string>()->notifier([this](const std::string& v) { until_ = v; }),
      "stop at this simulated time, e.g. 10s");
}

std::filesystem::path ScenarioArguments::scenario_path() const {
  return scenarios_.empty() ? default_scenario_path() : std::filesystem::path(scenarios_.front());
}

std::vector<Override> ScenarioArguments::overrides() const {
  std::vector<Override> all;
  for (const std::string& assignment : sets_) all.push_back(set_argument(assignment));
  if (seed_) all.push_back(Override{"simulation.seed=" + *seed_, "--seed " + *seed_});
  if (until_) all.push_back(Override{"simulation.until=" + *until_, "--until " + *until_});
  return all;
}

}  // namespace lockstep
