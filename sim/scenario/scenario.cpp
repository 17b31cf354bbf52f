#include "sim/scenario/scenario.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "models/training/training_job.hpp"
#include "models/transport/link_events.hpp"
#include "models/transport/network_footprint.hpp"
#include "models/transport/packet_network.hpp"
#include "sim/scenario/duplicate_keys.hpp"
#include "sim/scenario/fault_schema.hpp"
#include "sim/scenario/job_schema.hpp"
#include "sim/scenario/network_schema.hpp"
#include "sim/scenario/server_schema.hpp"
#include "sim/scenario/traffic_schema.hpp"

namespace lockstep {
namespace {

// Scenarios list flows by the thousand at most; pair lists live in their own files.
constexpr std::uintmax_t kLargestScenarioFile = std::uintmax_t{64} << 20;

Schema<SimulationConfig> simulation_schema() {
  Schema<SimulationConfig> s;
  s.value("seed", &SimulationConfig::seed, "1",
          "master seed; every random stream derives from it (--seed overrides)")
      .value("until", &SimulationConfig::until, std::nullopt,
             "stop at this simulated time even if work remains (--until overrides)")
      .value("memory_limit", &SimulationConfig::memory_limit, std::nullopt,
             "refuse a scenario whose network and traffic would need more memory than this "
             "(default: the machine's physical memory; set it higher to run one anyway)",
             above(Bytes(0)));
  return s;
}

const Schema<Scenario>& scenario_schema() {
  static const Schema<Scenario> schema = [] {
    Schema<Scenario> s;
    s.section("simulation", &Scenario::simulation, simulation_schema(), "engine settings")
        .optional_section("job", &Scenario::job, job_schema(),
                          "a transformer training job on the `servers` of the `network`")
        .optional_section(
            "network", &Scenario::network, network_schema(),
            "the cluster network (topology, switches, transport), at packet or flow level")
        .optional_section("servers", &Scenario::servers, servers_schema(),
                          "GPU servers at the fabric's endpoints: GPUs x servers = endpoints, "
                          "rank = server x GPUs + GPU (default: one rank per endpoint)")
        .optional_section("hosts", &Scenario::hosts, hosts_schema(),
                          "how each rank's data reaches its NIC and crosses the fabric")
        .optional_section("traffic", &Scenario::traffic, traffic_schema(),
                          "flows to run on the network")
        .list("faults", &Scenario::faults, fault_schema(),
              "faults during the run: what breaks, where and when (scenarios/README.md, Faults)")
        .section("defences", &Scenario::defences, defences_schema(),
                 "the cluster's defences: watchdogs, health checks, straggler detection, restarts");
    return s;
  }();
  return schema;
}

// Reports each of `ranks` (under `key`) that the fabric's `endpoints` do not have; true when all
// exist.
bool report_missing_ranks(const std::vector<std::int32_t>& ranks, const std::string& key,
                          std::int32_t endpoints, const Schema<Scenario>::Checker& report) {
  bool all_exist = true;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < endpoints) continue;
    all_exist = false;
    report.error(key + "[" + std::to_string(i) + "]", "no rank " + std::to_string(ranks[i]) +
                                                          " (ranks 0 to " +
                                                          std::to_string(endpoints - 1) + ")");
  }
  return all_exist;
}

// Servers, hosts and a job against the fabric they run on.
void check_machines(const Scenario& s, std::int32_t endpoints,
                    const Schema<Scenario>::Checker& report) {
  if (s.servers) {
    const std::int32_t gpus = server_node(*s.servers)->gpus;
    if (endpoints % gpus != 0) {
      report.error("servers.gpus", std::to_string(gpus) + " GPUs per server do not divide the " +
                                       std::to_string(endpoints) + " endpoints of the fabric");
    }
  }
  if (s.job && s.servers) {
    const NodePreset node = *server_node(*s.servers);
    if (endpoints % node.gpus == 0) {
      if (std::optional<std::string> problem =
              training_plan_problem(*s.job, node.gpu, endpoints, node.gpus)) {
        report.error("job", *problem);
      }
    }
  }
  if (s.hosts) {
    (void)report_missing_ranks(s.hosts->nics_on_other_socket, "hosts.nics_on_other_socket",
                               endpoints, report);
  }
}

// What this machine has, or what the scenario allows itself: a scenario that needs more is refused
// rather than left to fail mid-way.
std::int64_t memory_limit_bytes(const SimulationConfig& simulation) {
  if (simulation.memory_limit) return simulation.memory_limit->count();
  return static_cast<std::int64_t>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<std::int64_t>(sysconf(_SC_PAGE_SIZE));
}

std::string gigabytes(std::int64_t bytes) {
  std::ostringstream text;
  text.precision(3);
  text << static_cast<double>(bytes) * 1e-9 << " GB";
  return text.str();
}

void check_footprint(const Scenario& s, const Topology& topology,
                     const Schema<Scenario>::Checker& report) {
  const NetworkFootprint footprint = network_footprint(topology, s.network->model);
  const std::int64_t limit = memory_limit_bytes(s.simulation);
  if (footprint.memory.count() <= limit) return;
  report.error("network", "its " + std::to_string(footprint.ports) + " ports need about " +
                              gigabytes(footprint.memory.count()) + " at " +
                              (s.network->model == NetworkModel::kPacket ? "packet" : "flow") +
                              " level, more than the " + gigabytes(limit) +
                              (s.simulation.memory_limit ? " of simulation.memory_limit"
                                                         : " of memory this machine has") +
                              (s.network->model == NetworkModel::kPacket
                                   ? ": try network.model: flow (a third of it), or "
                                   : ": ") +
                              "set simulation.memory_limit higher to run it anyway");
}

// The fabric, built once: the run uses the same one. Empty (and reported) when it cannot be built.
std::shared_ptr<const Topology> fabric_of(const Scenario& s,
                                          const Schema<Scenario>::Checker& report) {
  try {
    auto topology = std::make_shared<const Topology>(build_topology(s.network->topology));
    for (const LinkEventProblem& p :
         link_event_problems(s.network->link_events, *topology, s.network->model)) {
      report.error("network." + p.key, p.message);
    }
    if (s.network->model == NetworkModel::kPacket) {
      if (const std::optional<std::string> problem =
              buffer_problem(*topology, packet_network_config(*s.network, topology->nic_rate()))) {
        report.error(s.network->switches.pfc.headroom ? "network.switches.pfc.headroom"
                                                      : "network.topology.switch_buffer",
                     *problem);
      }
    }
    return topology;
  } catch (const std::invalid_argument& e) {
    report.error("network.topology", e.what());
    return nullptr;
  }
}

// Rules across sections, and the traffic expanded against the topology it will run on.
struct Checked {
  std::shared_ptr<const Topology> topology;
  std::vector<FlowSpec> flows;
};
Checked check_what_runs(const Scenario& s, const YAML::Node& root,
                        const std::filesystem::path& directory, DecodeContext& context) {
  const Schema<Scenario>::Checker report(root, "", context);
  if (!s.job && !s.network) {
    report.error("",
                 "nothing to run: add a `job` section, or a `network` (with `traffic` to play "
                 "on it)");
  }
  if (s.traffic && !s.network) report.error("traffic", "traffic needs a `network` to run on");
  if ((s.servers || s.hosts) && !s.network) {
    report.error(s.servers ? "servers" : "hosts", "needs a `network` whose endpoints they sit at");
  }
  if (s.job && (!s.network || !s.servers)) {
    report.error("job",
                 "a training job runs on GPU servers on a network: add `servers` and a "
                 "`network`");
  }
  if (s.traffic && s.network && s.network->model == NetworkModel::kAnalytic) {
    report.error("network.model",
                 "analytic prices a training job's collectives; traffic needs "
                 "a flow or packet network");
  }
  Checked checked;
  if (!s.network) return checked;
  checked.topology = fabric_of(s, report);
  if (!checked.topology) return checked;
  const std::int32_t endpoints = checked.topology->endpoint_count();
  check_machines(s, endpoints, report);
  check_fault_targets(s, *checked.topology, report);
  check_footprint(s, *checked.topology, report);
  if (!s.traffic) return checked;
  const std::vector<TrafficProblem> problems =
      traffic_problems(*s.traffic, endpoints, memory_limit_bytes(s.simulation));
  for (const TrafficProblem& p : problems) report.error("traffic." + p.key, p.message);
  if (!problems.empty()) return checked;
  try {
    checked.flows = expand_traffic(*s.traffic, endpoints, s.simulation.seed, directory);
    for (const std::string& problem : flow_list_problems(checked.flows, endpoints)) {
      report.error("traffic", problem);
    }
    if (checked.flows.empty()) report.error("traffic", "no flows: list some or use a generator");
  } catch (const std::invalid_argument& e) {
    report.error("traffic", e.what());
  }
  return checked;
}

// The server preset's figures the scenario left to it, written out, so that the resolved scenario
// holds every value the run used (a reader needs no table of presets to know 8 GPUs per server).
void write_out_preset(std::optional<ServersConfig>& servers) {
  if (!servers) return;
  const std::optional<NodePreset> node = server_node(*servers);
  if (!node) return;
  servers->gpus = node->gpus;
  servers->nvlink_bandwidth = node->nvlink_bandwidth;
  servers->nvlink_latency = node->nvlink_hop_latency;
}

ScenarioLoad decode(YAML::Node root, const std::string& name,
                    const std::vector<Override>& overrides) {
  ScenarioLoad result;
  DecodeContext context(name, result.diagnostics);
  report_duplicate_keys(root, context);
  if (!result.diagnostics.empty()) return result;
  for (const Override& change : overrides)
    apply_override(root, change, context, result.diagnostics);
  if (!result.diagnostics.empty()) return result;
  Scenario scenario;
  scenario_schema().decode(root, root, "", scenario, context);
  if (!result.diagnostics.empty()) return result;
  Checked checked =
      check_what_runs(scenario, root, std::filesystem::path(name).parent_path(), context);
  if (!result.diagnostics.empty()) return result;
  write_out_preset(scenario.servers);
  YAML::Emitter emitter;
  scenario_schema().encode(scenario, emitter);
  result.loaded = LoadedScenario{std::move(scenario), std::string(emitter.c_str()) + "\n",
                                 std::move(checked.flows), std::move(checked.topology)};
  return result;
}

// Whether line `line` (from 0) of `text` is indented with a tab, which YAML forbids and yaml-cpp
// reports only as "illegal map value" or the like.
bool tab_indented(std::string_view text, int line) {
  std::size_t start = 0;
  for (int l = 0; l < line && start != std::string_view::npos; ++l) {
    start = text.find('\n', start);
    if (start != std::string_view::npos) ++start;
  }
  if (start == std::string_view::npos) return false;
  const std::size_t first = text.find_first_not_of(' ', start);
  return first != std::string_view::npos && text[first] == '\t';
}

}  // namespace

ScenarioLoad load_scenario_text(std::string_view text, const std::string& name,
                                const std::vector<Override>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    ScenarioLoad result;
    result.diagnostics.add(
        name + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1), "",
        tab_indented(text, e.mark.line) ? "a tab indents this line; YAML indents with spaces only"
                                        : e.msg);
    return result;
  }
  return decode(root, name, overrides);
}

ScenarioLoad load_scenario_file(const std::filesystem::path& path,
                                const std::vector<Override>& overrides) {
  // A scenario is a small text file: a directory, a device or a pipe is refused before reading.
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (!error && !std::filesystem::is_regular_file(status)) {
    ScenarioLoad result;
    result.diagnostics.add(path.string(), "",
                           std::filesystem::is_directory(status)
                               ? "is a directory, not a scenario file"
                               : "is not a regular file (a device, a pipe or a socket)");
    return result;
  }
  if (!error && std::filesystem::file_size(path, error) > kLargestScenarioFile && !error) {
    ScenarioLoad result;
    result.diagnostics.add(path.string(), "",
                           "is larger than a scenario can be (" +
                               std::to_string(kLargestScenarioFile >> 20) + " MiB of YAML)");
    return result;
  }
  std::ifstream in(path);
  if (!in) {
    const int reason = errno;
    ScenarioLoad result;
    result.diagnostics.add(path.string(), "",
                           "cannot read the scenario file: " + std::string(std::strerror(reason)));
    return result;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return load_scenario_text(text.str(), path.string(), overrides);
}

std::vector<KeyDoc> scenario_keys() {
  std::vector<KeyDoc> keys;
  scenario_schema().document("", keys);
  return keys;
}

}  // namespace lockstep
