// NCCL's NVLS all-reduce inside one NVSwitch domain (NVLink SHARP, Hopper's third-generation
// NVSwitch): the switch reduces and multicasts, so the data crosses each GPU's NVLink once each way
// instead of a ring's 2(n-1)/n times. For n GPUs and S bytes, GPU i owns slice i: it reads its
// slice reduced over all GPUs (the switch pulls S/n from every GPU: S out of each GPU in all, S/n
// into each), then writes the reduced slice to the multicast address (S/n out, and S into each GPU
// as the switch copies every slice to all). Each GPU's link thus carries S (n+1)/n each way, and
// NCCL pipelines both phases. The NVSwitch is non-blocking, so only each GPU's two link directions
// bound the time; messages from every GPU to every other one with S (n+1)/n / (n-1) bytes each load
// those directions exactly as the switch does, which is how this runs on a Network. The data goes
// in NCCL's loops (nvls_loops.hpp): the reduce warps of every GPU read and multicast one loop's
// slice at a time, taking the step's handshake before the next, so each loop is one such round of
// messages, sent when the GPU's previous round is in and its step latency spent (send_step).
// The kernel's scatter and gather warps copy the first loop in before and the last one out after
// (nvls_kernel.hpp): on 8 x H100 that is what made the measured curve rise more slowly than the
// loops alone explain (tests/data/nccl_sweeps).
// Costs (NCCL's NVLS latency and efficiency) as nccl_protocol.hpp says. Units: Bytes, Time.
#pragma once

#include <cstdint>

#include "models/collective/nvls_kernel.hpp"

namespace lockstep {

class NvlsAllReduce final : public NvlsKernelCollective {
 public:
  // Every endpoint of `network` is a GPU of one NVSwitch domain. Without overheads the transfers
  // are bare (the switch's reduction at the full link rate).
  NvlsAllReduce(Simulator& sim, Network& network, Bytes size,
                std::optional<ProtocolOverheads> overheads = {});

  // What one GPU's link carries each way: S (n+1)/n, rounded up.
  [[nodiscard]] static Bytes per_gpu_traffic(Bytes size, std::int32_t gpus);

 private:
  // The rank's reduce warps send their loops, a step each.
  void reduce(std::int32_t rank) override;
  void arrived(const Message& message, Time ready, std::uint64_t tag) override;
};

}  // namespace lockstep
