#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace doctest {
template <>
struct StringMaker<std::vector<std::string>> {
  static String convert(const std::vector<std::string>& lines) {
    std::string out = "\n";
    for (const std::string& line : lines) out += "  " + line + "\n";
    return String(out.c_str());
  }
};
}  // namespace doctest

namespace lockstep {
namespace {

std::vector<Override> as_set(const std::vector<std::string>& assignments) {
  std::vector<Override> out;
  for (const std::string& a : assignments) out.push_back(set_argument(a));
  return out;
}

std::vector<std::string> problems(const std::string& yaml,
                                  const std::vector<std::string>& overrides = {}) {
  const ScenarioLoad load = load_scenario_text(yaml, "s.yaml", as_set(overrides));
  std::vector<std::string> out;
  for (const Diagnostic& d : load.diagnostics.all()) out.push_back(d.to_string());
  CHECK(load.loaded.has_value() == out.empty());
  return out;
}

Scenario scenario(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  ScenarioLoad load = load_scenario_text(yaml, "s.yaml", as_set(overrides));
  REQUIRE(load.diagnostics.empty());
  return load.loaded->scenario;
}

using Lines = std::vector<std::string>;

TEST_CASE("an empty scenario has nothing to run") {
  CHECK(problems("") ==
        Lines{"s.yaml: nothing to run: add a `job` section, or a `network` (with `traffic` to play "
              "on it)"});
}

// A leaf-spine of 2 leaves, 2 spines, 2 hosts per leaf, with one link event.
std::string with_link_event(const std::string& model, const std::string& event) {
  return "network:\n  model: " + model +
         "\n  topology:\n    kind: leaf_spine\n    leaf_spine: {leaves: 2, spines: 2, "
         "hosts_per_leaf: 2, uplinks_per_leaf: 2}\n  link_events:\n    - " +
         event + "\ntraffic:\n  flows: [{source: 0, destination: 2, size: 1MB}]\n";
}

TEST_CASE("link events name existing cables and say one thing that changes, at either level") {
  const Scenario s =
      scenario(with_link_event("flow", "{at: 5us, a: leaf0, b: spine1, down: true}"));
  REQUIRE(s.network->link_events.size() == 1);
  CHECK(s.network->link_events[0].at == Duration::us(5));
  CHECK(s.network->link_events[0].down);
  CHECK(problems(with_link_event("flow", "{at: 5us, a: leaf0, b: spine7, rate: 1Gbps}")) ==
        Lines{"s.yaml:7:30: network.link_events[0].b: no switch or host named 'spine7'"});
  CHECK(problems(with_link_event("flow", "{at: 5us, a: host0, b: spine0, rate: 1Gbps}")) ==
        Lines{"s.yaml:7:30: network.link_events[0].b: no cable joins host0 and spine0"});
  CHECK(problems(with_link_event("flow", "{at: 5us, a: leaf0, b: host1}")) ==
        Lines{"s.yaml:7:7: network.link_events[0]: give one of `rate` (the cable's new rate), "
              "`down: true` or `up: true`"});
  CHECK(problems(with_link_event("flow", "{at: 5us, a: leaf0, b: host1, down: true, up: true}")) ==
        Lines{"s.yaml:7:7: network.link_events[0]: give one of `rate` (the cable's new rate), "
              "`down: true` or `up: true`"});
  CHECK(problems(with_link_event("packet", "{at: 5us, a: leaf0, b: host1, down: true}")).empty());
  CHECK(problems(with_link_event("packet", "{at: 5us, a: leaf0, b: host1, up: true}")).empty());
}

// A fabric run whose transport and switches take `extra` (indented under `network:`).
std::string with_network_keys(const std::string& extra) {
  return "network:\n  topology:\n    kind: leaf_spine\n    leaf_spine: {leaves: 2, spines: 1, "
         "hosts_per_leaf: 2, uplinks_per_leaf: 1}\n" +
         extra + "traffic:\n  flows: [{source: 0, destination: 2, size: 1MB}]\n";
}

TEST_CASE("queue pair timeouts and ECN's marking point take ibverbs' ranges and their two words") {
  const Scenario s = scenario(with_network_keys(
      "  transport: {qp_timeout: 14, retry_count: 3}\n  switches:\n    ecn: {mark_at: enqueue}\n"));
  CHECK(s.network->transport.qp_timeout == 14);
  CHECK(s.network->transport.retry_count == 3);
  CHECK(s.network->switches.ecn.mark_at == EcnMarkPoint::kEnqueue);
  const Scenario defaults = scenario(with_network_keys(""));
  CHECK(defaults.network->transport.qp_timeout == kNcclIbTimeout);
  CHECK(defaults.network->transport.retry_count == kNcclIbRetryCount);
  CHECK(defaults.network->switches.ecn.mark_at == EcnMarkPoint::kDequeue);
  CHECK(problems(with_network_keys("  transport: {qp_timeout: 32, retry_count: 8}\n")) ==
        Lines{"s.yaml:5:27: network.transport.qp_timeout: must lie between 0 and 31",
              "s.yaml:5:44: network.transport.retry_count: must lie between 0 and 7"});
  CHECK(
      problems(with_network_keys("  switches:\n    ecn: {mark_at: ingress}\n")) ==
      Lines{"s.yaml:6:20: network.switches.ecn.mark_at: 'ingress' is not one of dequeue, enqueue"});
  // The 1 ms timer the queue pair timeout replaced is no key any more.
  CHECK(
      problems(with_network_keys("  transport: {retransmit_timeout: 1ms}\n")) ==
      Lines{"s.yaml:5:15: network.transport.retransmit_timeout: unknown key (valid keys: payload, "
            "header, traffic_class, qp_timeout, retry_count, congestion_control, dcqcn_profile)"});
}

TEST_CASE("an override without a value is refused, not taken for the default") {
  const std::string flows =
      "network: {topology: {kind: leaf_spine}}\n"
      "traffic:\n  flows:\n    - {source: 0, destination: 1, size: 1KB}\n";
  CHECK(problems(flows, {"network.sample_period="}) ==
        Lines{"--set network.sample_period=: network.sample_period: no value after '=' (to keep "
              "the key's default, leave the option out)"});
  CHECK(problems(flows, {"simulation.seed=  "}) ==
        Lines{"--set simulation.seed=  : simulation.seed: no value after '=' (to keep the key's "
              "default, leave the option out)"});
}

TEST_CASE("32-bit keys reject values that do not fit instead of wrapping") {
  const std::string flows =
      "network: {topology: {kind: leaf_spine}}\n"
      "traffic:\n  flows:\n    - {source: 0, destination: 1, size: 1KB}\n";
  CHECK(problems(flows, {"traffic.flows[0].source=4294967296"}) ==
        Lines{"--set traffic.flows[0].source=4294967296: traffic.flows[0].source: '4294967296' is "
              "out of range"});
  CHECK(
      problems(flows, {"traffic.flows[0].queue_pair=-1"}) ==
      Lines{"--set traffic.flows[0].queue_pair=-1: traffic.flows[0].queue_pair: '-1' is negative; "
            "expected a whole number of 0 or more"});
}

TEST_CASE("shorthand options are named as the user typed them") {
  const ScenarioLoad load =
      load_scenario_text("", "s.yaml", {Override{"simulation.seed=-1", "--seed -1"}});
  REQUIRE(load.diagnostics.all().size() == 1);
  CHECK(load.diagnostics.all()[0].to_string() ==
        "--seed -1: simulation.seed: '-1' is negative; expected a whole number of 0 or more");
}

TEST_CASE("a missing scenario file is reported by name") {
  const ScenarioLoad load = load_scenario_file("/nonexistent/s.yaml", {});
  REQUIRE(load.diagnostics.all().size() == 1);
  CHECK(load.diagnostics.all()[0].to_string() ==
        "/nonexistent/s.yaml: cannot read the scenario file: No such file or directory");
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// Two servers of 4 GPUs: a leaf-spine of 8 endpoints.
std::string with_machines(const std::string& machines) {
  return "network:\n  model: flow\n  topology:\n    kind: leaf_spine\n    leaf_spine: {leaves: 2, "
         "spines: 2, hosts_per_leaf: 4, uplinks_per_leaf: 2}\n" +
         machines;
}

TEST_CASE("servers and hosts describe the machines at the fabric's endpoints and are checked") {
  const Scenario s = scenario(with_machines(
      "servers: {preset: dgx-a100, gpus: 4}\nhosts: {transport: socket, socket_interface: 25Gbps, "
      "nics_on_other_socket: [1, 6]}\n"));
  REQUIRE(s.servers);
  REQUIRE(s.hosts);
  const std::optional<NodePreset> node = server_node(*s.servers);
  REQUIRE(node);
  CHECK(node->name == "dgx-a100");
  CHECK(node->gpus == 4);
  CHECK(s.hosts->transport == FabricTransport::kSocket);
  CHECK(s.hosts->socket_interface == BitRate::gbps(25));
  CHECK(host_staged_nics(*s.hosts, 8) == std::vector<std::int32_t>{1, 6});
  HostsConfig no_gpudirect = *s.hosts;
  no_gpudirect.gpudirect = false;
  CHECK(host_staged_nics(no_gpudirect, 3) == std::vector<std::int32_t>{0, 1, 2});

  CHECK(problems(with_machines("servers: {gpus: 3}\n")) ==
        Lines{"s.yaml:6:17: servers.gpus: 3 GPUs per server do not divide the 8 endpoints of the "
              "fabric"});
  CHECK(problems(with_machines("servers: {preset: dgx-b200}\n")) ==
        Lines{"s.yaml:6:19: servers.preset: 'dgx-b200' is not one of dgx-a100, dgx-h100, dgx-h200 "
              "(did you mean 'dgx-h200'?)"});
  CHECK(problems(with_machines("hosts: {nics_on_other_socket: [2, 8]}\n")) ==
        Lines{"s.yaml:6:35: hosts.nics_on_other_socket[1]: no rank 8 (ranks 0 to 7)"});
  CHECK(problems(with_machines("hosts: {socket_interface: 25Gbps}\n")) ==
        Lines{"s.yaml:6:27: hosts.socket_interface: applies to sockets: set `transport: socket`"});
  CHECK(problems(with_machines("hosts: {nics_on_other_socket: [-1]}\n")) ==
        Lines{"s.yaml:6:32: hosts.nics_on_other_socket[0]: a rank is 0 or more"});
  CHECK(scenario(with_machines("hosts: {queue_pairs_per_connection: 4}\n"))
            .hosts->queue_pairs_per_connection == 4);
  CHECK(problems(with_machines("hosts: {queue_pairs_per_connection: 0}\n")) ==
        Lines{"s.yaml:6:37: hosts.queue_pairs_per_connection: must lie between 1 and 128"});
  CHECK(problems(with_machines("hosts: {transport: socket, queue_pairs_per_connection: 2}\n")) ==
        Lines{"s.yaml:6:56: hosts.queue_pairs_per_connection: applies to RDMA: sockets have no "
              "queue pairs"});
  CHECK(problems("job: {steps: 8}\nservers: {preset: dgx-h100}\n") ==
        Lines{"s.yaml:2:10: servers: needs a `network` whose endpoints they sit at",
              "s.yaml:1:6: job: a training job runs on GPU servers on a network: add `servers` "
              "and a `network`"});
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// yaml-cpp keeps a repeated key and answers with the first, so an override appended at the end of a
// file was lost without a word.
}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

TEST_CASE("a switch buffer that cannot hold its PFC headroom is refused at validation") {
  const std::string fabric =
      "network:\n  topology:\n    kind: leaf_spine\n    leaf_spine: {leaves: 2, spines: 2, "
      "hosts_per_leaf: 4, uplinks_per_leaf: 2}\n";
  const std::vector<std::string> small = problems(fabric + "    switch_buffer: 200KB\n");
  REQUIRE(small.size() == 1);
  CHECK(small[0].find("s.yaml:5:20: network.topology.switch_buffer: switch 'leaf0': its 200KB "
                      "buffer is no larger than the PFC headroom its 6 ports reserve") == 0);
  const std::vector<std::string> headroom =
      problems(fabric + "  switches: {pfc: {headroom: 1TB}}\n");
  REQUIRE(headroom.size() == 1);
  CHECK(headroom[0].find("network.switches.pfc.headroom: switch 'leaf0'") != std::string::npos);
  CHECK(problems(fabric + "  transport: {payload: 1TB}\n") ==
        Lines{"s.yaml:5:24: network.transport.payload: must be at most 64KiB (a jumbo frame "
              "carries 9KB)"});
  // The flow level reserves no headroom.
  CHECK(problems(fabric + "    switch_buffer: 200KB\n  model: flow\n").empty());
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// 32 DGX H100 servers (256 GPUs) on a rail-optimized fabric, after the job under test, so that the
// job's lines keep their numbers.
const std::string kMachine =
    "servers: {preset: dgx-h100}\n"
    "network:\n"
    "  model: flow\n"
    "  topology:\n"
    "    kind: rail_optimized\n"
    "    link_rate: 400Gbps\n"
    "    rail_optimized: {servers: 32, nics_per_server: 8, spines: 8, uplinks_per_rail_switch: "
    "32}\n";

TEST_CASE("a job given empty takes every default: the worked example's plan") {
  const Scenario s = scenario("job:\n" + kMachine);
  REQUIRE(s.job);
  CHECK(s.job->model.preset == "llama2-70b");
  CHECK(s.job->parallelism.tensor == 8);
  CHECK(s.job->parallelism.pipeline == 4);
  CHECK(s.job->parallelism.data == 8);
  CHECK(s.job->parallelism.sequence_parallel);
  CHECK(s.job->parallelism.order == "tp-cp-ep-dp-pp");
  CHECK(s.job->global_batch == 512);
  CHECK(s.job->schedule == PipelineSchedule::kOneFOneB);
  CHECK(s.job->placement == PlacementKind::kPacked);
  CHECK(s.job->workspace == Bytes(std::int64_t{4} << 30));
  CHECK_FALSE(s.job->storage);
}

TEST_CASE("job values with units, percentages and lists decode into the config") {
  const Scenario s = scenario(
      "job:\n"
      "  workspace: 1.5GiB\n"
      "  placement: [7, 6, 5, 4, 3, 2, 1, 0]\n"
      "  parallelism: {tensor: 8, pipeline: 1, data: 1}\n"
      "  global_batch: 8\n"
      "  storage: {aggregate: 1.5TB/s, per_node: 200Gbps, latency: 600us}\n"
      "  slow_gpus: [{rank: 3, clock: 87.5%}, {rank: 5, clock: 0.5}]\n" +
      kMachine);
  CHECK(s.job->workspace == Bytes(1'610'612'736));
  CHECK(s.job->placement == PlacementKind::kExplicit);
  CHECK(s.job->placement_gpus == std::vector<std::int32_t>{7, 6, 5, 4, 3, 2, 1, 0});
  CHECK(s.job->storage->aggregate.bps() == 12'000'000'000'000);
  CHECK(s.job->storage->latency == Duration::us(600));
  REQUIRE(s.job->slow_gpus.size() == 2);
  CHECK(s.job->slow_gpus[0].clock == doctest::Approx(0.875));
  CHECK(s.job->slow_gpus[1].rank == 5);
}

TEST_CASE("job keys report unknown names, missing units, wrong shapes and bad items") {
  CHECK(problems("job:\n  stpes: 8\n" + kMachine) ==
        Lines{"s.yaml:2:3: job.stpes: unknown key (did you mean 'steps'?)"});
  CHECK(problems("job:\n  workspace: 400\n" + kMachine)[0].find(
            "s.yaml:2:14: job.workspace: '400' needs a unit") == 0);
  CHECK(problems("job: 5\n" + kMachine) == Lines{"s.yaml:1:6: job: expected a mapping of keys"});
  CHECK(problems("job:\n  steps: [1, 2]\n" + kMachine) ==
        Lines{"s.yaml:2:10: job.steps: expected a single value (integer)"});
  CHECK(problems("job:\n  slow_gpus:\n    - rank: 3\n    - {rank: -1, clock: 1%}\n" + kMachine) ==
        Lines{"s.yaml:3:7: job.slow_gpus[0].clock: required key is missing",
              "s.yaml:4:14: job.slow_gpus[1].rank: must be at least 0"});
  CHECK(problems("job:\n  placement: spread\n" + kMachine) ==
        Lines{"s.yaml:2:14: job.placement: 'spread' is not one of packed, scattered, nor a list "
              "of GPUs"});
  CHECK(problems("job:\n  steps: [8\n") == Lines{"s.yaml:3:1: end of sequence flow not found"});
}

TEST_CASE("rules across a job's keys and the machine point at what breaks them") {
  CHECK(problems("job:\n  slow_gpus:\n    - {rank: 256, clock: 90%}\n" + kMachine) ==
        Lines{"s.yaml:3:14: job.slow_gpus[0].rank: rank 256 does not exist (256 ranks)"});
  CHECK(problems("job:\n  schedule: interleaved\n" + kMachine) ==
        Lines{"s.yaml:2:13: job.schedule: interleaved needs parallelism.virtual_stages of 2 or "
              "more"});
  CHECK(problems("job:\n  global_batch: 100\n" + kMachine) ==
        Lines{"s.yaml:2:3: job: the global batch 100 is not a multiple of data-parallel size x "
              "micro-batch (8)"});
  CHECK(problems("job:\n  parallelism: {data: 16}\n" + kMachine) ==
        Lines{"s.yaml:2:3: job: needs 512 GPUs; the cluster has 256"});
  CHECK(problems("job:\n  parallelism: {pipeline: 3, data: 8}\n" + kMachine) ==
        Lines{"s.yaml:2:3: job: 80 layers do not split evenly over 3 pipeline stages"});
  CHECK(problems("job:\n  data: {bytes_per_sample: 4KiB}\n" + kMachine) ==
        Lines{"s.yaml:2:9: job.data: reads from a file system: add job.storage"});
  CHECK(problems("job:\n  steps: 100000000\n" + kMachine)[0].find("s.yaml:2:10: job.steps: ") == 0);
}

TEST_CASE("--set reaches a job's keys, and a resolved job decodes to itself") {
  const Scenario s = scenario("job:\n  steps: 8\n" + kMachine,
                              {"job.steps=32", "job.placement=scattered",
                               "job.slow_gpus=[{rank: 1, clock: 80%}]", "simulation.seed=9"});
  CHECK(s.job->steps == 32);
  CHECK(s.job->placement == PlacementKind::kScattered);
  CHECK(s.job->slow_gpus.size() == 1);
  CHECK(problems("", {"job.steps=abc"}) ==
        Lines{"--set job.steps=abc: job.steps: 'abc' is not a whole number"});
  const ScenarioLoad first = load_scenario_text(
      "job:\n  placement: [3, 2, 1, 0, 4, 5, 6, 7]\n  parallelism: {tensor: 8, "
      "pipeline: 1, data: 1}\n  global_batch: 8\n  slow_gpus: [{rank: 2, clock: "
      "90%}]\n" +
          kMachine,
      "s.yaml", as_set({"simulation.until=3s"}));
  REQUIRE(first.loaded);
  const ScenarioLoad second = load_scenario_text(first.loaded->resolved_yaml, "resolved.yaml", {});
  REQUIRE(second.loaded);
  CHECK(second.loaded->resolved_yaml == first.loaded->resolved_yaml);
  CHECK(second.loaded->scenario.job->placement_gpus[0] == 3);
  // The preset's figures are written out: a reader of the resolved scenario needs no presets.
  CHECK(first.loaded->resolved_yaml.find(
            "servers:\n  preset: dgx-h100\n  gpus: 8\n  nvlink_bandwidth: 2966.4Gbps\n  "
            "nvlink_latency: 300ns\n") != std::string::npos);
}

TEST_CASE("a key given twice in one mapping is an error naming both places") {
  CHECK(problems("job:\n  steps: 8\n  micro_batch: 2\n  steps: 16\n" + kMachine) ==
        Lines{"s.yaml:4:3: job.steps: key given twice (first at line 2, column 3); YAML allows "
              "each key once"});
  CHECK(problems("job:\n  slow_gpus:\n    - {rank: 1, clock: 95%, rank: 2}\n" + kMachine) ==
        Lines{"s.yaml:3:29: job.slow_gpus[0].rank: key given twice (first at line 3, column 8); "
              "YAML allows each key once"});
  CHECK(problems("simulation: {seed: 1}\njob: {steps: 8}\nsimulation: {seed: 2}\n") ==
        Lines{"s.yaml:3:1: simulation: key given twice (first at line 1, column 1); YAML allows "
              "each key once"});
  CHECK(problems("job:\n  slow_gpus: [{rank: 1, clock: 95%}, {rank: 2, clock: 95%}]\n" + kMachine)
            .empty());
}

TEST_CASE("traffic cannot run on the analytic network level") {
  CHECK(problems("network:\n  model: analytic\n  topology: {kind: leaf_spine}\ntraffic:\n  flows: "
                 "[{source: 0, destination: 1, size: 1MB}]\n") ==
        Lines{"s.yaml:2:10: network.model: analytic prices a training job's collectives; traffic "
              "needs a flow or packet network"});
}

// Two servers of 8 GPUs on a leaf-spine, with a small job, and `faults` as given.
std::string with_faults(const std::string& faults, const std::string& model = "flow") {
  return "servers: {preset: dgx-h100}\nnetwork:\n  model: " + model +
         "\n  topology:\n    kind: leaf_spine\n    leaf_spine: {leaves: 2, spines: 1, "
         "hosts_per_leaf: 8, uplinks_per_leaf: 1}\njob:\n  model: {preset: llama2-7b}\n  "
         "parallelism: {tensor: 8, pipeline: 1, data: 2}\n  global_batch: 8\nfaults:\n" +
         faults;
}

TEST_CASE("faults decode with their targets, times and figures") {
  const Scenario s = scenario(
      with_faults("  - {kind: thermal, gpu: 7, clock: 70%, onset: 2s, at: 1s, duration: 1min}\n"
                  "  - {kind: xid, rank: 3, step: 2}\n"
                  "  - {kind: link_flap, a: leaf0, b: spine0, down: 3s, up: 4s, flaps: 2}\n"
                  "  - {kind: nccl_socket, rate: 25Gbps}\n"));
  REQUIRE(s.faults.size() == 4);
  CHECK(s.faults[0].kind == FaultKind::kThermal);
  CHECK(*s.faults[0].clock == doctest::Approx(0.7));
  CHECK(*s.faults[0].duration == Duration::s(60));
  CHECK(*s.faults[1].step == 2);
  CHECK(*s.faults[2].flaps == 2);
  CHECK(*s.faults[3].rate == BitRate::gbps(25));
  CHECK(s.defences.watchdog.enabled);
  CHECK(s.defences.watchdog.timeout == Duration::s(600));
  CHECK(s.defences.watchdog.poll == Duration::ms(100));
  // --set reaches the list like any key.
  CHECK(scenario(with_faults("  []\n"), {"faults=[{kind: xid, gpu: 3, at: 30s}]"}).faults.size() ==
        1);
}

TEST_CASE(
    "a fault with a missing, extra or absent target, or one the level cannot play, is refused") {
  CHECK(
      problems(with_faults("  - {gpu: 3}\n")) ==
      Lines{"s.yaml:12:5: faults[0].kind: required key is missing: one of thermal, ecc, xid, "
            "stragglers, link_down, link_flap, link_degraded, pfc_storm, slow_receiver, nic_numa, "
            "gpudirect_off, nccl_socket, slow_storage, random_failures"});
  CHECK(problems(with_faults("  - {kind: xid, at: 1s}\n")) ==
        Lines{"s.yaml:12:5: faults[0].gpu: xid needs exactly one target: gpu, rank"});
  CHECK(problems(with_faults("  - {kind: xid, gpu: 1, rank: 2}\n")) ==
        Lines{"s.yaml:12:22: faults[0].gpu: xid needs exactly one target: gpu, rank"});
  CHECK(problems(with_faults("  - {kind: thermal, gpu: 1, clock: 70%, rate: 1Gbps}\n")) ==
        Lines{"s.yaml:12:47: faults[0].rate: thermal takes no `rate`"});
  CHECK(problems(with_faults("  - {kind: thermal, gpu: 16, clock: 70%}\n")) ==
        Lines{"s.yaml:12:26: faults[0].gpu: no GPU 16 (16 in the cluster)"});
  CHECK(problems(with_faults("  - {kind: thermal, gpu: 1, clock: 170%}\n")) ==
        Lines{"s.yaml:12:36: faults[0].clock: must lie in (0, 1], e.g. 80%"});
  CHECK(problems(with_faults("  - {kind: link_down, a: leaf0, b: spine9}\n")) ==
        Lines{"s.yaml:12:36: faults[0].b: no switch or host named 'spine9'"});
  CHECK(problems(with_faults("  - {kind: pfc_storm, nic: 3}\n", "analytic")) ==
        Lines{"s.yaml:12:12: faults[0].kind: pfc_storm changes the fabric, which network.model "
              "analytic does not simulate: use flow or packet"});
  CHECK(problems(with_faults("  - {kind: nic_numa, nic: 3, at: 1s}\n")) ==
        Lines{"s.yaml:12:34: faults[0].at: nic_numa is a misconfiguration present from the start: "
              "it takes no time"});
  CHECK(problems(with_faults("  - {kind: thermal, gpu: 1, clock: 70%}\n"),
                 {"job.reuse_steady_step=true"}) ==
        Lines{"s.yaml:12:12: faults[0].kind: thermal changes what a step costs, which "
              "job.reuse_steady_step prices once: only xid and random_failures run with it"});
}

}  // namespace
}  // namespace lockstep
