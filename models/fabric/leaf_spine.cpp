#include "models/fabric/leaf_spine.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lockstep {
namespace {

void require_at_least(std::int64_t value, std::int64_t minimum, const char* field) {
  if (value < minimum) {
    throw std::invalid_argument(std::string("leaf-spine: ") + field + " must be >= " +
                                std::to_string(minimum) + ", got " + std::to_string(value));
  }
}

}  // namespace

Topology build_leaf_spine(const LeafSpineSpec& spec) {
  require_at_least(spec.leaves, 1, "leaves");
  require_at_least(spec.spines, 1, "spines");
  require_at_least(spec.hosts_per_leaf, 1, "hosts_per_leaf");
  require_at_least(spec.uplinks_per_leaf, spec.spines, "uplinks_per_leaf (one per spine at least)");
  check_link_spec(spec.host_link, "leaf-spine host_link");
  check_link_spec(spec.fabric_link, "leaf-spine fabric_link");
  if (spec.switch_buffer < Bytes(0)) {
    throw std::invalid_argument("leaf-spine: switch_buffer must not be negative");
  }
  const std::int64_t hosts64 = std::int64_t{spec.leaves} * spec.hosts_per_leaf;
  const std::int64_t cables64 = hosts64 + std::int64_t{spec.leaves} * spec.uplinks_per_leaf;
  if (cables64 + spec.leaves + spec.spines > std::int64_t{0x7fffffff}) {
    throw std::invalid_argument("leaf-spine: too many hosts or cables for 32-bit ids");
  }

  const auto hosts = static_cast<std::int32_t>(hosts64);
  const NodeId first_leaf = hosts;
  const NodeId first_spine = first_leaf + spec.leaves;

  std::vector<SwitchSpec> switches;
  switches.reserve(static_cast<std::size_t>(spec.leaves + spec.spines));
  for (std::int32_t l = 0; l < spec.leaves; ++l) {
    switches.push_back({"leaf" + std::to_string(l), spec.switch_buffer});
  }
  for (std::int32_t s = 0; s < spec.spines; ++s) {
    switches.push_back({"spine" + std::to_string(s), spec.switch_buffer});
  }

  std::vector<Cable> cables;
  cables.reserve(static_cast<std::size_t>(cables64));
  for (NodeId x = 0; x < hosts; ++x) {
    cables.push_back(
        {x, first_leaf + x / spec.hosts_per_leaf, spec.host_link.rate, spec.host_link.delay});
  }
  for (std::int32_t l = 0; l < spec.leaves; ++l) {
    for (std::int32_t u = 0; u < spec.uplinks_per_leaf; ++u) {
      cables.push_back({first_leaf + l, first_spine + u % spec.spines, spec.fabric_link.rate,
                        spec.fabric_link.delay});
    }
  }
  return Topology(hosts, std::move(switches), std::move(cables));
}

double oversubscription(const LeafSpineSpec& spec) {
  const double down =
      static_cast<double>(spec.hosts_per_leaf) * static_cast<double>(spec.host_link.rate.bps());
  const double up =
      static_cast<double>(spec.uplinks_per_leaf) * static_cast<double>(spec.fabric_link.rate.bps());
  return down / up;
}

}  // namespace lockstep
