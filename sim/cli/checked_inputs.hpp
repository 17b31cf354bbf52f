// What every command that runs something checks before it starts: the scenario loads (else its
// problems are printed, one per line, file:line:col first), and the output file can be written
// where asked (its directory exists and it is not itself a directory). Both report to stderr under
// the command's name and leave nothing behind.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/scenario/override.hpp"
#include "sim/scenario/scenario.hpp"

namespace lockstep {

[[nodiscard]] std::optional<LoadedScenario> load_or_report(const std::string& command,
                                                           const std::filesystem::path& scenario,
                                                           const std::vector<Override>& overrides);

[[nodiscard]] bool output_writable(const std::string& command, const std::filesystem::path& output);

}  // namespace lockstep
