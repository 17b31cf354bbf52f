// How a training job's ranks split into parallel groups, and which GPU each rank runs on.
//
// Megatron-LM numbers its ranks as one mixed-radix number whose digits are the tensor (TP),
// context (CP), expert (EP), data (DP) and pipeline (PP) coordinates. The order string lists the
// digits from the fastest-varying to the slowest: with Megatron's default "tp-cp-ep-dp-pp",
// consecutive ranks form a TP group, so a TP group of up to one node's GPUs lands on one NVLink
// domain when ranks are packed onto GPUs in order, while PP groups, whose traffic is the lightest,
// span the farthest. A group of a dimension is the set of ranks whose other coordinates agree.
// This is what megatron-core's RankGenerator and generate_masked_orthogonal_rank_groups
// (megatron/core/parallel_state.py) compute for a single-dimension token; as there, groups are
// ordered by their lowest rank, members by increasing coordinate, and a dimension of size 1 may be
// left out of the order (it is appended, where it changes nothing).
//
// Placement maps job ranks onto the cluster's GPUs (numbered node * gpus_per_node + local). Packed
// is what a topology-aware launcher gives (torchrun with one process per GPU on consecutive
// nodes); scattered is Slurm's cyclic task distribution (srun --distribution=cyclic: tasks dealt
// round-robin over the job's nodes), which puts consecutive ranks, and so a TP group, on
// different nodes; explicit is a list the scenario gives.
//
// Left out: Megatron's separate expert-layer generator (expert TP, EP and expert DP over the same
// ranks, used for MoE layers) and multi-dimension tokens such as "tp-pp" model-parallel groups;
// here EP is one more orthogonal dimension of a single layout. Also left out: heterogeneous
// layouts (encoder and decoder with different sizes), and placement that avoids failed nodes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace lockstep {

enum class ParallelDim : std::uint8_t { kTensor, kContext, kExpert, kData, kPipeline };
inline constexpr std::size_t kParallelDimCount = 5;

struct ParallelDims {
  std::int32_t tensor = 1, context = 1, expert = 1, data = 1, pipeline = 1;
};

class RankLayout {
 public:
  // `order` names tp, cp, ep, dp and pp, dash-separated, fastest-varying first; a dimension of size
  // 1 may be omitted. Throws std::invalid_argument naming the problem for an unknown or repeated
  // name, a dimension above 1 left out, a size below 1, or a world beyond 2^31 - 1 ranks.
  RankLayout(const ParallelDims& dims, std::string_view order);

  [[nodiscard]] std::int32_t world_size() const { return world_size_; }
  [[nodiscard]] std::int32_t size(ParallelDim dim) const;
  [[nodiscard]] std::int32_t coordinate(std::int32_t rank, ParallelDim dim) const;
  // Every group of `dim`: ranks that differ only in that coordinate, each listed by increasing
  // coordinate; groups ordered by their lowest rank.
  [[nodiscard]] const std::vector<std::vector<std::int32_t>>& groups(ParallelDim dim) const;
  // Index into groups(dim) of the group holding `rank`.
  [[nodiscard]] std::int32_t group_index(std::int32_t rank, ParallelDim dim) const;

 private:
  std::array<std::int32_t, kParallelDimCount> sizes_{};
  // Rank distance between neighbours along each dimension: the product of the sizes of the
  // dimensions that vary faster.
  std::array<std::int32_t, kParallelDimCount> strides_{};
  std::int32_t world_size_ = 0;
  std::array<std::vector<std::vector<std::int32_t>>, kParallelDimCount> groups_;
};

// Which GPU (numbered node-major: node * gpus_per_node + local) each job rank runs on.
enum class PlacementKind : std::uint8_t { kPacked, kScattered, kExplicit };

// packed: rank r on GPU r (nodes filled in rank order, so with TP innermost a TP group of up to
// gpus_per_node ranks shares a node); scattered: Slurm's cyclic distribution over the
// N = ceil(world / gpus_per_node) nodes the job was given (rank r on node r mod N, local slot
// r / N); explicit: `explicit_gpus` (read for kExplicit only), checked: one GPU per rank, distinct,
// each in [0, gpus_available). Gang admission: a job needing more GPUs than the cluster has is
// refused ("needs X GPUs; the cluster has Y"). Throws std::invalid_argument, also for a world or
// gpus_per_node below 1 and for a scattered job whose nodes run past the cluster's GPUs.
[[nodiscard]] std::vector<std::int32_t> place_ranks(PlacementKind kind, std::int32_t world,
                                                    std::int32_t gpus_per_node,
                                                    std::int32_t gpus_available,
                                                    const std::vector<std::int32_t>& explicit_gpus);

}  // namespace lockstep
