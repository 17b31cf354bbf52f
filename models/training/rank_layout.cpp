// Megatron's rank numbering and the placement of ranks on GPUs; the model, its sources and what it
// leaves out are in rank_layout.hpp.
#include "models/training/rank_layout.hpp"

#include <cassert>
#include <limits>
#include <stdexcept>
#include <string>

namespace lockstep {
namespace {

// Megatron's spelling of each dimension in the order string, indexed by ParallelDim.
constexpr std::array<std::string_view, kParallelDimCount> kOrderNames = {"tp", "cp", "ep", "dp",
                                                                         "pp"};
constexpr std::array<std::string_view, kParallelDimCount> kLongNames = {
    "tensor", "context", "expert", "data", "pipeline"};

std::size_t index_of(ParallelDim dim) { return static_cast<std::size_t>(dim); }

// The dimensions of `order`, fastest-varying first, with those of size 1 it leaves out appended.
std::vector<std::size_t> parse_order(std::string_view order,
                                     const std::array<std::int32_t, kParallelDimCount>& sizes) {
  const std::string quoted = "order '" + std::string(order) + "'";
  std::vector<std::size_t> dims;
  std::array<bool, kParallelDimCount> named{};
  std::size_t start = 0;
  while (true) {
    const std::size_t dash = order.find('-', start);
    const std::string_view token = order.substr(start, dash - start);
    std::size_t dim = 0;
    while (dim < kParallelDimCount && kOrderNames[dim] != token) ++dim;
    if (dim == kParallelDimCount) {
      throw std::invalid_argument(quoted + ": '" + std::string(token) +
                                  "' is not one of tp, cp, ep, dp, pp");
    }
    if (named[dim]) {
      throw std::invalid_argument(quoted + " names " + std::string(token) + " twice");
    }
    named[dim] = true;
    dims.push_back(dim);
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  for (std::size_t dim = 0; dim < kParallelDimCount; ++dim) {
    if (named[dim]) continue;
    if (sizes[dim] != 1) {
      throw std::invalid_argument(quoted + " leaves out " + std::string(kOrderNames[dim]) +
                                  ", whose size is " + std::to_string(sizes[dim]));
    }
    dims.push_back(dim);
  }
  return dims;
}

}  // namespace

RankLayout::RankLayout(const ParallelDims& dims, std::string_view order)
    : sizes_{dims.tensor, dims.context, dims.expert, dims.data, dims.pipeline} {
  std::int64_t world = 1;
  for (std::size_t dim = 0; dim < kParallelDimCount; ++dim) {
    if (sizes_[dim] < 1) {
      throw std::invalid_argument(std::string(kLongNames[dim]) + " parallel size " +
                                  std::to_string(sizes_[dim]) + " is below 1");
    }
    world *= sizes_[dim];
    if (world > std::numeric_limits<std::int32_t>::max()) {
      throw std::invalid_argument("the parallel sizes multiply to more than 2^31 - 1 ranks");
    }
  }
  world_size_ = static_cast<std::int32_t>(world);

  std::int32_t stride = 1;
  for (const std::size_t dim : parse_order(order, sizes_)) {
    strides_[dim] = stride;
    stride *= sizes_[dim];
  }

  for (std::size_t dim = 0; dim < kParallelDimCount; ++dim) {
    const auto parallel_dim = static_cast<ParallelDim>(dim);
    for (std::int32_t lowest = 0; lowest < world_size_; ++lowest) {
      if (coordinate(lowest, parallel_dim) != 0) continue;
      std::vector<std::int32_t>& group = groups_[dim].emplace_back();
      group.reserve(static_cast<std::size_t>(sizes_[dim]));
      for (std::int32_t member = 0; member < sizes_[dim]; ++member) {
        group.push_back(lowest + member * strides_[dim]);
      }
    }
  }
}

std::int32_t RankLayout::size(ParallelDim dim) const { return sizes_[index_of(dim)]; }

std::int32_t RankLayout::coordinate(std::int32_t rank, ParallelDim dim) const {
  assert(rank >= 0 && rank < world_size_);
  return rank / strides_[index_of(dim)] % sizes_[index_of(dim)];
}

const std::vector<std::vector<std::int32_t>>& RankLayout::groups(ParallelDim dim) const {
  return groups_[index_of(dim)];
}

// The groups' lowest ranks are the ranks whose `dim` digit is 0, in increasing order; a group's
// index counts those below it: every one of the faster digits' combinations (rank mod stride) for
// each completed turn of the slower digits.
std::int32_t RankLayout::group_index(std::int32_t rank, ParallelDim dim) const {
  assert(rank >= 0 && rank < world_size_);
  const std::int32_t stride = strides_[index_of(dim)];
  return rank % stride + rank / (stride * sizes_[index_of(dim)]) * stride;
}

std::vector<std::int32_t> place_ranks(PlacementKind kind, std::int32_t world,
                                      std::int32_t gpus_per_node, std::int32_t gpus_available,
                                      const std::vector<std::int32_t>& explicit_gpus) {
  if (world < 1) throw std::invalid_argument("a job of " + std::to_string(world) + " ranks");
  if (gpus_per_node < 1) {
    throw std::invalid_argument("nodes of " + std::to_string(gpus_per_node) + " GPUs");
  }
  if (world > gpus_available) {
    throw std::invalid_argument("needs " + std::to_string(world) + " GPUs; the cluster has " +
                                std::to_string(gpus_available));
  }
  std::vector<std::int32_t> gpus;
  gpus.reserve(static_cast<std::size_t>(world));
  switch (kind) {
    case PlacementKind::kPacked:
      for (std::int32_t rank = 0; rank < world; ++rank) gpus.push_back(rank);
      break;
    case PlacementKind::kScattered: {
      const std::int32_t nodes = (world + gpus_per_node - 1) / gpus_per_node;
      for (std::int32_t rank = 0; rank < world; ++rank) {
        const std::int32_t gpu = rank % nodes * gpus_per_node + rank / nodes;
        // Only a cluster whose last node is partial (GPUs not a multiple of gpus_per_node) lacks
        // a GPU the job's nodes hold.
        if (gpu >= gpus_available) {
          throw std::invalid_argument("scattered over " + std::to_string(nodes) + " nodes, rank " +
                                      std::to_string(rank) + " lands on GPU " +
                                      std::to_string(gpu) + "; the cluster has " +
                                      std::to_string(gpus_available));
        }
        gpus.push_back(gpu);
      }
      break;
    }
    case PlacementKind::kExplicit: {
      if (explicit_gpus.size() != static_cast<std::size_t>(world)) {
        throw std::invalid_argument("the placement lists " + std::to_string(explicit_gpus.size()) +
                                    " GPUs for " + std::to_string(world) + " ranks");
      }
      std::vector<bool> taken(static_cast<std::size_t>(gpus_available), false);
      for (std::size_t rank = 0; rank < explicit_gpus.size(); ++rank) {
        const std::int32_t gpu = explicit_gpus[rank];
        const std::string where = "rank " + std::to_string(rank) + " on GPU " + std::to_string(gpu);
        if (gpu < 0 || gpu >= gpus_available) {
          throw std::invalid_argument(where + ": the cluster has GPUs 0 to " +
                                      std::to_string(gpus_available - 1));
        }
        if (taken[static_cast<std::size_t>(gpu)]) {
          throw std::invalid_argument(where + ", which an earlier rank already has");
        }
        taken[static_cast<std::size_t>(gpu)] = true;
      }
      gpus = explicit_gpus;
      break;
    }
  }
  return gpus;
}

}  // namespace lockstep
