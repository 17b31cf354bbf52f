#include "sim/scenario/scenario.hpp"

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

// Applies one --set argument to the document, creating mappings along the path as needed.
void apply_override(YAML::Node& root, const std::string& argument, DecodeContext& context,
                    Diagnostics& diagnostics) {
  const std::size_t equals = argument.find('=');
  if (equals == std::string::npos || equals == 0) {
    diagnostics.add("--set " + argument, "", "expected key.path=value");
    return;
  }
  const std::string key_path = argument.substr(0, equals);
  YAML::Node value;
  try {
    value = YAML::Load(argument.substr(equals + 1));
  } catch (const YAML::Exception& e) {
    diagnostics.add("--set " + argument, key_path, e.msg);
    return;
  }
  if (!root.IsMap()) root = YAML::Node(YAML::NodeType::Map);
  YAML::Node current = root;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key_path.find('.', start);
    const std::string key = key_path.substr(start, dot - start);
    if (key.empty()) {
      diagnostics.add("--set " + argument, key_path, "empty key in path");
      return;
    }
    if (dot == std::string::npos) {
      current[key] = value;
      break;
    }
    if (!current[key].IsMap()) current[key] = YAML::Node(YAML::NodeType::Map);
    YAML::Node next = current[key];
    current.reset(next);
    start = dot + 1;
  }
  context.note_override(key_path, argument);
}

ScenarioLoad decode(YAML::Node root, const std::string& name,
                    const std::vector<std::string>& overrides) {
  ScenarioLoad result;
  DecodeContext context(name, result.diagnostics);
  for (const std::string& argument : overrides) {
    apply_override(root, argument, context, result.diagnostics);
  }
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
                                const std::vector<std::string>& overrides) {
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
                                const std::vector<std::string>& overrides) {
  std::ifstream in(path);
  if (!in) {
    ScenarioLoad result;
    result.diagnostics.add(path.string(), "", "cannot read the scenario file");
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
