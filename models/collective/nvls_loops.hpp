// How NCCL's NVLS kernels cut an all-reduce into loops (NVIDIA/nccl 2.26.2, src/enqueue.cc,
// calcCollChunking and scheduleCollTasksToPlan; src/include/device.h): the data is split evenly
// over the NVLS channels, 16 on Hopper (NVLS_NCHANNELS_SM90), and each channel moves one chunk per
// head (GPU of the node) per loop, so a loop of the whole collective is channels x heads x chunk
// bytes. The chunk starts at NCCL's NVLS chunk size, 128 KiB (NCCL_NVLS_CHUNKSIZE), and is cut
// down while a channel's bytes are few against the heads' concurrent chunks ("concurrentOps"):
// - NVLS (one node): 64 KiB below 64 x heads x chunk, then 32 KiB below 8 x heads x chunk, then
//   16 KiB below 2 x heads x chunk; for 8 x H100, 16 KiB below 8 MiB, 32 KiB to 64 MiB, 64 KiB to
//   1 GiB, 128 KiB from there;
// - NVLS-Tree (across nodes): at most 64 KiB from four nodes on (NCCL_NVLSTREE_MAX_CHUNKSIZE), then
//   64 KiB below 4 x heads x chunk and 32 KiB below 1 x heads x chunk; for 2 x 8 H100, 32 KiB
//   below 8 MiB, 64 KiB to 64 MiB, 128 KiB from there.
// Each loop is one step of the kernel's warp groups (nstepsPerLoop = 1), with Simple's handshake.
// Units: Bytes.
#pragma once

#include <cstdint>

#include "sim/core/bytes.hpp"

namespace lockstep {

// NVLS_NCHANNELS_SM90: the channels NCCL's NVLS algorithms run on Hopper, whatever the size.
inline constexpr std::int32_t kNvlsChannelsSm90 = 16;

enum class NvlsKernel : std::uint8_t { kNvls, kNvlsTree };

// The chunk one channel moves per head per loop, for `size` bytes of all-reduce with `heads` GPUs
// per node on `nodes` nodes.
[[nodiscard]] Bytes nvls_chunk(NvlsKernel kernel, Bytes size, std::int32_t heads,
                               std::int32_t nodes);

// The bytes of the whole all-reduce that one loop moves: channels x heads x chunk.
[[nodiscard]] Bytes nvls_loop(NvlsKernel kernel, Bytes size, std::int32_t heads,
                              std::int32_t nodes);

// How many loops `size` takes: at least one.
[[nodiscard]] std::int32_t nvls_loops(NvlsKernel kernel, Bytes size, std::int32_t heads,
                                      std::int32_t nodes);

// The loops of a collective taken `loops_per_step` at a time as one simulated step (a transfer that
// carries their data and takes their step latencies, CollectiveAlgorithm::StepTransfer): one at a
// time up to 64 loops, and beyond that as many as keep the simulated steps at 64 or fewer, which
// bounds a large collective's messages and costs only the finer grain of its pipeline's fill.
struct SimulatedSteps {
  SimulatedSteps(Bytes size, std::int32_t loops);
  [[nodiscard]] std::int32_t count() const { return count_; }
  // The loops simulated step `step` stands for, and their bytes.
  [[nodiscard]] std::int32_t loops_in(std::int32_t step) const;
  [[nodiscard]] Bytes bytes_of(std::int32_t step) const;
  // The bytes of one of the loops simulated step `step` stands for (the first, where they differ
  // by a byte).
  [[nodiscard]] Bytes loop_bytes(std::int32_t step) const;

 private:
  [[nodiscard]] std::int64_t bytes_before_loop(std::int64_t loop) const;

  Bytes size_;
  std::int32_t loops_;
  std::int32_t loops_per_step_;
  std::int32_t count_;
};

}  // namespace lockstep
