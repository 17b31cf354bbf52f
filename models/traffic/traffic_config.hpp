// The traffic a scenario asks for: explicit flows and any of the generators, expanded into one flow
// list (explicit flows first, then each generator in the order below). `after` in an explicit flow
// names another explicit flow by index.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "models/traffic/traffic.hpp"

namespace lockstep {

struct PermutationConfig {
  Bytes size;
  std::optional<std::int64_t> hosts;  // absent: every endpoint
  std::optional<std::uint64_t> seed;  // absent: the simulation's seed
};

struct IncastConfig {
  std::int64_t first_source = 1;
  std::int64_t last_source = 1;
  std::int64_t destination = 0;
  Bytes size;
};

struct AllToAllConfig {
  Bytes size;
  std::optional<std::int64_t> hosts;
};

struct PairsFileConfig {
  std::string path;  // relative to the scenario file
  Bytes size;
};

struct RingsConfig {
  std::int64_t rings = 1;
  std::int64_t ring_size = 2;
  Bytes chunk;
};

struct RandomArrivalsConfig {
  std::int64_t flows = 0;
  Duration mean_interval;
  Bytes mean_size;
  double shape = 1.5;
  std::optional<std::int64_t> hosts;  // absent: every endpoint
  std::optional<std::uint64_t> seed;  // absent: the simulation's seed
};

struct TrafficConfig {
  std::vector<FlowSpec> flows;
  std::optional<PermutationConfig> permutation;
  std::optional<IncastConfig> incast;
  std::optional<AllToAllConfig> all_to_all;
  std::optional<PairsFileConfig> pairs_file;
  std::optional<RingsConfig> rings;
  std::optional<RandomArrivalsConfig> random_arrivals;
};

struct TrafficProblem {
  std::string key;  // relative to the traffic section, e.g. "all_to_all.hosts"
  std::string message;
};

// What one flow costs to hold from expansion to its end (its spec, the driver's record, the
// network's message and table row), for refusing generators that would not fit in memory.
inline constexpr std::int64_t kBytesPerFlow = 256;

// Every generator that cannot run on `endpoints` endpoints (hosts or ranks beyond them), or whose
// flows would need more than `memory_bytes` (the machine's memory, or the scenario's limit), one
// problem per generator, found before anything is expanded; empty when expand_traffic may run.
[[nodiscard]] std::vector<TrafficProblem> traffic_problems(const TrafficConfig& config,
                                                           std::int32_t endpoints,
                                                           std::int64_t memory_bytes);

// Throws std::invalid_argument with the generator's message.
[[nodiscard]] std::vector<FlowSpec> expand_traffic(const TrafficConfig& config,
                                                   std::int32_t endpoints, std::uint64_t seed,
                                                   const std::filesystem::path& scenario_directory);

}  // namespace lockstep
