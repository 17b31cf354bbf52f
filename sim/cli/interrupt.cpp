#include "sim/cli/interrupt.hpp"

#include <csignal>

namespace lockstep {
namespace {

// A signal handler can only talk to the program through a flag of this type with static storage.
volatile std::sig_atomic_t interrupt_flag = 0;

extern "C" void on_interrupt(int signal_number) {
  if (interrupt_flag != 0) {
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
    return;
  }
  interrupt_flag = 1;
}

}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
}

bool interrupt_requested() { return interrupt_flag != 0; }

}  // namespace lockstep
