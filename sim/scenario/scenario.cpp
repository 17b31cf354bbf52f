#include "sim/scenario/scenario.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sim/scenario/job_schema.hpp"

namespace lockstep {
namespace {

Schema<SimulationConfig> simulation_schema() {
  Schema<SimulationConfig> s;
  s.value("seed", &SimulationConfig::seed, "1",
          "master seed; every random stream derives from it (--seed overrides)")
      .value("until", &SimulationConfig::until, std::nullopt,
             "stop at this simulated time even if work remains (--until overrides)");
  return s;
}

const Schema<Scenario>& scenario_schema() {
  static const Schema<Scenario> schema = [] {
    Schema<Scenario> s;
    s.section("simulation", &Scenario::simulation, simulation_schema(), "engine settings")
        .section("job", &Scenario::job, job_schema(), "the training job");
    return s;
  }();
  return schema;
}

ScenarioLoad decode(YAML::Node root, const std::string& name,
                    const std::vector<Override>& overrides) {
  ScenarioLoad result;
  DecodeContext context(name, result.diagnostics);
  for (const Override& change : overrides)
    apply_override(root, change, context, result.diagnostics);
  if (!result.diagnostics.empty()) return result;
  Scenario scenario;
  scenario_schema().decode(root, root, "", scenario, context);
  if (!result.diagnostics.empty()) return result;
  YAML::Emitter emitter;
  scenario_schema().encode(scenario, emitter);
  result.loaded = LoadedScenario{std::move(scenario), std::string(emitter.c_str()) + "\n"};
  return result;
}

}  // namespace

ScenarioLoad load_scenario_text(std::string_view text, const std::string& name,
                                const std::vector<Override>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    ScenarioLoad result;
    result.diagnostics.add(
        name + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1), "",
        e.msg);
    return result;
  }
  return decode(root, name, overrides);
}

ScenarioLoad load_scenario_file(const std::filesystem::path& path,
                                const std::vector<Override>& overrides) {
  std::ifstream in(path);
  if (!in) {
    const int reason = errno;
    ScenarioLoad result;
    result.diagnostics.add(path.string(), "",
                           "cannot read the scenario file: " + std::string(std::strerror(reason)));
    return result;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return load_scenario_text(text.str(), path.string(), overrides);
}

std::vector<KeyDoc> scenario_keys() {
  std::vector<KeyDoc> keys;
  scenario_schema().document("", keys);
  return keys;
}

}  // namespace lockstep
