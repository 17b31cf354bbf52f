#include "models/node/nvlink_domain.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace lockstep {

Topology build_nvlink_domains(std::int32_t nodes, const NodePreset& preset) {
  if (nodes < 1) throw std::invalid_argument("NVLink domains: need at least one node");
  const std::int32_t gpus = nodes * preset.gpus;
  std::vector<SwitchSpec> switches;
  std::vector<Cable> cables;
  for (std::int32_t n = 0; n < nodes; ++n) {
    switches.push_back({"nvswitch" + std::to_string(n), Bytes(0)});
  }
  for (std::int32_t g = 0; g < gpus; ++g) {
    cables.push_back(
        {g, gpus + g / preset.gpus, preset.nvlink_bandwidth, preset.nvlink_hop_latency});
  }
  return build_explicit(gpus, std::move(switches), std::move(cables));
}

}  // namespace lockstep
