#include "models/traffic/traffic.hpp"

#include <cstddef>
#include <string>
#include <utility>

namespace lockstep {
namespace {

std::string flow_key(std::size_t index) { return "flows[" + std::to_string(index) + "]"; }

// The predecessor of `flow` when it names another flow that exists, else nothing: an `after` that
// is out of range or names the flow itself is reported on its own and must not also count as a
// cycle.
std::optional<std::size_t> valid_predecessor(const std::vector<FlowSpec>& flows, std::size_t flow) {
  const std::optional<std::int64_t>& after = flows[flow].after;
  if (!after || *after < 0 || *after >= static_cast<std::int64_t>(flows.size())) return {};
  const auto predecessor = static_cast<std::size_t>(*after);
  if (predecessor == flow) return {};
  return predecessor;
}

// Each flow waits on at most one other, so following `after` from any flow either ends at a flow
// that starts on its own or runs into a cycle. One walk per flow, never revisiting a flow a
// previous walk settled, finds every cycle in time linear in the list.
void report_cycles(const std::vector<FlowSpec>& flows, std::vector<std::string>& problems) {
  enum class Mark : std::uint8_t { kUnvisited, kOnWalk, kSettled };
  std::vector<Mark> marks(flows.size(), Mark::kUnvisited);
  std::vector<std::size_t> walk;
  for (std::size_t first = 0; first < flows.size(); ++first) {
    walk.clear();
    std::optional<std::size_t> at = first;
    while (at && marks[*at] == Mark::kUnvisited) {
      marks[*at] = Mark::kOnWalk;
      walk.push_back(*at);
      at = valid_predecessor(flows, *at);
    }
    if (at && marks[*at] == Mark::kOnWalk) {
      // The cycle is the part of this walk from the first visit of `*at` on.
      std::size_t begin = 0;
      while (walk[begin] != *at) ++begin;
      constexpr std::size_t kNamed = 8;
      std::string members;
      for (std::size_t k = begin; k < walk.size() && k < begin + kNamed; ++k) {
        members += (k == begin ? "" : " -> ") + std::to_string(walk[k]);
      }
      if (walk.size() - begin > kNamed) {
        members += " -> ... (" + std::to_string(walk.size() - begin) + " flows)";
      }
      members += " -> " + std::to_string(*at);
      problems.push_back(flow_key(*at) + ".after: the flows " + members +
                         " wait on one another in a cycle, so none of them would ever start");
    }
    for (std::size_t flow : walk) marks[flow] = Mark::kSettled;
  }
}

}  // namespace

std::vector<std::string> flow_list_problems(const std::vector<FlowSpec>& flows,
                                            std::int32_t endpoint_count) {
  std::vector<std::string> problems;
  const std::string endpoints =
      endpoint_count > 0 ? "(0.." + std::to_string(endpoint_count - 1) + ")" : "(it has none)";
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const FlowSpec& flow = flows[i];
    const std::string key = flow_key(i);
    for (const auto& [name, endpoint] :
         {std::pair{"source", flow.source}, std::pair{"destination", flow.destination}}) {
      if (endpoint < 0 || endpoint >= endpoint_count) {
        problems.push_back(key + "." + name + ": " + std::to_string(endpoint) +
                           " is not an endpoint of this network " + endpoints);
      }
    }
    if (flow.source == flow.destination) {
      problems.push_back(key + ".destination: endpoint " + std::to_string(flow.source) +
                         " would send to itself, which never crosses the network");
    }
    if (flow.size <= Bytes(0)) {
      problems.push_back(key + ".size: " + std::to_string(flow.size.count()) +
                         " B; a flow carries at least one byte");
    }
    if (flow.start < Duration()) {
      problems.push_back(
          key + ".start: " + std::to_string(flow.start.ps()) +
          " ps; a start is an offset from the flow's trigger and cannot be negative");
    }
    if (flow.after) {
      const std::int64_t after = *flow.after;
      if (after < 0 || after >= static_cast<std::int64_t>(flows.size())) {
        problems.push_back(key + ".after: " + std::to_string(after) +
                           " is not a flow of this list (0.." + std::to_string(flows.size() - 1) +
                           ")");
      } else if (static_cast<std::size_t>(after) == i) {
        problems.push_back(key + ".after: the flow waits on itself, so it would never start");
      }
    }
  }
  report_cycles(flows, problems);
  return problems;
}

}  // namespace lockstep
