// ECN marking at a switch egress queue, RED style as DCQCN's congestion point uses it (Zhu et al.,
// SIGCOMM'15, section 3.1): below Kmin never, above Kmax always, linearly up to Pmax in between.
#pragma once

#include <cstdint>

#include "models/fabric/switch_config.hpp"

namespace lockstep {

[[nodiscard]] inline double ecn_mark_probability(const EcnConfig& ecn, std::int64_t queue_bytes) {
  if (!ecn.enabled || queue_bytes <= ecn.kmin.count()) return 0.0;
  if (queue_bytes > ecn.kmax.count()) return 1.0;
  return ecn.pmax * static_cast<double>(queue_bytes - ecn.kmin.count()) /
         static_cast<double>(ecn.kmax.count() - ecn.kmin.count());
}

}  // namespace lockstep
