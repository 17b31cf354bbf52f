#include "models/fabric/rail_optimized.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lockstep {
namespace {

[[noreturn]] void reject(const std::string& message) {
  throw std::invalid_argument("rail-optimized: " + message);
}

void require_at_least(std::int64_t value, std::int64_t minimum, const char* field) {
  if (value < minimum) {
    reject(std::string(field) + " must be >= " + std::to_string(minimum) + ", got " +
           std::to_string(value));
  }
}

}  // namespace

Topology build_rail_optimized(const RailOptimizedSpec& spec) {
  require_at_least(spec.servers, 1, "servers");
  require_at_least(spec.nics_per_server, 1, "nics_per_server");
  require_at_least(spec.servers_per_rail_group, 0, "servers_per_rail_group");
  require_at_least(spec.spines, 0, "spines");
  if (spec.spines == 0 && spec.uplinks_per_rail_switch != 0) {
    reject("uplinks_per_rail_switch must be 0 without spines, got " +
           std::to_string(spec.uplinks_per_rail_switch));
  }
  if (spec.spines > 0) {
    require_at_least(spec.uplinks_per_rail_switch, spec.spines,
                     "uplinks_per_rail_switch (one per spine at least)");
  }
  check_link_spec(spec.nic_link, "rail-optimized nic_link");
  if (spec.spines > 0) check_link_spec(spec.fabric_link, "rail-optimized fabric_link");
  if (spec.switch_buffer < Bytes(0)) reject("switch_buffer must not be negative");

  const std::int64_t group_size =
      spec.servers_per_rail_group == 0 ? spec.servers : spec.servers_per_rail_group;
  const std::int64_t groups = (spec.servers + group_size - 1) / group_size;
  const std::int64_t nics = std::int64_t{spec.servers} * spec.nics_per_server;
  const std::int64_t rails64 = groups * spec.nics_per_server;
  const std::int64_t cables64 = nics + rails64 * spec.uplinks_per_rail_switch;
  if (cables64 + rails64 + spec.spines > std::int64_t{0x7fffffff}) {
    reject("too many NICs or cables for 32-bit ids");
  }

  const auto hosts = static_cast<std::int32_t>(nics);
  const auto rails = static_cast<std::int32_t>(rails64);
  const NodeId first_rail = hosts;
  const NodeId first_spine = first_rail + rails;

  std::vector<SwitchSpec> switches;
  switches.reserve(static_cast<std::size_t>(rails + spec.spines));
  for (std::int32_t r = 0; r < rails; ++r) {
    switches.push_back({"rail" + std::to_string(r), spec.switch_buffer});
  }
  for (std::int32_t s = 0; s < spec.spines; ++s) {
    switches.push_back({"spine" + std::to_string(s), spec.switch_buffer});
  }

  std::vector<Cable> cables;
  cables.reserve(static_cast<std::size_t>(cables64));
  for (NodeId x = 0; x < hosts; ++x) {
    const std::int64_t server = x / spec.nics_per_server;
    const std::int64_t rail =
        (server / group_size) * spec.nics_per_server + x % spec.nics_per_server;
    cables.push_back(
        {x, first_rail + static_cast<NodeId>(rail), spec.nic_link.rate, spec.nic_link.delay});
  }
  for (std::int32_t r = 0; r < rails; ++r) {
    for (std::int32_t u = 0; u < spec.uplinks_per_rail_switch; ++u) {
      cables.push_back({first_rail + r, first_spine + u % spec.spines, spec.fabric_link.rate,
                        spec.fabric_link.delay});
    }
  }
  return Topology(hosts, std::move(switches), std::move(cables));
}

}  // namespace lockstep
