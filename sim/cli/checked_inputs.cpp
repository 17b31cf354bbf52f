#include "sim/cli/checked_inputs.hpp"

#include <iostream>

namespace lockstep {

std::optional<LoadedScenario> load_or_report(const std::string& command,
                                             const std::filesystem::path& scenario,
                                             const std::vector<Override>& overrides) {
  ScenarioLoad load = load_scenario_file(scenario, overrides);
  if (load.loaded) return std::move(*load.loaded);
  for (const Diagnostic& d : load.diagnostics.all()) std::cerr << d.to_string() << "\n";
  std::cerr << "lockstep " << command << ": " << load.diagnostics.all().size()
            << " problem(s) in the scenario; nothing was run\n";
  return std::nullopt;
}

bool output_writable(const std::string& command, const std::filesystem::path& output) {
  const std::filesystem::path directory = output.parent_path().empty() ? "." : output.parent_path();
  if (!std::filesystem::is_directory(directory)) {
    std::cerr << "lockstep " << command << ": cannot write '" << output.string() << "': directory '"
              << directory.string() << "' does not exist\n";
    return false;
  }
  if (std::filesystem::is_directory(output)) {
    std::cerr << "lockstep " << command << ": cannot write '" << output.string()
              << "': it is a directory\n";
    return false;
  }
  // The output replaces what is there: never a device, a pipe or a socket.
  std::error_code error;
  const std::filesystem::file_status existing = std::filesystem::status(output, error);
  if (std::filesystem::exists(existing) && !std::filesystem::is_regular_file(existing)) {
    std::cerr << "lockstep " << command << ": cannot write '" << output.string()
              << "': it is not a regular file (a device, a pipe or a socket), which lockstep "
                 "would replace\n";
    return false;
  }
  return true;
}

}  // namespace lockstep
