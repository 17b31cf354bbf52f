#include "models/fabric/fat_tree.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lockstep {

Topology build_fat_tree(std::int32_t k, LinkSpec link, Bytes switch_buffer) {
  if (k < 2 || k % 2 != 0) {
    throw std::invalid_argument("fat tree: k must be even and >= 2, got " + std::to_string(k));
  }
  // The 3k^3/4 cables (more than the k^3/4 + 5k^2/4 nodes) must fit a 32-bit id; check in 64 bits
  // before allocating anything.
  const std::int64_t k64 = k;
  if (3 * k64 * k64 * k64 / 4 > std::int64_t{0x7fffffff}) {
    throw std::invalid_argument("fat tree: k = " + std::to_string(k) + " is too large");
  }
  check_link_spec(link, "fat tree link");
  if (switch_buffer < Bytes(0)) {
    throw std::invalid_argument("fat tree: switch buffer must not be negative");
  }

  const std::int32_t h = k / 2;
  const std::int32_t hosts = k * h * h;
  const std::int32_t tors = k * h;
  const std::int32_t aggs = k * h;
  const std::int32_t cores = h * h;
  const NodeId first_tor = hosts;
  const NodeId first_agg = first_tor + tors;
  const NodeId first_core = first_agg + aggs;

  std::vector<SwitchSpec> switches;
  switches.reserve(static_cast<std::size_t>(tors + aggs + cores));
  for (std::int32_t t = 0; t < tors; ++t)
    switches.push_back({"tor" + std::to_string(t), switch_buffer});
  for (std::int32_t a = 0; a < aggs; ++a)
    switches.push_back({"agg" + std::to_string(a), switch_buffer});
  for (std::int32_t c = 0; c < cores; ++c) {
    switches.push_back({"core" + std::to_string(c), switch_buffer});
  }

  std::vector<Cable> cables;
  cables.reserve(static_cast<std::size_t>(hosts + tors * h + aggs * h));
  for (NodeId x = 0; x < hosts; ++x)
    cables.push_back({x, first_tor + x / h, link.rate, link.delay});
  for (std::int32_t t = 0; t < tors; ++t) {
    const std::int32_t pod = t / h;
    for (std::int32_t j = 0; j < h; ++j) {
      cables.push_back({first_tor + t, first_agg + pod * h + j, link.rate, link.delay});
    }
  }
  for (std::int32_t a = 0; a < aggs; ++a) {
    for (std::int32_t l = 0; l < h; ++l) {
      cables.push_back({first_agg + a, first_core + a % h + h * l, link.rate, link.delay});
    }
  }
  return Topology(hosts, std::move(switches), std::move(cables));
}

}  // namespace lockstep
