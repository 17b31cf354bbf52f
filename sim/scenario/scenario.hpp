// A scenario: the whole configuration of one run, decoded from YAML once, before time zero, into
// plain structs that the components own. Nothing downstream sees YAML.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/fabric/topology.hpp"
#include "models/fault/defences_config.hpp"
#include "models/fault/fault_config.hpp"
#include "models/node/server_config.hpp"
#include "models/traffic/traffic_config.hpp"
#include "models/training/training_job_config.hpp"
#include "models/transport/network_config.hpp"
#include "sim/core/time.hpp"
#include "sim/scenario/diagnostics.hpp"
#include "sim/scenario/override.hpp"
#include "sim/scenario/schema.hpp"

namespace lockstep {

struct SimulationConfig {
  std::uint64_t seed = 0;
  std::optional<Duration> until;
  std::optional<Bytes> memory_limit;  // default: the machine's physical memory
};

// What a run simulates: a training job on the cluster, traffic on its network, or both.
struct Scenario {
  SimulationConfig simulation;
  std::optional<TrainingJobConfig> job;
  std::optional<NetworkConfig> network;
  std::optional<ServersConfig> servers;
  std::optional<HostsConfig> hosts;
  std::optional<TrafficConfig> traffic;
  std::vector<FaultConfig> faults;
  DefencesConfig defences;
};

struct LoadedScenario {
  Scenario scenario;
  std::string resolved_yaml;    // every key with its effective value: running it reproduces the run
  std::vector<FlowSpec> flows;  // the traffic, expanded and checked against the topology
  // The network's fabric, built once when the scenario was checked; null without a network.
  std::shared_ptr<const Topology> topology;
};

struct ScenarioLoad {
  std::optional<LoadedScenario> loaded;  // empty when there are diagnostics
  Diagnostics diagnostics;
};

[[nodiscard]] ScenarioLoad load_scenario_file(const std::filesystem::path& path,
                                              const std::vector<Override>& overrides);
// `name` stands for the file in messages; files a scenario names are relative to its directory.
[[nodiscard]] ScenarioLoad load_scenario_text(std::string_view text, const std::string& name,
                                              const std::vector<Override>& overrides);

// Every key a scenario may hold, in declaration order.
[[nodiscard]] std::vector<KeyDoc> scenario_keys();

}  // namespace lockstep
