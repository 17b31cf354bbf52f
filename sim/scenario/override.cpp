#include "sim/scenario/override.hpp"

#include <charconv>
#include <optional>
#include <variant>
#include <vector>

namespace lockstep {
namespace {

using Step = std::variant<std::string, std::size_t>;  // a key, or an index into a list

// "a.b[2].c" -> a, b, 2, c. Empty when the path is malformed.
std::optional<std::vector<Step>> parse_path(const std::string& path) {
  std::vector<Step> steps;
  std::size_t i = 0;
  while (i <= path.size()) {
    const std::size_t end = path.find_first_of(".[", i);
    const std::string key = path.substr(i, end - i);
    if (key.empty()) return std::nullopt;
    steps.emplace_back(key);
    i = end;
    while (i < path.size() && path[i] == '[') {
      const std::size_t close = path.find(']', i);
      if (close == std::string::npos) return std::nullopt;
      std::size_t index = 0;
      const auto [stop, error] = std::from_chars(path.data() + i + 1, path.data() + close, index);
      if (error != std::errc() || stop != path.data() + close) return std::nullopt;
      steps.emplace_back(index);
      i = close + 1;
    }
    if (i >= path.size()) break;
    if (path[i] != '.') return std::nullopt;
    ++i;
  }
  return steps;
}

}  // namespace

Override set_argument(const std::string& assignment) {
  return Override{assignment, "--set " + assignment};
}

void apply_override(YAML::Node& root, const Override& change, DecodeContext& context,
                    Diagnostics& diagnostics) {
  const std::size_t equals = change.assignment.find('=');
  if (equals == std::string::npos || equals == 0) {
    diagnostics.add(change.origin, "", "expected key.path=value");
    return;
  }
  const std::string key_path = change.assignment.substr(0, equals);
  const std::optional<std::vector<Step>> steps = parse_path(key_path);
  if (!steps) {
    diagnostics.add(change.origin, key_path,
                    "malformed key path (write e.g. job.slow_ranks[0].rank)");
    return;
  }
  const std::string text = change.assignment.substr(equals + 1);
  if (text.find_first_not_of(" \t") == std::string::npos) {
    diagnostics.add(change.origin, key_path,
                    "no value after '=' (to keep the key's default, leave the option out)");
    return;
  }
  YAML::Node value;
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    diagnostics.add(change.origin, key_path, e.msg);
    return;
  }

  if (!root.IsMap()) root = YAML::Node(YAML::NodeType::Map);
  YAML::Node current = root;
  std::string walked;
  for (std::size_t i = 0; i < steps->size(); ++i) {
    const bool last = i + 1 == steps->size();
    if (const auto* key = std::get_if<std::string>(&(*steps)[i])) {
      walked += (walked.empty() ? "" : ".") + *key;
      if (!current.IsMap()) {
        diagnostics.add(change.origin, key_path,
                        "'" + walked + "' is inside a value that is not a mapping");
        return;
      }
      if (last) {
        current[*key] = value;
        break;
      }
      if (!current[*key].IsMap() && !current[*key].IsSequence()) {
        current[*key] = YAML::Node(YAML::NodeType::Map);
      }
      const YAML::Node next = current[*key];
      current.reset(next);
    } else {
      const std::size_t index = std::get<std::size_t>((*steps)[i]);
      if (!current.IsSequence() || index >= current.size()) {
        diagnostics.add(
            change.origin, key_path,
            "'" + walked + "' has no item " + std::to_string(index) +
                (current.IsSequence() ? " (it has " + std::to_string(current.size()) + ")"
                                      : " (it is not a list)"));
        return;
      }
      walked += "[" + std::to_string(index) + "]";
      if (last) {
        current[index] = value;
        break;
      }
      const YAML::Node next = current[index];
      current.reset(next);
    }
  }
  context.note_override(key_path, change.origin);
}

}  // namespace lockstep
