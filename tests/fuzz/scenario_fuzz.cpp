// libFuzzer target: the scenario loader, from YAML text to a checked, resolved scenario. Whatever
// the text, it loads or yields diagnostics (no crash, no undefined behaviour, no exception), and a
// scenario that loads resolves to YAML that loads again to the same resolution.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/scenario/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const lockstep::ScenarioLoad load = lockstep::load_scenario_text(text, "fuzz.yaml", {});
  if (!load.loaded) {
    if (load.diagnostics.empty()) __builtin_trap();  // a refusal always says why
    return 0;
  }
  const lockstep::ScenarioLoad again =
      lockstep::load_scenario_text(load.loaded->resolved_yaml, "resolved.yaml", {});
  if (!again.loaded || again.loaded->resolved_yaml != load.loaded->resolved_yaml) __builtin_trap();
  return 0;
}
