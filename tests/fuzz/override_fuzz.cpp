// libFuzzer target: `--set` overrides on the worked example. Whatever the assignment, the scenario
// loads or yields diagnostics naming the argument (no crash, no undefined behaviour), and one that
// loads resolves to YAML that loads again to the same resolution.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/scenario/scenario.hpp"

namespace {

const std::string& worked_example() {
  static const std::string text = [] {
    std::ifstream in(LOCKSTEP_SOURCE_DIR "/scenarios/worked-example.yaml");
    std::ostringstream read;
    read << in.rdbuf();
    return read.str();
  }();
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string assignment(reinterpret_cast<const char*>(data), size);
  const lockstep::ScenarioLoad load = lockstep::load_scenario_text(
      worked_example(), "worked-example.yaml", {lockstep::set_argument(assignment)});
  if (!load.loaded) {
    if (load.diagnostics.empty()) __builtin_trap();
    return 0;
  }
  const lockstep::ScenarioLoad again =
      lockstep::load_scenario_text(load.loaded->resolved_yaml, "resolved.yaml", {});
  if (!again.loaded || again.loaded->resolved_yaml != load.loaded->resolved_yaml) __builtin_trap();
  return 0;
}
