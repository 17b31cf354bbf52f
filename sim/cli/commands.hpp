// The subcommands of the lockstep program. Each takes the arguments after its name and returns the
// process exit status: 0 done, 1 failure of the environment (I/O), 2 bad input, 3 broken invariant,
// 130 interrupted.
#pragma once

#include <string>
#include <vector>

namespace lockstep {

namespace exit_code {
inline constexpr int kOk = 0;
inline constexpr int kFailure = 1;
inline constexpr int kBadInput = 2;
inline constexpr int kInvariant = 3;
inline constexpr int kOutOfMemory = 4;
inline constexpr int kInterrupted = 130;
}  // namespace exit_code

int run_command(const std::vector<std::string>& args);
int validate_command(const std::vector<std::string>& args);
int keys_command(const std::vector<std::string>& args);
int nccl_tests_command(const std::vector<std::string>& args);
int sweep_command(const std::vector<std::string>& args);
// Hands the command line to a Python program of analysis/ (diagnose.py, trace.py, plot.py), which
// replaces this process.
int analysis_command(const std::string& script, const std::vector<std::string>& args);

}  // namespace lockstep
