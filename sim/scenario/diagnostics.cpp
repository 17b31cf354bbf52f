#include "sim/scenario/diagnostics.hpp"

namespace lockstep {

std::string Diagnostic::to_string() const {
  std::string out = where + ": ";
  if (!key_path.empty()) out += key_path + ": ";
  return out + message;
}

}  // namespace lockstep
