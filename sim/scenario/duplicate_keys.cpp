#include "sim/scenario/duplicate_keys.hpp"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace lockstep {

void report_duplicate_keys(const YAML::Node& root, DecodeContext& context) {
  // Iterative: a document nested thousands deep must not exhaust the stack here. Each mapping and
  // sequence is walked once, known by where it starts in the text: an alias is the node it names,
  // and following every alias of an alias bomb would never end.
  std::vector<std::pair<YAML::Node, std::string>> pending{{root, ""}};
  std::set<int> walked;
  while (!pending.empty()) {
    const auto [node, path] = pending.back();
    pending.pop_back();
    if ((node.IsSequence() || node.IsMap()) && !walked.insert(node.Mark().pos).second) continue;
    if (node.IsSequence()) {
      for (std::size_t i = node.size(); i-- > 0;) {
        pending.emplace_back(node[i], path + "[" + std::to_string(i) + "]");
      }
      continue;
    }
    if (!node.IsMap()) continue;
    std::map<std::string, YAML::Mark> seen;
    std::vector<std::pair<YAML::Node, std::string>> children;
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      const std::string key = it->first.Scalar();
      const std::string key_path = path.empty() ? key : path + "." + key;
      const auto [first, inserted] = seen.emplace(key, it->first.Mark());
      if (!inserted) {
        context.error(it->first, key_path,
                      "key given twice (first at line " + std::to_string(first->second.line + 1) +
                          ", column " + std::to_string(first->second.column + 1) +
                          "); YAML allows each key once");
        continue;
      }
      children.emplace_back(it->second, key_path);
    }
    for (auto child = children.rbegin(); child != children.rend(); ++child) {
      pending.push_back(*child);
    }
  }
}

}  // namespace lockstep
