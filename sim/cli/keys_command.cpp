#include <iostream>

#include "sim/cli/commands.hpp"
#include "sim/scenario/scenario.hpp"

namespace lockstep {
namespace {

// Defaults are values, quoted as code; the words for "no default" are not.
std::string documented_default(const std::string& text) {
  if (text.empty() || text == "required" || text == "none" || text == "empty") return text;
  return "`" + text + "`";
}

}  // namespace

// Prints the key table that scenarios/README.md carries (a test holds the two equal).
int keys_command(const std::vector<std::string>& args) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << "lockstep keys: prints every scenario key with its type, default and meaning, as "
                 "the table in scenarios/README.md\n";
    return exit_code::kOk;
  }
  if (!args.empty()) {
    std::cerr << "lockstep keys: takes no arguments\n";
    return exit_code::kBadInput;
  }
  std::cout << "| key | type | default | meaning |\n|---|---|---|---|\n";
  for (const KeyDoc& key : scenario_keys()) {
    std::cout << "| `" << key.path << "` | " << key.type << " | "
              << documented_default(key.default_text) << " | " << key.description << " |\n";
  }
  return exit_code::kOk;
}

}  // namespace lockstep
