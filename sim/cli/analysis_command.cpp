#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "sim/cli/commands.hpp"

namespace lockstep {
namespace {

// Where the analysis scripts are: the source tree this program was built from, unless
// LOCKSTEP_ANALYSIS_DIR says otherwise (a copied program, an installed tree).
std::filesystem::path analysis_directory() {
  const char* chosen = std::getenv("LOCKSTEP_ANALYSIS_DIR");
  return chosen != nullptr ? std::filesystem::path(chosen)
                           : std::filesystem::path(LOCKSTEP_ANALYSIS_DIR);
}

// The interpreter with h5py, pandas and matplotlib: Debian's, unless LOCKSTEP_PYTHON says.
std::string python() {
  const char* chosen = std::getenv("LOCKSTEP_PYTHON");
  return chosen != nullptr ? chosen : LOCKSTEP_SYSTEM_PYTHON;
}

}  // namespace

int analysis_command(const std::string& script, const std::vector<std::string>& args) {
  const std::filesystem::path directory = analysis_directory();
  const std::filesystem::path program = directory / script;
  if (!std::filesystem::is_regular_file(program)) {
    std::cerr << "lockstep: " << program.string()
              << " is missing: set LOCKSTEP_ANALYSIS_DIR to the analysis/ directory of lockstep's "
                 "source tree\n";
    return exit_code::kFailure;
  }
  const char* inherited = std::getenv("PYTHONPATH");
  const std::string path =
      directory.string() +
      (inherited != nullptr && *inherited != '\0' ? ":" + std::string(inherited) : "");
  setenv("PYTHONPATH", path.c_str(), 1);
  std::vector<std::string> arguments = {python(), program.string()};
  arguments.insert(arguments.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  std::cout.flush();
  execv(argv[0], argv.data());
  std::cerr << "lockstep: cannot run " << arguments[0] << ": " << std::strerror(errno)
            << " (set LOCKSTEP_PYTHON to an interpreter with h5py, pandas and matplotlib)\n";
  return exit_code::kFailure;
}

}  // namespace lockstep
