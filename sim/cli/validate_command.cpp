#include <boost/program_options.hpp>
#include <iostream>

#include "sim/cli/commands.hpp"
#include "sim/cli/scenario_arguments.hpp"
#include "sim/scenario/scenario.hpp"

namespace lockstep {

int validate_command(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  po::options_description options("lockstep validate SCENARIO... [options]");
  ScenarioArguments scenario_arguments;
  bool print_resolved = false;
  options.add_options()("help,h", "show this help")(
      "resolved", po::bool_switch(&print_resolved),
      "print each scenario with every key at its effective value");
  scenario_arguments.add_to(options);
  po::positional_options_description positional;
  positional.add("scenario", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "lockstep validate: " << e.what() << "\n" << options;
    return exit_code::kBadInput;
  }
  if (vm.count("help") != 0 || scenario_arguments.scenario_paths().empty()) {
    std::cout << "Checks scenarios without running them; lists every problem found.\n\n" << options;
    return vm.count("help") != 0 ? exit_code::kOk : exit_code::kBadInput;
  }
  int status = exit_code::kOk;
  for (const std::string& path : scenario_arguments.scenario_paths()) {
    const ScenarioLoad load = load_scenario_file(path, scenario_arguments.overrides());
    if (!load.loaded) {
      for (const Diagnostic& d : load.diagnostics.all()) std::cerr << d.to_string() << "\n";
      status = exit_code::kBadInput;
      continue;
    }
    if (print_resolved) {
      std::cout << "# " << path << "\n" << load.loaded->resolved_yaml;
    } else {
      std::cout << path << ": ok\n";
    }
  }
  return status;
}

}  // namespace lockstep
