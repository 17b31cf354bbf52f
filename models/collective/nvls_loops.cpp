#include "models/collective/nvls_loops.hpp"

#include <algorithm>
#include <limits>

namespace lockstep {
namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kNvlsChunk = 128 * kKiB;  // NCCL_NVLS_CHUNKSIZE
// NCCL_NVLSTREE_MAX_CHUNKSIZE's default from four nodes on.
constexpr std::int64_t kNvlsTreeMaxChunkFrom4 = 64 * kKiB;

// calcCollChunking's step: below `times` concurrent chunks, a chunk above `down_to` becomes it.
std::int64_t cut(std::int64_t chunk, std::int64_t channel_bytes, std::int64_t concurrent,
                 std::int64_t times, std::int64_t down_to) {
  return channel_bytes < times * concurrent * chunk && chunk > down_to ? down_to : chunk;
}

}  // namespace

Bytes nvls_chunk(NvlsKernel kernel, Bytes size, std::int32_t heads, std::int32_t nodes) {
  const std::int64_t channel_bytes = size.count() / kNvlsChannelsSm90;
  const std::int64_t concurrent = heads;
  std::int64_t chunk = kNvlsChunk;
  if (kernel == NvlsKernel::kNvls) {
    chunk = cut(chunk, channel_bytes, concurrent, 64, 64 * kKiB);
    chunk = cut(chunk, channel_bytes, concurrent, 8, 32 * kKiB);
    chunk = cut(chunk, channel_bytes, concurrent, 2, 16 * kKiB);
  } else {
    if (nodes >= 4) chunk = std::min(chunk, kNvlsTreeMaxChunkFrom4);
    chunk = cut(chunk, channel_bytes, concurrent, 4, 64 * kKiB);
    chunk = cut(chunk, channel_bytes, concurrent, 1, 32 * kKiB);
  }
  return Bytes(chunk);
}

Bytes nvls_loop(NvlsKernel kernel, Bytes size, std::int32_t heads, std::int32_t nodes) {
  return Bytes(std::int64_t{kNvlsChannelsSm90} * heads *
               nvls_chunk(kernel, size, heads, nodes).count());
}

std::int32_t nvls_loops(NvlsKernel kernel, Bytes size, std::int32_t heads, std::int32_t nodes) {
  const std::int64_t loop = nvls_loop(kernel, size, heads, nodes).count();
  const std::int64_t loops = (size.count() + loop - 1) / loop;
  return static_cast<std::int32_t>(
      std::clamp<std::int64_t>(loops, 1, std::numeric_limits<std::int32_t>::max()));
}

SimulatedSteps::SimulatedSteps(Bytes size, std::int32_t loops)
    : size_(size), loops_(std::max(loops, 1)) {
  constexpr std::int32_t kMostSteps = 64;
  loops_per_step_ = (loops_ + kMostSteps - 1) / kMostSteps;
  count_ = (loops_ + loops_per_step_ - 1) / loops_per_step_;
}

std::int32_t SimulatedSteps::loops_in(std::int32_t step) const {
  return std::min(loops_per_step_, loops_ - step * loops_per_step_);
}

std::int64_t SimulatedSteps::bytes_before_loop(std::int64_t loop) const {
  // The loops share the bytes as evenly as whole bytes allow (in two parts, which cannot overflow).
  const std::int64_t whole = size_.count() / loops_;
  const std::int64_t rest = size_.count() % loops_;
  return whole * loop + rest * loop / loops_;
}

Bytes SimulatedSteps::bytes_of(std::int32_t step) const {
  const std::int64_t first = std::int64_t{step} * loops_per_step_;
  return Bytes(bytes_before_loop(first + loops_in(step)) - bytes_before_loop(first));
}

Bytes SimulatedSteps::loop_bytes(std::int32_t step) const {
  const std::int64_t first = std::int64_t{step} * loops_per_step_;
  return Bytes(bytes_before_loop(first + 1) - bytes_before_loop(first));
}

}  // namespace lockstep
