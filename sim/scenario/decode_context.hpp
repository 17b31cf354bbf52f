// State shared while one scenario is decoded: the file name for messages, the diagnostics being
// collected, and which key paths came from the command line (their values have no place in the
// file, so messages about them name the argument instead).
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>

#include "sim/scenario/diagnostics.hpp"

namespace lockstep {

class DecodeContext {
 public:
  DecodeContext(std::string file, Diagnostics& diagnostics)
      : file_(std::move(file)), diagnostics_(diagnostics) {}

  // `origin` is the argument as the user typed it, e.g. "--set job.ranks=8".
  void note_override(std::string key_path, std::string origin) {
    overrides_[std::move(key_path)] = std::move(origin);
  }

  [[nodiscard]] std::size_t error_count() const { return diagnostics_.all().size(); }

  void error(const YAML::Node& node, const std::string& key_path, std::string message) {
    diagnostics_.add(where(node, key_path), key_path, std::move(message));
  }

 private:
  [[nodiscard]] std::string where(const YAML::Node& node, const std::string& key_path) const;

  std::string file_;
  Diagnostics& diagnostics_;
  std::map<std::string, std::string> overrides_;
};

}  // namespace lockstep
