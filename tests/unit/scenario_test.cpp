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

TEST_CASE("a job given empty takes every default") {
  const Scenario s = scenario("job:\n");
  CHECK(s.simulation.seed == 1);
  CHECK_FALSE(s.simulation.until.has_value());
  CHECK(s.job->ranks == 64);
  CHECK(s.job->compute_per_step == Duration::ms(400));
  CHECK(s.job->compute_jitter == doctest::Approx(0.02));
  CHECK(s.job->gradient_size == Bytes(2'600'000'000));
  CHECK(s.job->all_reduce.bandwidth == BitRate::gbps(400));
  CHECK(s.job->slow_ranks.empty());
}

TEST_CASE("values with units, percentages and lists decode into the config") {
  const Scenario s = scenario(
      "simulation: {seed: 7, until: 2.5s}\n"
      "job:\n"
      "  ranks: 8\n"
      "  all_reduce: {algorithm: rabenseifner, latency: 1.5us, bandwidth: 900GB/s}\n"
      "  slow_ranks:\n"
      "    - {rank: 3, slowdown: 12.5%}\n"
      "    - {rank: 5, slowdown: 0.5}\n");
  CHECK(s.simulation.seed == 7);
  CHECK(*s.simulation.until == Duration::ms(2'500));
  CHECK(s.job->all_reduce.algorithm == AllReduceAlgorithm::kRabenseifner);
  CHECK(s.job->all_reduce.latency == Duration::ns(1'500));
  CHECK(s.job->all_reduce.bandwidth.bps() == 7'200'000'000'000);
  REQUIRE(s.job->slow_ranks.size() == 2);
  CHECK(s.job->slow_ranks[0].slowdown == doctest::Approx(0.125));
  CHECK(s.job->slow_ranks[1].rank == 5);
}

TEST_CASE("an unknown key names the nearest valid one") {
  CHECK(problems("job:\n  rnaks: 8\n") ==
        Lines{"s.yaml:2:3: job.rnaks: unknown key (did you mean 'ranks'?)"});
  CHECK(problems("simulation:\n  flux_capacitor: 1\n") ==
        Lines{"s.yaml:2:3: simulation.flux_capacitor: unknown key (valid keys: seed, until)"});
}

TEST_CASE("a bare number where a unit is needed is an error") {
  CHECK(problems("job:\n  compute_per_step: 400\n") ==
        Lines{"s.yaml:2:21: job.compute_per_step: '400' needs a unit (e.g. 600ns, 1.5us, 10min)"});
  CHECK(problems("job:\n  all_reduce:\n    bandwidth: 400\n") ==
        Lines{"s.yaml:3:16: job.all_reduce.bandwidth: '400' needs a unit (e.g. 400Gbps, 900GB/s)"});
}

TEST_CASE("every problem in a scenario is reported in one pass") {
  CHECK(problems("job:\n"
                 "  ranks: many\n"
                 "  steps: 0\n"
                 "  gradient_size: 2.6 gigabytes\n"
                 "  all_reduce: {algorithm: rign}\n"
                 "  colour: blue\n") ==
        Lines{
            "s.yaml:6:3: job.colour: unknown key (valid keys: ranks, steps, compute_per_step, "
            "compute_jitter, gradient_size, all_reduce, slow_ranks, placement)",
            "s.yaml:2:10: job.ranks: 'many' is not a whole number",
            "s.yaml:3:10: job.steps: must be at least 1",
            "s.yaml:4:18: job.gradient_size: '2.6 gigabytes': unknown size unit 'gigabytes' (use "
            "one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)",
            "s.yaml:5:27: job.all_reduce.algorithm: 'rign' is not one of ring, recursive_doubling, "
            "rabenseifner (did you mean 'ring'?)",
        });
}

TEST_CASE("values of the wrong shape are rejected") {
  CHECK(problems("job: 5\n") == Lines{"s.yaml:1:6: job: expected a mapping of keys"});
  CHECK(problems("job:\n  ranks: [1, 2]\n") ==
        Lines{"s.yaml:2:10: job.ranks: expected a single value (integer)"});
  CHECK(problems("job:\n  slow_ranks: {rank: 1}\n") ==
        Lines{"s.yaml:2:15: job.slow_ranks: expected a list"});
}

TEST_CASE("list items report missing keys and bad values with their index") {
  CHECK(problems("job:\n  slow_ranks:\n    - rank: 3\n    - {rank: -1, slowdown: 1%}\n") ==
        Lines{"s.yaml:3:7: job.slow_ranks[0].slowdown: required key is missing",
              "s.yaml:4:14: job.slow_ranks[1].rank: must be at least 0"});
}

TEST_CASE("rules across keys point at the key that breaks them") {
  CHECK(problems("job:\n  ranks: 8\n  slow_ranks:\n    - {rank: 8, slowdown: 5%}\n") ==
        Lines{"s.yaml:4:14: job.slow_ranks[0].rank: rank 8 does not exist (ranks: 8)"});
  CHECK(problems("job:\n  ranks: 12\n  all_reduce: {algorithm: recursive_doubling}\n") ==
        Lines{"s.yaml:2:10: job.ranks: 12 ranks: the chosen all-reduce algorithm needs a power of "
              "two"});
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

TEST_CASE("a YAML syntax error gives its line and column") {
  CHECK(problems("job:\n  ranks: [8\n") == Lines{"s.yaml:3:1: end of sequence flow not found"});
}

TEST_CASE("--set overrides any key, and problems in it name the argument") {
  const Scenario s = scenario("job:\n  ranks: 8\n",
                              {"job.ranks=32", "job.all_reduce.latency=2us", "simulation.seed=9"});
  CHECK(s.job->ranks == 32);
  CHECK(s.job->all_reduce.latency == Duration::us(2));
  CHECK(s.simulation.seed == 9);
  CHECK(scenario("", {"job.slow_ranks=[{rank: 1, slowdown: 3%}]"}).job->slow_ranks.size() == 1);

  CHECK(problems("", {"job.ranks=abc"}) ==
        Lines{"--set job.ranks=abc: job.ranks: 'abc' is not a whole number"});
  CHECK(problems("", {"job.rnaks=3"}) ==
        Lines{"--set job.rnaks=3: job.rnaks: unknown key (did you mean 'ranks'?)"});
  CHECK(problems("", {"job.ranks"}) == Lines{"--set job.ranks: expected key.path=value"});
  CHECK(problems("", {"job..ranks=3"}) ==
        Lines{"--set job..ranks=3: job..ranks: malformed key path (write e.g. "
              "job.slow_ranks[0].rank)"});
}

TEST_CASE("--set reaches into list items that exist, and says so when they do not") {
  const std::string two_slow =
      "job:\n  slow_ranks:\n    - {rank: 1, slowdown: 5%}\n    - {rank: 2, slowdown: 5%}\n";
  const Scenario s = scenario(two_slow, {"job.slow_ranks[1].slowdown=20%"});
  CHECK(s.job->slow_ranks[1].slowdown == doctest::Approx(0.2));
  CHECK(s.job->slow_ranks[0].slowdown == doctest::Approx(0.05));
  CHECK(problems(two_slow, {"job.slow_ranks[2].rank=3"}) ==
        Lines{"--set job.slow_ranks[2].rank=3: job.slow_ranks[2].rank: 'job.slow_ranks' has no "
              "item 2 (it has 2)"});
  CHECK(problems(two_slow, {"job.slow_ranks[0].rnak=3"}) ==
        Lines{"--set job.slow_ranks[0].rnak=3: job.slow_ranks[0].rnak: unknown key (did you mean "
              "'rank'?)"});
  CHECK(problems("", {"job.ranks[0]=3"}) ==
        Lines{"--set job.ranks[0]=3: job.ranks[0]: 'job.ranks' has no item 0 (it is not a list)"});
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

TEST_CASE("the resolved scenario decodes to itself") {
  const ScenarioLoad first =
      load_scenario_text("job:\n  ranks: 8\n  slow_ranks: [{rank: 2, slowdown: 10%}]\n", "s.yaml",
                         as_set({"simulation.until=3s"}));
  REQUIRE(first.loaded);
  const ScenarioLoad second = load_scenario_text(first.loaded->resolved_yaml, "resolved.yaml", {});
  REQUIRE(second.loaded);
  CHECK(second.loaded->resolved_yaml == first.loaded->resolved_yaml);
  CHECK(second.loaded->scenario.job->slow_ranks[0].slowdown == doctest::Approx(0.1));
  CHECK(*second.loaded->scenario.simulation.until == Duration::s(3));
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
  CHECK(problems("job: {ranks: 8}\nservers: {preset: dgx-h100}\n") ==
        Lines{"s.yaml:2:10: servers: needs a `network` whose endpoints they sit at"});
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

TEST_CASE("a job's placement names distinct GPUs of the network, grouped evenly by server") {
  const std::string job = "job: {ranks: 4, placement: ";
  CHECK(scenario(with_machines(job + "[7, 6, 5, 4]}\n")).job->placement ==
        std::vector<std::int32_t>{7, 6, 5, 4});
  CHECK(problems(with_machines(job + "[7, 6, 5]}\n")) ==
        Lines{"s.yaml:6:28: job.placement: places 3 ranks; the job has 4"});
  CHECK(problems(with_machines(job + "[1, 1, 2, 3]}\n")) ==
        Lines{"s.yaml:6:28: job.placement: places two ranks on one GPU"});
  CHECK(problems(with_machines(job + "[0, 1, 2, 8]}\n")) ==
        Lines{"s.yaml:6:38: job.placement[3]: no rank 8 (ranks 0 to 7)"});
  CHECK(problems(with_machines("servers: {gpus: 4}\n" + job + "[0, 1, 2, 4]}\n"))[0].find(
            "job.placement") != std::string::npos);
  CHECK(problems(job + "[0, 1, 2, 3]}\n") ==
        Lines{"s.yaml:1:28: job.placement: places ranks on a `network`'s GPUs: add one"});
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// yaml-cpp keeps a repeated key and answers with the first, so an override appended at the end of a
// file was lost without a word.
TEST_CASE("a key given twice in one mapping is an error naming both places") {
  CHECK(problems("job:\n  ranks: 8\n  steps: 2\n  ranks: 16\n") ==
        Lines{"s.yaml:4:3: job.ranks: key given twice (first at line 2, column 3); YAML allows "
              "each key once"});
  CHECK(problems("job:\n  ranks: 8\n  slow_ranks:\n    - {rank: 1, slowdown: 5%, rank: 2}\n") ==
        Lines{"s.yaml:4:31: job.slow_ranks[0].rank: key given twice (first at line 4, column 8); "
              "YAML allows each key once"});
  CHECK(problems("simulation: {seed: 1}\njob: {ranks: 8}\nsimulation: {seed: 2}\n") ==
        Lines{"s.yaml:3:1: simulation: key given twice (first at line 1, column 1); YAML allows "
              "each key once"});
  // The same key in different mappings is fine.
  CHECK(problems("job:\n  ranks: 8\n  slow_ranks: [{rank: 1, slowdown: 5%}, {rank: 2, "
                 "slowdown: 5%}]\n")
            .empty());
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// Each of these once validated, then overflowed the picosecond clock and ended as "event scheduled
// in the past" (exit 3), blaming the model.
TEST_CASE("a job longer than the simulated clock can count is refused at validation") {
  const std::string job = "job:\n  ranks: 64\n  steps: 20\n";
  for (const std::string& extra :
       {std::string("  compute_per_step: 200h\n"), std::string("  all_reduce: {bandwidth: 1bps}\n"),
        std::string("  slow_ranks: [{rank: 1, slowdown: 1e7}]\n"),
        std::string("  gradient_size: 9000000TB\n")}) {
    CAPTURE(extra);
    const std::vector<std::string> found = problems(job + extra);
    REQUIRE(found.size() == 1);
    CHECK(found[0].find("s.yaml:3:10: job.steps: ") == 0);
    CHECK(found[0].find("the run would pass the longest simulated time, about 106 days") !=
          std::string::npos);
  }
  CHECK(problems(job + "  compute_jitter: 1e300\n") ==
        Lines{"s.yaml:4:19: job.compute_jitter: must lie between 0 and 10"});
  CHECK(problems(job + "  compute_per_step: 10h\n").empty());  // 200 h of 106 days: fine
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// A buffer smaller than the PFC headroom its ports reserve used to pass validation and fail at run
// time with exit 1 and no key: now validation names the switch, the sizes and the key.
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
