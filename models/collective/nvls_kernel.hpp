// What NCCL's two NVLS kernels (NVLS in one node, NVLS-Tree across nodes) share: they move the data
// in NCCL's loops (nvls_loops.hpp), and beside the warps that reduce and multicast each has a
// scatter group that copies the user's buffer into NCCL's and a gather group that copies the
// results out (NCCL 2.26.2, src/device/all_reduce.h). Those copies go through the GPU's memory
// (CollectiveAlgorithm::local_copy), faster than its NVLink, so they keep ahead of the reduce and
// behind it with room to spare: they cost the first loop's copy before a rank's reduce warps start
// and the last loop's copy after its last step is in. Units: Bytes, Time.
#pragma once

#include <cstdint>
#include <optional>

#include "models/collective/collective_algorithm.hpp"
#include "models/collective/nvls_loops.hpp"

namespace lockstep {

class NvlsKernelCollective : public CollectiveAlgorithm {
 protected:
  // Every endpoint of `network` takes part; `size` bytes in `loops` loops.
  NvlsKernelCollective(Simulator& sim, Network& network, std::optional<ProtocolOverheads> overheads,
                       NcclAlgorithm algorithm, Bytes size, std::int32_t loops);

  // What the reduce warps of `rank` send, from when its scatter warps have copied the first loop.
  virtual void reduce(std::int32_t rank) = 0;
  // The gather warps' copy of the last loop: the receiving rank's end waits for it after its
  // last step (StepTransfer::copied_out).
  [[nodiscard]] Duration last_gather() const;

  Bytes size_;
  SimulatedSteps steps_;

 private:
  void launch(std::int32_t rank) final;
  void scattered(std::uint64_t rank);
};

}  // namespace lockstep
