#include "sim/scenario/decode_context.hpp"

namespace lockstep {

std::string DecodeContext::where(const YAML::Node& node, const std::string& key_path) const {
  for (const auto& [path, origin] : overrides_) {
    const bool inside =
        key_path == path || (key_path.size() > path.size() && key_path.starts_with(path) &&
                             (key_path[path.size()] == '.' || key_path[path.size()] == '['));
    if (inside) return origin;
  }
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) {
    // A node no file holds was made by an override: the one that reaches below this key.
    for (const auto& [path, origin] : overrides_) {
      if (path.size() > key_path.size() && path.starts_with(key_path) &&
          (path[key_path.size()] == '.' || path[key_path.size()] == '[')) {
        return origin;
      }
    }
    return file_;
  }
  return file_ + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

}  // namespace lockstep
