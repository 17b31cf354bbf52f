#include "sim/cli/interrupt.hpp"

#include <unistd.h>

#include <array>
#include <csignal>
#include <cstring>

namespace lockstep {
namespace {

// A signal handler can only talk to the program through a flag of this type with static storage.
volatile std::sig_atomic_t interrupt_flag = 0;

// The partial output's path, for the handler, which may call unlink() but not allocate.
std::array<char, 4096> partial_output{};

extern "C" void on_interrupt(int signal_number) {
  if (interrupt_flag != 0) {
    if (partial_output[0] != '\0') (void)unlink(partial_output.data());
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
  std::signal(SIGHUP, on_interrupt);
}

bool interrupt_requested() { return interrupt_flag != 0; }

void remove_on_second_signal(const std::filesystem::path& partial) {
  const std::string text = partial.string();
  if (text.size() >= partial_output.size()) return;  // longer than any path the system takes
  std::memcpy(partial_output.data(), text.c_str(), text.size() + 1);
}

}  // namespace lockstep
