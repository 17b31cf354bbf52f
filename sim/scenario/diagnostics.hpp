// Problems found in a scenario, collected rather than thrown so that one pass reports all of them,
// each as `file:line:col: key.path: message` (lines and columns from 1), the form editors jump to.
#pragma once

#include <string>
#include <vector>

namespace lockstep {

struct Diagnostic {
  std::string where;  // "file:line:col", or the --set argument that supplied the value
  std::string key_path;
  std::string message;

  [[nodiscard]] std::string to_string() const;
};

class Diagnostics {
 public:
  void add(std::string where, std::string key_path, std::string message) {
    all_.push_back(Diagnostic{std::move(where), std::move(key_path), std::move(message)});
  }
  [[nodiscard]] bool empty() const { return all_.empty(); }
  [[nodiscard]] const std::vector<Diagnostic>& all() const { return all_; }

 private:
  std::vector<Diagnostic> all_;
};

}  // namespace lockstep
