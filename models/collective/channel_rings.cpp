#include "models/collective/channel_rings.hpp"

namespace lockstep {

std::vector<std::vector<std::int32_t>> rail_aligned_rings(std::int32_t nodes, std::int32_t gpus,
                                                          std::int32_t channels) {
  std::vector<std::vector<std::int32_t>> rings;
  for (std::int32_t c = 0; c < channels; ++c) {
    std::vector<std::int32_t>& ring = rings.emplace_back();
    for (std::int32_t node = 0; node < nodes; ++node) {
      for (std::int32_t j = 0; j < gpus; ++j) {
        const std::int32_t gpu =
            node % 2 == 1 ? ((c - 1 - j) % gpus + gpus) % gpus : (c + j) % gpus;
        ring.push_back(node * gpus + gpu);
      }
    }
  }
  return rings;
}

}  // namespace lockstep
