#include "sim/run/peak_memory.hpp"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace lockstep {

std::optional<Bytes> peak_resident_memory() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    std::int64_t kibibytes = 0;
    std::string unit;
    if (fields >> kibibytes >> unit && unit == "kB") return Bytes(kibibytes * 1024);
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace lockstep
