// Rank layout: the groups Megatron-core's RankGenerator gives for its docstring examples and for
// other orders, the invariants every layout keeps (each rank in one group per dimension, at its
// coordinate), refused orders; placement by hand on 2 nodes of 8, gang admission, explicit lists.
#include "models/training/rank_layout.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <vector>

namespace lockstep {
namespace {

using Groups = std::vector<std::vector<std::int32_t>>;

constexpr std::array<ParallelDim, kParallelDimCount> kAllDims = {
    ParallelDim::kTensor, ParallelDim::kContext, ParallelDim::kExpert, ParallelDim::kData,
    ParallelDim::kPipeline};

// What makes groups Megatron's: each rank in exactly one group of each dimension, at the position
// of its coordinate, with ranks whose other coordinates agree; groups in order of lowest rank.
void check_partitions(const RankLayout& layout) {
  for (const ParallelDim dim : kAllDims) {
    const Groups& groups = layout.groups(dim);
    REQUIRE(groups.size() * static_cast<std::size_t>(layout.size(dim)) ==
            static_cast<std::size_t>(layout.world_size()));
    std::vector<int> seen(static_cast<std::size_t>(layout.world_size()), 0);
    for (std::size_t index = 0; index < groups.size(); ++index) {
      const std::vector<std::int32_t>& group = groups[index];
      REQUIRE(group.size() == static_cast<std::size_t>(layout.size(dim)));
      if (index > 0) CHECK(groups[index - 1].front() < group.front());
      CHECK(*std::min_element(group.begin(), group.end()) == group.front());
      for (std::size_t position = 0; position < group.size(); ++position) {
        const std::int32_t rank = group[position];
        ++seen[static_cast<std::size_t>(rank)];
        CHECK(layout.coordinate(rank, dim) == static_cast<std::int32_t>(position));
        CHECK(layout.group_index(rank, dim) == static_cast<std::int32_t>(index));
        for (const ParallelDim other : kAllDims) {
          if (other != dim) {
            CHECK(layout.coordinate(rank, other) == layout.coordinate(group.front(), other));
          }
        }
      }
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int count) { return count == 1; }));
  }
}

TEST_CASE("Megatron's default order puts TP innermost and PP outermost") {
  const RankLayout layout({.tensor = 2, .context = 1, .expert = 1, .data = 2, .pipeline = 2},
                          "tp-cp-ep-dp-pp");
  CHECK(layout.world_size() == 8);
  CHECK(layout.groups(ParallelDim::kTensor) == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  CHECK(layout.groups(ParallelDim::kData) == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}});
  CHECK(layout.groups(ParallelDim::kPipeline) == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  CHECK(layout.groups(ParallelDim::kContext) == Groups{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}});
  // Rank 6 = tp 0 + 2 dp 1 + 4 pp 1.
  CHECK(layout.coordinate(6, ParallelDim::kTensor) == 0);
  CHECK(layout.coordinate(6, ParallelDim::kData) == 1);
  CHECK(layout.coordinate(6, ParallelDim::kPipeline) == 1);
  check_partitions(layout);
}

TEST_CASE("Megatron's initialize_model_parallel docstring: 16 GPUs, TP 2, PP 4") {
  const RankLayout layout({.tensor = 2, .data = 2, .pipeline = 4}, "tp-cp-ep-dp-pp");
  CHECK(layout.groups(ParallelDim::kData) ==
        Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}});
  CHECK(layout.groups(ParallelDim::kTensor).size() == 8);
  CHECK(layout.groups(ParallelDim::kTensor)[7] == std::vector<std::int32_t>{14, 15});
  CHECK(layout.groups(ParallelDim::kPipeline) ==
        Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
  check_partitions(layout);
}

TEST_CASE("Another order swaps which groups are contiguous") {
  // tp-pp-dp: strides tp 1, pp 2, dp 4; cp and ep, of size 1, may be left out.
  const RankLayout layout({.tensor = 2, .data = 2, .pipeline = 2}, "tp-pp-dp");
  CHECK(layout.groups(ParallelDim::kTensor) == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  CHECK(layout.groups(ParallelDim::kPipeline) == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}});
  CHECK(layout.groups(ParallelDim::kData) == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  CHECK(layout.coordinate(6, ParallelDim::kPipeline) == 1);
  CHECK(layout.coordinate(6, ParallelDim::kData) == 1);
  check_partitions(layout);

  // DP innermost: a DP group is consecutive ranks, a TP group strided by dp.
  const RankLayout data_first({.tensor = 2, .data = 4}, "dp-tp");
  CHECK(data_first.groups(ParallelDim::kData) == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(data_first.groups(ParallelDim::kTensor) == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  check_partitions(data_first);
}

TEST_CASE("Context and expert dimensions sit where the order puts them") {
  // tp 2, cp 2, dp 2 by default order: strides 1, 2, 4 (ep 1 contributes nothing).
  const RankLayout with_context({.tensor = 2, .context = 2, .data = 2}, "tp-cp-ep-dp-pp");
  CHECK(with_context.groups(ParallelDim::kContext) == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}});
  CHECK(with_context.groups(ParallelDim::kData) == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  check_partitions(with_context);

  // Every dimension above 1, in a scrambled order: pp 2 (stride 1), ep 3 (2), tp 2 (6), dp 2
  // (12), cp 2 (24); 48 ranks. Rank 29 = 1 + 2 x 2 + 24: pp 1, ep 2, tp 0, dp 0, cp 1.
  const RankLayout all({.tensor = 2, .context = 2, .expert = 3, .data = 2, .pipeline = 2},
                       "pp-ep-tp-dp-cp");
  CHECK(all.world_size() == 48);
  CHECK(all.coordinate(29, ParallelDim::kPipeline) == 1);
  CHECK(all.coordinate(29, ParallelDim::kExpert) == 2);
  CHECK(all.coordinate(29, ParallelDim::kTensor) == 0);
  CHECK(all.coordinate(29, ParallelDim::kData) == 0);
  CHECK(all.coordinate(29, ParallelDim::kContext) == 1);
  CHECK(all.groups(ParallelDim::kExpert)[all.group_index(29, ParallelDim::kExpert)] ==
        std::vector<std::int32_t>{25, 27, 29});
  CHECK(all.groups(ParallelDim::kContext)[all.group_index(29, ParallelDim::kContext)] ==
        std::vector<std::int32_t>{5, 29});
  check_partitions(all);
}

TEST_CASE("Bad orders and sizes are refused, naming the problem") {
  const ParallelDims dims{.tensor = 2, .data = 2, .pipeline = 2};
  CHECK_THROWS_WITH_AS(RankLayout(dims, "tp-cp-ep-dp-pp-tp"), doctest::Contains("names tp twice"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(RankLayout(dims, "tp-cp-xp-dp-pp"), doctest::Contains("'xp' is not one of"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(RankLayout(dims, "tp--dp-pp"), doctest::Contains("'' is not one of"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(RankLayout(dims, ""), doctest::Contains("'' is not one of"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(RankLayout(dims, "TP-DP-PP"), doctest::Contains("'TP' is not one of"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(RankLayout(dims, "tp-dp"),
                       doctest::Contains("leaves out pp, whose size is 2"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(RankLayout({.tensor = 0}, "tp-cp-ep-dp-pp"),
                       doctest::Contains("tensor parallel size 0 is below 1"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(RankLayout({.pipeline = -1}, "tp-cp-ep-dp-pp"),
                       doctest::Contains("pipeline parallel size -1"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(
      RankLayout({.tensor = 2048, .data = 1024, .pipeline = 1024}, "tp-cp-ep-dp-pp"),
      doctest::Contains("more than 2^31 - 1 ranks"), std::invalid_argument);
}

TEST_CASE("Packed and scattered placement of 16 ranks on 2 nodes of 8") {
  const std::vector<std::int32_t> packed = place_ranks(PlacementKind::kPacked, 16, 8, 16, {});
  CHECK(packed == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  // Cyclic: even ranks on node 0 (GPUs 0-7), odd ranks on node 1 (GPUs 8-15).
  const std::vector<std::int32_t> scattered = place_ranks(PlacementKind::kScattered, 16, 8, 16, {});
  CHECK(scattered ==
        std::vector<std::int32_t>{0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15});

  // What it means for a TP group of 2 under the default order: packed keeps both ranks on one
  // node, scattered splits every group across the two nodes.
  const RankLayout layout({.tensor = 2, .data = 8}, "tp-cp-ep-dp-pp");
  for (const std::vector<std::int32_t>& group : layout.groups(ParallelDim::kTensor)) {
    const auto node = [](const std::vector<std::int32_t>& gpus, std::int32_t rank) {
      return gpus[static_cast<std::size_t>(rank)] / 8;
    };
    CHECK(node(packed, group[0]) == node(packed, group[1]));
    CHECK(node(scattered, group[0]) != node(scattered, group[1]));
  }
}

TEST_CASE("Scattered placement uses only the nodes the job needs") {
  // 10 ranks need ceil(10 / 8) = 2 nodes of a 4-node cluster: 5 ranks on each.
  CHECK(place_ranks(PlacementKind::kScattered, 10, 8, 32, {}) ==
        std::vector<std::int32_t>{0, 8, 1, 9, 2, 10, 3, 11, 4, 12});
  // One node's worth stays on one node, in order.
  CHECK(place_ranks(PlacementKind::kScattered, 4, 8, 32, {}) ==
        std::vector<std::int32_t>{0, 1, 2, 3});
  // A cluster whose last node is partial (12 GPUs on nodes of 8) lacks the slot rank 9 needs.
  CHECK_THROWS_WITH_AS(place_ranks(PlacementKind::kScattered, 10, 8, 12, {}),
                       doctest::Contains("rank 9 lands on GPU 12"), std::invalid_argument);
}

TEST_CASE("Gang admission refuses a job larger than the cluster") {
  for (const PlacementKind kind :
       {PlacementKind::kPacked, PlacementKind::kScattered, PlacementKind::kExplicit}) {
    CHECK_THROWS_WITH_AS(place_ranks(kind, 17, 8, 16, {}), "needs 17 GPUs; the cluster has 16",
                         std::invalid_argument);
  }
  CHECK(place_ranks(PlacementKind::kPacked, 16, 8, 16, {}).size() == 16);
  CHECK_THROWS_AS(place_ranks(PlacementKind::kPacked, 0, 8, 16, {}), std::invalid_argument);
  CHECK_THROWS_AS(place_ranks(PlacementKind::kPacked, 4, 0, 16, {}), std::invalid_argument);
}

TEST_CASE("An explicit placement is checked") {
  const std::vector<std::int32_t> reversed{3, 2, 1, 0};
  CHECK(place_ranks(PlacementKind::kExplicit, 4, 8, 16, reversed) == reversed);
  CHECK_THROWS_WITH_AS(place_ranks(PlacementKind::kExplicit, 4, 8, 16, {0, 1, 2}),
                       "the placement lists 3 GPUs for 4 ranks", std::invalid_argument);
  CHECK_THROWS_WITH_AS(place_ranks(PlacementKind::kExplicit, 4, 8, 16, {0, 5, 2, 5}),
                       "rank 3 on GPU 5, which an earlier rank already has", std::invalid_argument);
  CHECK_THROWS_WITH_AS(place_ranks(PlacementKind::kExplicit, 4, 8, 16, {0, 1, 16, 3}),
                       "rank 2 on GPU 16: the cluster has GPUs 0 to 15", std::invalid_argument);
  CHECK_THROWS_WITH_AS(place_ranks(PlacementKind::kExplicit, 4, 8, 16, {0, -1, 2, 3}),
                       "rank 1 on GPU -1: the cluster has GPUs 0 to 15", std::invalid_argument);
}

}  // namespace
}  // namespace lockstep
