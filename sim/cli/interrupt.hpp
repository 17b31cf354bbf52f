// Ctrl-C, SIGTERM and SIGHUP during a run: the first asks the run loop to stop at the next progress
// check, so that the partial output is discarded cleanly; a second one (as coreutils' timeout and
// some batch schedulers send) ends the process at once, after removing the partial output.
#pragma once

#include <filesystem>

namespace lockstep {

void install_interrupt_handlers();
[[nodiscard]] bool interrupt_requested();
// The file a second signal removes before the process ends: the run's partial output.
void remove_on_second_signal(const std::filesystem::path& partial_output);

}  // namespace lockstep
