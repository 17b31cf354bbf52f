// How NCCL lays its channels' rings over GPU servers with one NIC per GPU on a rail-optimized
// fabric: every hop between nodes stays on one rail. Channel c visits the GPUs of even nodes from
// GPU c upward and those of odd nodes from GPU c - 1 downward (indices mod G), so it leaves node k
// through NIC c - 1 (k even) or NIC c (k odd) and enters the next node through the NIC of the same
// index; different channels use different NICs. With an odd number of nodes, the hop from the last
// node back to the first crosses rails. Ranks are node x G + GPU.
#pragma once

#include <cstdint>
#include <vector>

namespace lockstep {

// nodes >= 1, gpus >= 1, channels >= 1.
[[nodiscard]] std::vector<std::vector<std::int32_t>> rail_aligned_rings(std::int32_t nodes,
                                                                        std::int32_t gpus,
                                                                        std::int32_t channels);

}  // namespace lockstep
