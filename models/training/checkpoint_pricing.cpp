#include "models/training/checkpoint_pricing.hpp"

#include <algorithm>

namespace lockstep {

CheckpointCost price_checkpoint(const StorageSpec& storage, const std::vector<Bytes>& node_bytes,
                                Bytes largest_copy, const CheckpointConfig& config) {
  Simulator sim;
  SharedStorage file_system(sim, storage, static_cast<std::int32_t>(node_bytes.size()));
  Time written = Time::zero();
  for (std::size_t node = 0; node < node_bytes.size(); ++node) {
    if (node_bytes[node] == Bytes()) continue;
    file_system.transfer(static_cast<std::int32_t>(node), node_bytes[node],
                         [&written](Time at) { written = std::max(written, at); });
  }
  (void)sim.run();
  const Duration write = written.since_start();
  if (config.mode == CheckpointMode::kSynchronous) return CheckpointCost{write, write};
  // Asynchronous: every GPU copies its share at once; a node's write starts when its copies are
  // done, all nodes alike.
  const Duration copy = tx_time(largest_copy, config.host_copy);
  return CheckpointCost{copy, copy + write};
}

}  // namespace lockstep
