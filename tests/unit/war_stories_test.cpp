// The war stories of scenarios/war-stories, each run as `lockstep run` runs it and held against its
// healthy twin: the figure each story shows must come out of the simulation, so the stories whose
// fault sits on one GPU or NIC run again with the fault moved, and the culprit found must move
// with it.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "memory_backend.hpp"
#include "models/fault/fault_injector.hpp"
#include "models/training/defence_log.hpp"
#include "models/training/training_tables.hpp"
#include "models/transport/network_tables.hpp"
#include "sim/run/run.hpp"
#include "sim/scenario/scenario.hpp"

namespace lockstep {
namespace {

struct Story {
  RunSummary summary;
  testing::MemoryBackend tables;

  template <class Row>
  [[nodiscard]] std::vector<Row> rows(const std::string& table) const {
    return tables.rows<Row>(table);
  }
  [[nodiscard]] std::vector<TrainingStepRow> steps() const {
    return rows<TrainingStepRow>("steps");
  }
  // When the job's last step ended.
  [[nodiscard]] std::int64_t job_end() const { return steps().back().end_ps; }
  [[nodiscard]] std::vector<DefenceRow> defences(std::string_view kind) const {
    std::vector<DefenceRow> out;
    for (const DefenceRow& d : rows<DefenceRow>("defences")) {
      if (d.defence.view() == kind) out.push_back(d);
    }
    return out;
  }
};

Story run_story(const std::string& file, const std::vector<std::string>& overrides = {}) {
  std::vector<Override> sets;
  for (const std::string& s : overrides) sets.push_back(set_argument(s));
  const ScenarioLoad load =
      load_scenario_file(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/war-stories/" + file, sets);
  for (const Diagnostic& d : load.diagnostics.all()) INFO(d.to_string());
  REQUIRE(load.loaded);
  Story story;
  story.summary = run_scenario(*load.loaded, story.tables, RunOptions{});
  return story;
}

double seconds(std::int64_t ps) { return static_cast<double>(ps) * 1e-12; }

double mean_step(const Story& s) {
  const std::vector<TrainingStepRow> steps = s.steps();
  REQUIRE_FALSE(steps.empty());
  return seconds(steps.back().end_ps - steps.front().start_ps) / static_cast<double>(steps.size());
}

// The slowest rank's rank_steps row of each step, by step.
std::map<std::int64_t, TrainingRankStepRow> slowest_rows(const Story& s) {
  std::map<std::int64_t, std::int64_t> slowest;
  for (const TrainingStepRow& step : s.steps()) slowest[step.step] = step.slowest_rank;
  std::map<std::int64_t, TrainingRankStepRow> out;
  for (const TrainingRankStepRow& r : s.rows<TrainingRankStepRow>("rank_steps")) {
    if (slowest.at(r.step) == r.rank) out[r.step] = r;
  }
  return out;
}

TEST_CASE("war story 1: an 8-GPU TP job spread over two servers runs 1.8x-5x slower than packed") {
  const Story spread = run_story("1_tp_across_nodes.yaml");
  const Story packed = run_story("1_tp_across_nodes.yaml", {"job.placement=packed"});
  const double ratio = mean_step(spread) / mean_step(packed);
  INFO("spread " << mean_step(spread) << " s, packed " << mean_step(packed) << " s");
  CHECK(ratio >= 1.8);
  CHECK(ratio <= 5.0);
  // What grew is the TP collectives: the kernels are the same.
  const TrainingRankStepRow s = slowest_rows(spread).rbegin()->second;
  const TrainingRankStepRow p = slowest_rows(packed).rbegin()->second;
  CHECK(s.compute_ps == p.compute_ps);
  CHECK(s.tp_comm_ps > 3 * p.tp_comm_ps);
}

// Story 2 with the Xid on `gpu` at 1.5 s (the job packed: job rank = GPU).
void check_xid_story(std::int32_t gpu) {
  CAPTURE(gpu);
  const std::string fault = "faults=[{kind: xid, gpu: " + std::to_string(gpu) + ", at: 1500ms}]";
  SUBCASE("without a watchdog the run ends in a hang report naming every blocked rank") {
    const Story hung = run_story("2_xid_hang.yaml", {fault});
    CHECK(hung.summary.job_outcome == "hang");
    CHECK(hung.summary.report.find("hang:") != std::string::npos);
    // Ended by itself moments after the failure, not by spinning.
    CHECK(seconds(hung.summary.end.ps()) < 5.0);
    const auto blocked = hung.rows<BlockedRankRow>("blocked_ranks");
    std::set<std::int64_t> waiting;
    std::int64_t dead = -1;
    for (const BlockedRankRow& b : blocked) {
      if (b.waiting_in.view() == "failed GPU") {
        dead = b.rank;
      } else {
        waiting.insert(b.rank);
        CHECK(b.since_ps >= 0);
      }
    }
    CHECK(dead == gpu);
    CHECK(waiting.size() == 31);
    CHECK_FALSE(waiting.contains(gpu));
    // The dead rank's tensor-parallel peers wait in a collective it never finished.
    bool named = false;
    for (const BlockedRankRow& b : blocked) {
      if (b.rank / 8 == gpu / 8 && b.rank != gpu) {
        named = named || b.never_arrived.view() == std::to_string(gpu);
      }
    }
    CHECK(named);
  }
  SUBCASE("with the watchdog the job crashes within timeout + one poll, naming the culprit") {
    const Story crashed = run_story("2_xid_hang.yaml", {fault, "defences.watchdog.enabled=true"});
    CHECK(crashed.summary.job_outcome == "collective_timeout");
    const std::vector<DefenceRow> fired = crashed.defences("watchdog");
    REQUIRE(fired.size() == 1);
    const double at = seconds(fired[0].at_ps);
    CHECK(at <= 1.5 + 600 + 0.1);
    CHECK(at >= 1.5 + 600 - 1.3);  // the oldest wait began at most one step before the Xid
    CHECK(fired[0].at_ps % 100'000'000'000 == 0);  // on a poll
    const std::string detail(fired[0].detail.view());
    CHECK(detail.find("never arrived or lost: " + std::to_string(gpu)) != std::string::npos);
  }
  const auto faults = run_story("2_xid_hang.yaml", {fault}).rows<FaultRow>("faults");
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].kind.view() == "xid");
  CHECK(faults[0].start_ps == 1'500'000'000'000);
  CHECK(faults[0].end_ps == -1);
}

TEST_CASE("war story 2: an Xid on GPU 13 hangs the job, or with the watchdog crashes it") {
  check_xid_story(13);
}

TEST_CASE("war story 2, moved: the same with the Xid on GPU 26") { check_xid_story(26); }

// The data-parallel collectives of the recorded rank, in seconds each.
std::vector<double> dp_collectives(const Story& s) {
  std::vector<double> out;
  for (const TrainingOpRow& op : s.rows<TrainingOpRow>("rank_ops")) {
    if (op.communicator.view() == "dp") out.push_back(seconds(op.end_ps - op.start_ps));
  }
  return out;
}

TEST_CASE("war story 3: NCCL on sockets makes inter-node collectives 5x-15x slower") {
  const Story sockets = run_story("3_nccl_on_sockets.yaml");
  const Story rdma = run_story("3_nccl_on_sockets.yaml", {"faults=[]"});
  const std::vector<double> slow = dp_collectives(sockets);
  const std::vector<double> fast = dp_collectives(rdma);
  REQUIRE(slow.size() == fast.size());
  REQUIRE_FALSE(slow.empty());
  double slow_sum = 0, fast_sum = 0;
  for (std::size_t i = 0; i < slow.size(); ++i) {
    slow_sum += slow[i];
    fast_sum += fast[i];
  }
  INFO("sockets " << slow_sum << " s, RDMA " << fast_sum << " s of DP collectives");
  CHECK(slow_sum / fast_sum >= 5.0);
  CHECK(slow_sum / fast_sum <= 15.0);
  // The step grows by the exposed part of them: the kernels and NVLink collectives are the same.
  const TrainingRankStepRow s = slowest_rows(sockets).rbegin()->second;
  const TrainingRankStepRow r = slowest_rows(rdma).rbegin()->second;
  CHECK(s.compute_ps == r.compute_ps);
  const double step_growth = seconds((s.end_ps - s.start_ps) - (r.end_ps - r.start_ps));
  CHECK(step_growth > 0.3);
  CHECK(step_growth == doctest::Approx(seconds(s.dp_comm_ps - r.dp_comm_ps)).epsilon(0.02));
  CHECK(sockets.rows<FaultRow>("faults").size() == 1);
}

// NCCL falling back to sockets leaves RDMA behind, and with it the queue pairs of each connection.
TEST_CASE("NCCL's fallback to sockets takes the hosts off RDMA and its queue pairs") {
  HostsConfig hosts;
  hosts.queue_pairs_per_connection = 4;
  FaultConfig fault;
  fault.kind = FaultKind::kNcclSocket;
  const HostsConfig after = apply_to_hosts({fault}, hosts, 8);
  CHECK(after.transport == FabricTransport::kSocket);
  CHECK(after.queue_pairs_per_connection == 1);
  CHECK(apply_to_hosts({}, hosts, 8).queue_pairs_per_connection == 4);
}

TEST_CASE("war story 4: gradient overlap off costs MFU, by the reduction it exposes") {
  const Story off = run_story("4_gradient_overlap_off.yaml");
  const Story on = run_story("4_gradient_overlap_off.yaml", {"job.overlap_grad_reduce=true"});
  const double mfu_off = off.steps().back().mfu;
  const double mfu_on = on.steps().back().mfu;
  INFO("MFU " << mfu_off << " -> " << mfu_on);
  // The story's 55% -> 78% is 1.42x.
  CHECK(mfu_on / mfu_off >= 1.3);
  const TrainingRankStepRow a = slowest_rows(off).rbegin()->second;
  const TrainingRankStepRow b = slowest_rows(on).rbegin()->second;
  CHECK(a.compute_ps == b.compute_ps);
  const double saved = seconds((a.end_ps - a.start_ps) - (b.end_ps - b.start_ps));
  CHECK(saved == doctest::Approx(seconds(a.dp_comm_ps - b.dp_comm_ps)).epsilon(0.02));
}

// Story 5 shrunk to 64 GPUs (DP=2, 17 servers with the spare), the slow GPU at `gpu`.
void check_slow_gpu_story(std::int32_t gpu) {
  CAPTURE(gpu);
  const std::vector<std::string> smaller = {
      "job.parallelism.data=2", "job.global_batch=64", "network.topology.rail_optimized.servers=9",
      "network.topology.rail_optimized.uplinks_per_rail_switch=9"};
  std::vector<std::string> faulted = smaller;
  faulted.push_back("faults=[{kind: thermal, gpu: " + std::to_string(gpu) +
                    ", at: 10s, clock: 70%, onset: 2s}, {kind: ecc, gpu: " + std::to_string(gpu) +
                    ", at: 10s, slowdown: 5%}]");
  std::vector<std::string> healthy = smaller;
  healthy.emplace_back("faults=[]");
  const Story slow = run_story("5_one_slow_gpu.yaml", faulted);
  const Story twin = run_story("5_one_slow_gpu.yaml", healthy);
  std::map<std::int64_t, double> healthy_step;  // by step: checkpoint steps take longer
  for (const TrainingStepRow& s : twin.steps())
    healthy_step[s.step] = seconds(s.end_ps - s.start_ps);
  CHECK(slow.summary.job_outcome == "completed");
  const std::vector<DefenceRow> drained = slow.defences("straggler_detector");
  REQUIRE(drained.size() == 1);
  CHECK(std::string(drained[0].target.view()) == "node " + std::to_string(gpu / 8));
  // Before the fault every step is the healthy one; once the clock has fallen, every step of the
  // whole job is slower.
  std::int64_t slow_steps = 0;
  for (const TrainingStepRow& s : slow.steps()) {
    if (s.attempt != 0) continue;
    const double took = seconds(s.end_ps - s.start_ps);
    if (s.end_ps <= 10'000'000'000'000) CHECK(took == doctest::Approx(healthy_step.at(s.step)));
    if (s.start_ps >= 12'000'000'000'000) {
      CHECK(took > 1.15 * healthy_step.at(s.step));
      ++slow_steps;
    }
  }
  CHECK(slow_steps >= 1);
  // Restarted on the spare from its last checkpoint, the job runs at the healthy pace again.
  CHECK(slow.defences("restart").size() >= 2);
  const TrainingStepRow last = slow.steps().back();
  CHECK(last.attempt == 1);
  CHECK(last.step == healthy_step.rbegin()->first);
  CHECK(seconds(last.end_ps - last.start_ps) ==
        doctest::Approx(healthy_step.at(last.step)).epsilon(0.01));
  const auto goodput = slow.rows<GoodputRow>("goodput");
  REQUIRE(goodput.size() == 1);
  CHECK(goodput[0].interruptions == 1);
  CHECK(goodput[0].total_ps == goodput[0].useful_ps + goodput[0].checkpointing_ps +
                                   goodput[0].restarting_ps + goodput[0].lost_ps);
  CHECK(goodput[0].restarting_ps == 120'000'000'000'000);
}

TEST_CASE("war story 5: one slow GPU slows every step until the straggler detector drains it") {
  check_slow_gpu_story(13);
}

TEST_CASE("war story 5, moved: the same with the slow GPU at 42") { check_slow_gpu_story(42); }

TEST_CASE("war story 6: a NIC's pause storm spreads through the spine and stalls another job") {
  const Story storm = run_story("6_pfc_storm.yaml");
  const Story twin = run_story("6_pfc_storm.yaml", {"faults=[]"});
  const Story guarded = run_story("6_pfc_storm.yaml", {"defences.nic_pfc_watchdog.enabled=true"});
  // The job shares no link with the stormed NIC, only the spine's port towards its leaf.
  const double lost = seconds(storm.job_end() - twin.job_end());
  const double lost_guarded = seconds(guarded.job_end() - twin.job_end());
  INFO("job delayed " << lost << " s by the 300 ms storm, " << lost_guarded << " s with the NIC "
                      << "watchdog");
  CHECK(lost > 0.2);
  CHECK(lost < 0.35);
  CHECK(lost_guarded > 0.05);
  CHECK(lost_guarded < 0.15);
  const std::vector<DefenceRow> watchdog = guarded.defences("nic_pfc_watchdog");
  REQUIRE(watchdog.size() == 1);
  CHECK(watchdog[0].at_ps == 120'000'000'000);
  // The pauses reached the spine (its every port faces a switch) and, from it, another leaf.
  const auto ports = storm.rows<PortRow>("ports");
  const std::int64_t endpoints = 48;
  std::map<std::int64_t, bool> faces_only_switches;
  for (const PortRow& p : ports) {
    if (p.node < endpoints) continue;
    auto [it, added] = faces_only_switches.try_emplace(p.node, true);
    it->second = it->second && p.peer >= endpoints;
  }
  std::map<std::int64_t, std::int64_t> paused;  // switch -> ps its ports were paused
  for (const PortTotalRow& t : storm.rows<PortTotalRow>("port_totals")) {
    if (t.node >= endpoints) paused[t.node] += t.paused_ps;
  }
  std::int64_t spine_paused = 0, leaves_paused = 0;
  for (const auto& [node, only_switches] : faces_only_switches) {
    if (only_switches) {
      spine_paused += paused[node];
    } else {
      leaves_paused += paused[node] > 0 ? 1 : 0;
    }
  }
  CHECK(spine_paused > 0);
  CHECK(leaves_paused >= 2);
  // The healthy twin pauses only in brief bursts, where the job's channels (two per NIC, as NCCL
  // runs them across H100 nodes) meet on the leaves' four uplinks: ports held a fraction of a
  // millisecond in all, against seconds in the storm.
  std::int64_t twin_paused = 0, storm_paused = 0;
  for (const PortTotalRow& t : twin.rows<PortTotalRow>("port_totals")) twin_paused += t.paused_ps;
  for (const PortTotalRow& t : storm.rows<PortTotalRow>("port_totals")) storm_paused += t.paused_ps;
  CHECK(twin_paused < 1'000'000'000);
  CHECK(storm_paused > 1'000 * twin_paused);
}

TEST_CASE("war story 6, the switch's watchdog: a port held paused 100 ms stops honouring pauses") {
  const Story twin = run_story("6_pfc_storm.yaml", {"faults=[]"});
  const Story guarded =
      run_story("6_pfc_storm.yaml", {"defences.switch_pfc_watchdog.enabled=true"});
  const std::vector<DefenceRow> watchdog = guarded.defences("switch_pfc_watchdog");
  REQUIRE(watchdog.size() == 1);
  CHECK(watchdog[0].at_ps == 120'000'000'000);
  const double lost = seconds(guarded.job_end() - twin.job_end());
  CHECK(lost > 0.05);
  CHECK(lost < 0.15);
}

// Per endpoint, the time its inter-node messages took, sent and received.
std::map<std::int64_t, std::int64_t> transfer_time(const Story& s) {
  std::map<std::int64_t, std::int64_t> out;
  for (const MessageRow& m : s.rows<MessageRow>("messages")) {
    if (m.source / 8 == m.destination / 8) continue;
    const std::int64_t took = m.acknowledged_ps - m.submitted_ps;
    out[m.source] += took;
    out[m.destination] += took;
  }
  return out;
}

void check_numa_story(std::int32_t nic) {
  CAPTURE(nic);
  const Story misplaced = run_story(
      "7_nic_on_wrong_numa.yaml", {"faults=[{kind: nic_numa, nic: " + std::to_string(nic) + "}]"});
  const Story twin = run_story("7_nic_on_wrong_numa.yaml", {"faults=[]"});
  CHECK(mean_step(misplaced) > 1.05 * mean_step(twin));
  const std::map<std::int64_t, std::int64_t> times = transfer_time(misplaced);
  const auto late = std::max_element(
      times.begin(), times.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  CHECK(late->first == nic);
}

TEST_CASE("war story 7: the rank whose NIC is on the wrong NUMA node is the late one") {
  check_numa_story(21);
}

TEST_CASE("war story 7, moved: the same with the NIC of GPU 6") { check_numa_story(6); }

TEST_CASE("war story 8: a flapping cable holds the collectives that need it to each up") {
  const Story flapping = run_story("8_link_flapping.yaml");
  const Story twin = run_story("8_link_flapping.yaml", {"faults=[]"});
  const double lost = seconds(flapping.job_end() - twin.job_end());
  INFO("lost " << lost << " s to three 3 s down intervals");
  CHECK(lost > 3.0);
  CHECK(lost < 9.0);
  const auto downs = flapping.rows<FaultRow>("faults");
  REQUIRE(downs.size() == 3);
  for (const FaultRow& down : downs) {
    CHECK(down.kind.view() == "link_flap");
    CHECK(down.end_ps - down.start_ps == 3'000'000'000'000);
    // A data-parallel collective of the NIC's rank was caught by it and held to its end.
    bool held = false;
    for (const TrainingOpRow& op : flapping.rows<TrainingOpRow>("rank_ops")) {
      if (op.communicator.view() != "dp") continue;
      held = held ||
             (op.start_ps < down.end_ps && op.end_ps >= down.end_ps && op.end_ps > down.start_ps);
    }
    CHECK(held);
  }
}

// Story 2's cluster (32 GPUs, TP=8, DP=4) with `faults` instead of its own, six steps.
Story on_story_2_cluster(const std::string& faults, std::vector<std::string> more = {}) {
  more.push_back("faults=" + faults);
  more.emplace_back("job.steps=6");
  return run_story("2_xid_hang.yaml", more);
}

std::vector<double> step_seconds(const Story& s) {
  std::vector<double> out;
  for (const TrainingStepRow& row : s.steps()) out.push_back(seconds(row.end_ps - row.start_ps));
  return out;
}

TEST_CASE("a fault given a step begins as that step does") {
  const Story hung = on_story_2_cluster("[{kind: xid, gpu: 13, step: 2}]");
  const std::vector<TrainingStepRow> steps = hung.steps();
  REQUIRE(steps.size() == 2);
  const auto faults = hung.rows<FaultRow>("faults");
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].start_ps == steps[1].end_ps);
  CHECK(hung.summary.job_outcome == "hang");
}

TEST_CASE("a thermal fault with a duration slows the steps it covers and no others") {
  const std::vector<double> healthy = step_seconds(on_story_2_cluster("[]"));
  const Story hot =
      on_story_2_cluster("[{kind: thermal, gpu: 3, clock: 50%, at: 3s, duration: 1500ms}]");
  const std::vector<double> slowed = step_seconds(hot);
  REQUIRE(slowed.size() == healthy.size());
  const auto faults = hot.rows<FaultRow>("faults");
  REQUIRE(faults.size() == 1);
  CHECK(faults[0].end_ps - faults[0].start_ps == 1'500'000'000'000);
  const std::vector<TrainingStepRow> steps = hot.steps();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    CAPTURE(i);
    const bool covered =
        steps[i].end_ps > faults[0].start_ps && steps[i].start_ps < faults[0].end_ps;
    if (covered) {
      CHECK(slowed[i] > 1.1 * healthy[i]);
    } else if (steps[i].start_ps >= faults[0].end_ps + 2'000'000'000'000 ||
               steps[i].end_ps <= faults[0].start_ps) {
      // Once the step after the fault has absorbed the slow rank's lag, the pace is the healthy
      // one.
      CHECK(slowed[i] == doctest::Approx(healthy[i]));
    }
  }
}

TEST_CASE("stragglers slow the steps they draw, deterministically for a seed") {
  const std::vector<double> healthy = step_seconds(on_story_2_cluster("[]"));
  const std::vector<double> always =
      step_seconds(on_story_2_cluster("[{kind: stragglers, rank: 9, probability: 100%, "
                                      "slowdown: 30%}]"));
  const std::vector<double> never =
      step_seconds(on_story_2_cluster("[{kind: stragglers, rank: 9, probability: 0%, "
                                      "slowdown: 30%}]"));
  const std::string sometimes = "[{kind: stragglers, rank: 9, probability: 50%, slowdown: 30%}]";
  const std::vector<double> once = step_seconds(on_story_2_cluster(sometimes));
  const std::vector<double> again = step_seconds(on_story_2_cluster(sometimes));
  for (std::size_t i = 0; i < healthy.size(); ++i) {
    CHECK(always[i] > 1.1 * healthy[i]);
    CHECK(never[i] == doctest::Approx(healthy[i]));
  }
  CHECK(once == again);
  CHECK(once != healthy);
  CHECK(once != always);
}

TEST_CASE("fabric faults slow the job while they last: a degraded cable, a slow receiver") {
  const double healthy = mean_step(on_story_2_cluster("[]"));
  // GPU 10's NIC cable at a tenth of its rate, and GPU 10's host draining at 40 Gb/s, each for
  // the whole run; then the same cable degraded for 2 s only.
  CHECK(mean_step(on_story_2_cluster(
            "[{kind: link_degraded, a: host10, b: rail2, rate: 40Gbps}]")) > 1.2 * healthy);
  CHECK(mean_step(on_story_2_cluster("[{kind: slow_receiver, nic: 10, rate: 40Gbps}]")) >
        1.2 * healthy);
  const Story brief = on_story_2_cluster(
      "[{kind: link_degraded, a: host10, b: rail2, rate: 40Gbps, at: 0s, "
      "duration: 2s}]");
  CHECK(step_seconds(brief).back() ==
        doctest::Approx(step_seconds(on_story_2_cluster("[]")).back()));
  // A cable down for good with no other path stalls the job: a hang, with the watchdog off.
  CHECK(
      on_story_2_cluster("[{kind: link_down, a: host10, b: rail2, at: 1s}]").summary.job_outcome ==
      "hang");
}

TEST_CASE("slow storage makes the data wait; GPUDirect off on a node slows the step") {
  // 16 samples of 256 MiB per replica and step: 4 GiB through a node's 5 GB/s client at a tenth
  // of the file system's rates is several seconds a step, where healthy reads wait only for the
  // first batch.
  const std::vector<std::string> reading = {"job.storage={aggregate: 20GB/s, per_node: 5GB/s}",
                                            "job.data={bytes_per_sample: 256MiB, prefetch: 1}"};
  const Story healthy = on_story_2_cluster("[]", reading);
  const Story slowed = on_story_2_cluster("[{kind: slow_storage, slowdown: 90%, at: 2s}]", reading);
  const auto data_wait = [](const Story& s) {
    std::int64_t wait = 0;
    for (const auto& [step, row] : slowest_rows(s)) wait += row.data_wait_ps;
    return seconds(wait);
  };
  CHECK(data_wait(slowed) > data_wait(healthy) + 5.0);
  CHECK(mean_step(on_story_2_cluster("[{kind: gpudirect_off, node: 1}]")) >
        1.05 * mean_step(on_story_2_cluster("[]")));
}

GoodputRow goodput_of(const Story& s) {
  const auto rows = s.rows<GoodputRow>("goodput");
  REQUIRE(rows.size() == 1);
  const GoodputRow& g = rows[0];
  CHECK(g.total_ps == g.useful_ps + g.checkpointing_ps + g.restarting_ps + g.lost_ps);
  return g;
}

TEST_CASE("restarts onto a lost GPU that no health check drains stop at max_restarts") {
  const Story looping =
      on_story_2_cluster("[{kind: xid, gpu: 13, at: 2s}]",
                         {"defences.watchdog.enabled=true", "defences.watchdog.timeout=20s",
                          "defences.restart={enabled: true, delay: 10s, max_restarts: 2}"});
  CHECK(looping.summary.job_outcome == "collective_timeout");
  CHECK(looping.defences("watchdog").size() == 3);
  CHECK(goodput_of(looping).interruptions == 3);
  CHECK(goodput_of(looping).restarting_ps == 20'000'000'000'000);
}

// Story 2's cluster without its fault: twelve steps, an asynchronous checkpoint every four.
TEST_CASE("a replayed step lasts exactly what the simulated steady step does, checkpoints too") {
  const std::vector<std::string> job = {"faults=[]", "job.steps=12",
                                        "job.storage={aggregate: 50GB/s, per_node: 5GB/s}",
                                        "job.checkpoint={every: 4, mode: async}"};
  std::vector<std::string> replayed = job;
  replayed.emplace_back("job.reuse_steady_step=true");
  const Story simulated = run_story("2_xid_hang.yaml", job);
  const Story priced = run_story("2_xid_hang.yaml", replayed);
  const std::vector<TrainingStepRow> a = simulated.steps();
  const std::vector<TrainingStepRow> b = priced.steps();
  REQUIRE(a.size() == 12);
  REQUIRE(b.size() == 12);
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(a[i].start_ps == b[i].start_ps);
    CHECK(a[i].end_ps == b[i].end_ps);
    CHECK(a[i].mfu == doctest::Approx(b[i].mfu));
  }
  // Only the steps simulated before the price was known have rank rows.
  CHECK(priced.rows<TrainingRankStepRow>("rank_steps").size() <
        simulated.rows<TrainingRankStepRow>("rank_steps").size());
}

// Story 9 shrunk to a 64-GPU job on 16 servers, its nodes failing 200 times per 1000 node-days,
// for 20 simulated days, a sync checkpoint costing ~98 s (980 GB at 10 GB/s).
Story failure_study(std::int64_t every, const std::string& mode) {
  return run_story(
      "9_failures_at_scale.yaml",
      {"simulation.until=480h", "network.topology.rail_optimized.servers=16",
       "network.topology.rail_optimized.servers_per_rail_group=16",
       "network.topology.rail_optimized.spines=8",
       "network.topology.rail_optimized.uplinks_per_rail_switch=16",
       "job.model={preset: llama2-70b}", "job.parallelism={tensor: 8, pipeline: 8, data: 1}",
       "job.global_batch=64", "job.storage={aggregate: 10GB/s, per_node: 2GB/s}",
       "job.checkpoint={every: " + std::to_string(every) + ", mode: " + mode + "}",
       "faults=[{kind: random_failures, per_1000_node_days: 200}]",
       "defences.health_check.repair=24h"});
}

TEST_CASE(
    "war story 9: failures at scale interrupt at their rate; checkpoint cadence sets goodput") {
  const GoodputRow rare = goodput_of(failure_study(5000, "sync"));
  const GoodputRow young = goodput_of(failure_study(500, "sync"));
  const GoodputRow often = goodput_of(failure_study(50, "sync"));
  const GoodputRow often_async = goodput_of(failure_study(50, "async"));
  // Failures strike the 8 nodes of the job 1.6 times a day: 32 expected in 20 days (a Poisson
  // count, 5.7 its standard deviation); the same draws whatever the cadence.
  CHECK(young.interruptions >= 16);
  CHECK(young.interruptions <= 48);
  CHECK(rare.interruptions == young.interruptions);
  CHECK(often.interruptions == young.interruptions);
  // Young's optimum, sqrt(2 x 98 s x 15 h), is about 490 steps of 6.7 s: rarer checkpoints lose
  // more work to each failure, more frequent ones stall more.
  CHECK(young.goodput > rare.goodput + 0.1);
  CHECK(young.goodput > often.goodput + 0.1);
  CHECK(rare.steps_redone > 5 * young.steps_redone);
  CHECK(often.checkpointing_ps > 5 * young.checkpointing_ps);
  // An asynchronous checkpoint stalls only for the copy to host memory: frequent ones are cheap.
  CHECK(often_async.goodput > young.goodput);
}

}  // namespace
}  // namespace lockstep
