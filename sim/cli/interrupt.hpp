// Ctrl-C and SIGTERM during a run: the first asks the run loop to stop at the next progress check,
// so that the partial output is discarded cleanly; a second one ends the process at once.
#pragma once

namespace lockstep {

void install_interrupt_handlers();
[[nodiscard]] bool interrupt_requested();

}  // namespace lockstep
