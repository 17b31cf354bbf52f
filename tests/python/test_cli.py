"""Behaviour of the `lockstep` program as a user meets it: files, exit codes, messages, signals.

Needs LOCKSTEP_BIN (the program), LOCKSTEP_SOURCE_DIR (the source tree) and analysis/ on PYTHONPATH;
ctest sets all three (tests/CMakeLists.txt). Exit codes: 0 done, 2 bad input, 130 interrupted.
"""

import filecmp
import os
import re
import resource
import signal
import stat
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

import lockstep_analysis as la

BIN = os.environ["LOCKSTEP_BIN"]
SOURCE = Path(os.environ["LOCKSTEP_SOURCE_DIR"])
DEFAULT_SCENARIO = SOURCE / "scenarios" / "worked-example.yaml"

# The worked example made small enough to run in a fraction of a second: 8 layers (2 per stage),
# 4 micro-batches per replica, collectives priced by formula; GPU 3 throttled to 92%.
SMALL = ["--set", "network.model=analytic", "--set", "job.model.layers=8",
         "--set", "job.global_batch=32", "--set", "job.steps=3",
         "--set", "job.slow_gpus=[{rank: 3, clock: 92%}]"]
# The fastest fabric scenario (about 0.1 s; incast.yaml takes about 0.3 s, permutation.yaml 0.7 s).
VICTIM = SOURCE / "scenarios" / "fabric" / "victim.yaml"
COLLECTIVES = SOURCE / "scenarios" / "collectives" / "leaf_spine_16.yaml"
SERVERS = SOURCE / "scenarios" / "collectives" / "dgx_h100_2_nodes.yaml"
JOB_WITH_TRAFFIC = SOURCE / "scenarios" / "jobs" / "data_parallel_with_background.yaml"


def lockstep(*args, cwd=None):
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          timeout=60)


class CliTestCase(unittest.TestCase):
    def setUp(self):
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.dir = Path(directory.name)

    def write_scenario(self, text, name="bad.yaml"):
        path = self.dir / name
        path.write_text(text)
        return path

    def assert_exit(self, result, code):
        self.assertEqual(result.returncode, code,
                         f"exit {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}")

    def assert_nothing_written(self, out):
        self.assertFalse(out.exists(), f"{out} was written")
        self.assertEqual(list(out.parent.glob(f"{out.name}.partial*")), [], "a partial file was left")
        self.assertEqual(list(self.dir.glob("*.h5*")), [], "some output file was written")


class Running(CliTestCase):
    def test_run_without_a_scenario_writes_its_h5_in_the_working_directory(self):
        result = lockstep("run", "--set", "network.model=analytic", "--set", "job.steps=1",
                          cwd=self.dir)
        self.assert_exit(result, 0)
        written = self.dir / "worked-example.h5"
        self.assertTrue(written.is_file())
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["worked-example.h5"])
        self.assertIn(f"wrote {written.resolve()}", result.stdout)
        self.assertEqual(Path(la.meta(written)["scenario_file"]).resolve(), DEFAULT_SCENARIO.resolve())

    def test_until_stops_the_run_early_and_records_reached_until(self):
        out = self.dir / "until.h5"
        result = lockstep("run", "-o", out, "--until", "1s", "--set", "job.steps=20", cwd=self.dir)
        self.assert_exit(result, 0)
        info = la.meta(out)
        self.assertEqual(info["outcome"], "reached_until")
        self.assertEqual(info["end_ps"], 10**12)
        steps = la.load_table(out, "steps")
        self.assertLess(len(steps), 20)
        self.assertTrue((steps["end_ps"] <= 10**12).all())

    def test_a_hung_or_crashed_job_is_a_result_exit_0_with_its_outcome(self):
        story = SOURCE / "scenarios" / "war-stories" / "2_xid_hang.yaml"
        hung = self.dir / "hung.h5"
        result = lockstep("run", story, "-o", hung)
        self.assert_exit(result, 0)
        self.assertEqual(la.meta(hung)["outcome"], "hang")
        self.assertRegex(result.stdout, r"(?m)^lockstep: job outcome: hang$")
        self.assertRegex(result.stdout, r"(?m)^lockstep: hang: nothing left could move the job; "
                                        r"31 ranks blocked, 1 on failed GPUs")
        self.assertEqual(len(la.load_table(hung, "faults")), 1)
        crashed = self.dir / "crashed.h5"
        result = lockstep("run", story, "-o", crashed, "--set", "defences.watchdog.enabled=true",
                          "--set", "defences.watchdog.timeout=30s")
        self.assert_exit(result, 0)
        self.assertEqual(la.meta(crashed)["outcome"], "collective_timeout")
        defences = la.load_table(crashed, "defences")
        self.assertEqual(list(defences["defence"]), ["watchdog"])
        self.assertIn("never arrived or lost: 13", defences["detail"][0])

    def test_an_empty_seed_is_refused_not_ignored(self):
        result = lockstep("validate", VICTIM, "--seed", "")
        self.assert_exit(result, 2)
        self.assertIn("--seed : simulation.seed: no value after '='", result.stderr)

    def test_a_run_to_the_end_records_completed(self):
        out = self.dir / "small.h5"
        self.assert_exit(lockstep("run", "-o", out, *SMALL), 0)
        self.assertEqual(la.meta(out)["outcome"], "completed")
        self.assertEqual(len(la.load_table(out, "steps")), 3)


    def test_a_fabric_scenario_runs_its_flows_and_reports_them(self):
        result = lockstep("run", VICTIM, cwd=self.dir)
        self.assert_exit(result, 0)
        written = self.dir / "victim.h5"
        self.assertTrue(written.is_file())
        lines = result.stdout.splitlines()
        self.assertRegex(result.stdout, r"(?m)^lockstep: 4 of 4 flows completed in \S+ simulated "
                                        r"on 10 endpoints, 3 switches \(packet level\)$")
        self.assertRegex(result.stdout, r"(?m)^lockstep: flow completion: min \S+, median \S+, "
                                        r"p99 \S+, max \S+$")
        self.assertRegex(result.stdout, r"(?m)^lockstep: pause frames [1-9]\d*, dropped payload 0B$")
        self.assertIn(f"lockstep: wrote {written.resolve()}", lines)
        self.assertEqual(la.run_kind(written), "fabric")
        self.assertEqual(la.meta(written)["outcome"], "completed")
        self.assertEqual(len(la.load_table(written, "flows")), 4)
        self.assertNotIn("steps", la.tables(written))


    def test_the_peak_memory_it_reports_is_its_own_not_its_parents(self):
        """Linux's rusage carries a forking parent's size across exec; the figure the benchmarks
        quote does not: with 384 MiB held here, the run reports its own tens of MiB."""
        held = bytearray(384 << 20)
        for page in range(0, len(held), 4096):
            held[page] = 1
        result = lockstep("run", VICTIM, cwd=self.dir)
        del held
        self.assert_exit(result, 0)
        peak = re.search(r"(?m)^lockstep: peak resident memory ([0-9.]+) MiB$", result.stdout)
        self.assertIsNotNone(peak, result.stdout)
        self.assertGreater(float(peak.group(1)), 1)
        self.assertLess(float(peak.group(1)), 256)

    def test_the_same_scenario_runs_at_flow_level_with_one_key(self):
        out = self.dir / "victim_flows.h5"
        result = lockstep("run", VICTIM, "-o", out, "--set", "network.model=flow")
        self.assert_exit(result, 0)
        self.assertRegex(result.stdout, r"(?m)^lockstep: 4 of 4 flows completed in \S+ simulated "
                                        r"on 10 endpoints, 3 switches \(flow level\)$")
        self.assertRegex(result.stdout, r"(?m)^lockstep: rate recomputations [1-9]\d*: wall "
                                        r"median \S+ us")
        self.assertNotIn("pause frames", result.stdout)
        self.assertRegex(la.meta(out)["scenario"], r"(?m)^  model: flow$")
        self.assertEqual(len(la.load_table(out, "flows")), 4)


    def test_a_job_and_background_traffic_share_one_fabric(self):
        out = self.dir / "job_traffic.h5"
        result = lockstep("run", JOB_WITH_TRAFFIC, "-o", out)
        self.assert_exit(result, 0)
        self.assertRegex(result.stdout, r"(?m)^lockstep: 3 of 3 steps, step time \S+, MFU ")
        self.assertIn("lockstep: 4 of 4 flows completed", result.stdout)
        meta = la.meta(out)
        self.assertEqual(meta["kind"], "job with traffic")
        steps = la.load_table(out, "steps")
        flows = la.load_table(out, "flows")
        # GPU 5 runs at 92% of its clock: every step waits for it.
        self.assertEqual(list(steps["slowest_rank"]), [5] * 3)
        # The 8 GB transfers share the NICs of GPUs 0-3 with the gradient collectives of the first
        # two steps; the third, after them, is faster than either.
        durations = list(steps["end_ps"] - steps["start_ps"])
        self.assertLess(flows["acknowledged_ps"].max(), steps["end_ps"][2])
        self.assertGreater(flows["acknowledged_ps"].max(), steps["end_ps"][1] - durations[1] // 2)
        self.assertGreater(min(durations[0], durations[1]), durations[2])
        self.assertIn("flows", la.tables(out))

    def test_link_events_change_a_run_at_either_level(self):
        # leaf0's uplink carries all four flows; at 10 Gb/s from the start, 8 MB take over 6.4 ms.
        slow = ["--set", "network.link_events=[{at: 0s, a: leaf0, b: spine0, rate: 10Gbps}]"]
        for model in ("flow", "packet"):
            out = self.dir / f"slow_{model}.h5"
            result = lockstep("run", VICTIM, "-o", out, "--set", f"network.model={model}", *slow)
            self.assert_exit(result, 0)
            self.assertIn("lockstep: link events applied 1", result.stdout.splitlines())
            self.assertGreater(int(la.load_table(out, "flows")["fct_ps"].max()), 6_400_000_000)
        bad = lockstep("run", VICTIM, "-o", self.dir / "bad.h5", "--set",
                       "network.link_events=[{at: 0s, a: leaf0, b: spine0, down: true, up: true}]")
        self.assert_exit(bad, 2)
        self.assertIn("network.link_events[0]: give one of `rate`", bad.stderr)
        self.assertFalse((self.dir / "bad.h5").exists())


def wait_for_the_clock_to_tick():
    """HDF5 timestamps have one-second resolution: let the clock tick so that any would differ."""
    started = int(time.time())
    while int(time.time()) == started:
        time.sleep(0.05)


class Determinism(CliTestCase):
    def test_same_scenario_and_seed_give_byte_identical_files(self):
        first, second = self.dir / "first.h5", self.dir / "second.h5"
        self.assert_exit(lockstep("run", DEFAULT_SCENARIO, "-o", first, "--seed", "7", *SMALL), 0)
        wait_for_the_clock_to_tick()
        self.assert_exit(lockstep("run", DEFAULT_SCENARIO, "-o", second, "--seed", "7", *SMALL), 0)
        self.assertTrue(filecmp.cmp(first, second, shallow=False), "files differ")

    def test_same_fabric_scenario_and_seed_give_byte_identical_files(self):
        first, second = self.dir / "first.h5", self.dir / "second.h5"
        self.assert_exit(lockstep("run", VICTIM, "-o", first, "--seed", "7"), 0)
        wait_for_the_clock_to_tick()
        self.assert_exit(lockstep("run", VICTIM, "-o", second, "--seed", "7"), 0)
        self.assertGreater(len(la.load_table(first, "port_samples")), 0)
        self.assertTrue(filecmp.cmp(first, second, shallow=False), "files differ")

    def test_same_flow_level_scenario_and_seed_give_byte_identical_files(self):
        first, second = self.dir / "first.h5", self.dir / "second.h5"
        flow_level = ["--set", "network.model=flow", "--seed", "7"]
        self.assert_exit(lockstep("run", VICTIM, "-o", first, *flow_level), 0)
        wait_for_the_clock_to_tick()
        self.assert_exit(lockstep("run", VICTIM, "-o", second, *flow_level), 0)
        self.assertGreater(len(la.load_table(first, "port_samples")), 0)
        self.assertTrue(filecmp.cmp(first, second, shallow=False), "files differ")

    def test_a_different_seed_changes_a_fabric_run(self):
        # ECN marks are drawn at random (RED), so the seed shows in the marking counts.
        one, two = self.dir / "seed1.h5", self.dir / "seed2.h5"
        self.assert_exit(lockstep("run", VICTIM, "-o", one, "--seed", "1"), 0)
        self.assert_exit(lockstep("run", VICTIM, "-o", two, "--seed", "2"), 0)
        marks_one = la.load_table(one, "port_totals")["ecn_marked"]
        marks_two = la.load_table(two, "port_totals")["ecn_marked"]
        self.assertGreater(int(marks_one.sum()), 0)
        self.assertNotEqual(list(marks_one), list(marks_two), "seed had no effect on ECN marking")


class Hardening(CliTestCase):
    """Reproducers of the defects the fuzzing session found: each ends with its exit code and
    message, and leaves no file behind."""

    def test_a_full_disk_is_an_io_failure_naming_the_file_and_leaves_nothing(self):
        # A file size limit fails the writes as a full disk does (EFBIG rather than ENOSPC).
        def small_files():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (32768, 32768))
        out = self.dir / "full.h5"
        result = subprocess.run([BIN, "run", str(SOURCE / "scenarios" / "fabric" / "incast.yaml"),
                                 "-o", str(out)], capture_output=True, text=True, timeout=60,
                                preexec_fn=small_files)
        self.assert_exit(result, 1)
        self.assertEqual(result.stderr.strip(),
                         f"lockstep: cannot write '{out}': File too large; nothing was written")
        self.assertEqual(list(self.dir.iterdir()), [])

    def test_heavy_inputs_are_refused_at_validation_with_what_they_would_need(self):
        # A k=64 fat tree at packet level: 393,216 ports, about 0.5 GB before the first event.
        fabric = self.write_scenario(
            "network:\n  model: packet\n  topology: {kind: fat_tree, link_rate: 100Gbps, "
            "fat_tree: {k: 64}}\ntraffic:\n  flows: [{source: 0, destination: 1, size: 1KB}]\n")
        fits = lockstep("validate", fabric)
        self.assert_exit(fits, 0)
        tight = lockstep("validate", fabric, "--set", "simulation.memory_limit=200MB")
        self.assert_exit(tight, 2)
        self.assertIn(f"{fabric}:2:3: network: its 393216 ports need about 0.499 GB at packet "
                      "level, more than the 0.2 GB of simulation.memory_limit: try network.model: "
                      "flow", tight.stderr)
        flow = lockstep("validate", fabric, "--set", "simulation.memory_limit=200MB",
                        "--set", "network.model=flow")
        self.assert_exit(flow, 0)
        # The traffic's flows count against the same limit.
        flows = lockstep("validate", fabric, "--set", "simulation.memory_limit=1MB",
                         "--set", "network.model=flow", "--set",
                         "traffic={random_arrivals: {flows: 100000, mean_interval: 1us, mean_size: 1MB}}")
        self.assert_exit(flows, 2)
        self.assertIn("1e+05 flows would need about 0.0256 GB, more than the 0.001 GB of memory "
                      "allowed (this machine's, or simulation.memory_limit)", flows.stderr)
        # The fuzzer's find: a model shape the kernels cannot split used to escape validation
        # as an exception (exit 1, no key).
        shape = lockstep("validate", DEFAULT_SCENARIO, "--set", "job.model.hidden=8191")
        self.assert_exit(shape, 2)
        self.assertIn("--set job.model.hidden=8191: job.model.hidden: 64 attention heads do not "
                      "divide the hidden size 8191", shape.stderr)
        # A sample every picosecond would write a row per busy port for every one of them.
        sampled = lockstep("validate", VICTIM, "--set", "network.sample_period=1ps")
        self.assert_exit(sampled, 2)
        self.assertIn("network.sample_period: must be at least 100ns", sampled.stderr)

    def test_a_run_past_the_clock_is_bad_input_not_a_broken_invariant(self):
        # At 1 b/s the first collective of the worked example takes millennia: the clock
        # overflows, which used to wrap to the past and end as "event scheduled in the past".
        out = self.dir / "slow.h5"
        result = lockstep("run", *SMALL, "--set", "network.topology.link_rate=1bps", "-o", out)
        self.assert_exit(result, 2)
        self.assertIn("the run would pass the longest simulated time, about 106 days",
                      result.stderr)
        self.assert_nothing_written(out)

    def test_an_output_that_is_not_a_regular_file_is_refused_and_left_as_it_is(self):
        pipe = self.dir / "pipe.h5"
        os.mkfifo(pipe)
        result = lockstep("run", "-o", pipe, *SMALL)
        self.assert_exit(result, 2)
        self.assertIn(f"cannot write '{pipe}': it is not a regular file", result.stderr)
        self.assertTrue(stat.S_ISFIFO(os.stat(pipe).st_mode))
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["pipe.h5"])

    def test_a_users_file_named_like_the_partial_output_is_never_touched(self):
        out = self.dir / "run.h5"
        users = self.dir / "run.h5.partial"
        users.write_text("mine")
        result = lockstep("run", "-o", out, *SMALL)
        self.assert_exit(result, 0)
        self.assertEqual(users.read_text(), "mine")
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["run.h5", "run.h5.partial"])

    def test_a_run_that_can_never_finish_ends_stalled_even_while_sampling(self):
        # Sampling every 10 us once kept this run going forever; at packet level a cable at 0 b/s
        # is refused, since the senders' retransmissions would run on without end.
        stuck = ["--set", "network.link_events=[{at: 0s, a: leaf0, b: spine0, rate: 0bps}]"]
        out = self.dir / "stuck.h5"
        result = lockstep("run", VICTIM, "-o", out, "--set", "network.model=flow", "--set",
                          "network.sample_period=10us", *stuck)
        self.assert_exit(result, 0)
        self.assertIn("lockstep: warning: the network went idle with 4 flows unfinished",
                      result.stdout.splitlines())
        self.assertEqual(la.meta(out)["outcome"], "stalled")
        refused = lockstep("run", VICTIM, "-o", self.dir / "refused.h5", *stuck)
        self.assert_exit(refused, 2)
        self.assertIn("network.link_events[0].rate: 0bps at packet level", refused.stderr)
        self.assertFalse((self.dir / "refused.h5").exists())

    def test_a_value_with_128_decimal_places_is_refused_not_a_crash(self):
        until = "0." + "0" * 128 + "s"
        result = lockstep("run", "--until", until, "-o", self.dir / "x.h5")
        self.assert_exit(result, 2)
        self.assertIn(f"--until {until}: simulation.until: '{until}' has too many decimal places "
                      "(at most 30)", result.stderr)
        self.assertFalse((self.dir / "x.h5").exists())

    def test_running_out_of_memory_has_its_own_exit_code_and_message(self):
        # 50 million flows fit this machine's memory, but not a 2 GB address-space limit: the
        # expansion runs out of memory. AddressSanitizer reserves terabytes of address
        # space for its shadow memory, so a sanitized build cannot start under such a limit.
        if os.environ.get("LOCKSTEP_SANITIZED") == "1":
            self.skipTest("a sanitized build cannot run under an address-space limit")
        def two_gigabytes():
            resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        result = subprocess.run([BIN, "validate", str(SOURCE / "scenarios" / "fabric" /
                                                      "permutation.yaml"),
                                 "--set", "traffic={random_arrivals: {flows: 50000000, "
                                 "mean_interval: 1us, mean_size: 1KB}}"],
                                capture_output=True, text=True, timeout=60,
                                preexec_fn=two_gigabytes)
        self.assert_exit(result, 4)
        self.assertIn("lockstep: out of memory", result.stderr)

    def test_nccl_tests_on_servers_names_its_file_by_node_count(self):
        for nodes in ("1", "2"):
            result = lockstep("nccl-tests", "all_reduce", "--nodes", nodes, "-b", "1M", "-e", "1M",
                              cwd=self.dir)
            self.assert_exit(result, 0)
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()),
                         ["dgx-h100-1nodes-all_reduce.h5", "dgx-h100-2nodes-all_reduce.h5"])

    def test_generators_beyond_the_fabric_or_the_memory_get_one_message_each(self):
        for traffic, message in [
                ("{rings: {rings: 1, ring_size: 200, chunk: 1KB}}",
                 "traffic.rings: 1 rings of 200 endpoints, but the network has 128 endpoints"),
                ("{all_to_all: {size: 1KB, hosts: 100000}}",
                 "traffic.all_to_all.hosts: 100000 hosts, but the network has 128 endpoints"),
                ("{random_arrivals: {flows: 1000000000000, mean_interval: 1us, mean_size: 1KB}}",
                 "traffic.random_arrivals.flows: 1e+12 flows would need about 2.56e+05 GB")]:
            result = lockstep("validate", SOURCE / "scenarios" / "fabric" / "permutation.yaml",
                              "--set", f"traffic={traffic}")
            self.assert_exit(result, 2)
            self.assertIn(message, result.stderr)
            self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)

    def test_newcomer_mistakes_get_messages_that_name_them(self):
        directory = lockstep("run", self.dir)
        self.assert_exit(directory, 2)
        self.assertIn(f"{self.dir}: is a directory, not a scenario file", directory.stderr)
        device = lockstep("validate", "/dev/zero")
        self.assert_exit(device, 2)
        self.assertIn("/dev/zero: is not a regular file", device.stderr)
        tabbed = self.dir / "tab.yaml"
        tabbed.write_text("simulation:\n\tseed: 1\n")
        tab = lockstep("validate", tabbed)
        self.assert_exit(tab, 2)
        self.assertIn(f"{tabbed}:2:6: a tab indents this line; YAML indents with spaces only",
                      tab.stderr)
        unknown = lockstep("validate", VICTIM, "--set", "nonexistent.key=5")
        self.assert_exit(unknown, 2)
        self.assertIn("--set nonexistent.key=5: nonexistent: unknown key", unknown.stderr)
        size = lockstep("nccl-tests", "all_reduce", "--nodes", "1", "-b", "1T")
        self.assert_exit(size, 2)
        self.assertIn("-b 1T: not a size (bytes with K, M or G", size.stderr)
        until = lockstep("nccl-tests", "all_reduce", "--nodes", "1", "--until", "1s")
        self.assert_exit(until, 2)
        self.assertIn("--until: nccl-tests runs every size to its end", until.stderr)
        # The generated fabric's limit, named as the option that reached it, not as a place in a
        # file the user never saw.
        huge = lockstep("nccl-tests", "all_reduce", "--nodes", "100000")
        self.assert_exit(huge, 2)
        self.assertEqual(huge.stderr.strip(),
                         "lockstep nccl-tests: --nodes 100000: too many servers for one "
                         "rail-optimized fabric: each rail switch would need 200000 ports (one per "
                         "server and as many uplinks), more than 65535")
        wide = lockstep("nccl-tests", "all_reduce", "--nodes", "1", "--gpus-per-node", "1000")
        self.assert_exit(wide, 2)
        self.assertIn("--gpus-per-node must be from 1 to 576", wide.stderr)
        # -q is taken (it silences the progress line a terminal would show).
        quiet = lockstep("nccl-tests", "all_reduce", "--nodes", "1", "-b", "1M", "-e", "1M", "-q",
                         "-o", self.dir / "quiet.h5")
        self.assert_exit(quiet, 0)
        self.assertEqual(quiet.stderr, "")

    def test_a_key_given_twice_is_refused_at_the_repeat(self):
        scenario = self.dir / "twice.yaml"
        scenario.write_text("job:\n  steps: 8\n  micro_batch: 2\n  steps: 16\n")
        result = lockstep("validate", scenario)
        self.assert_exit(result, 2)
        self.assertIn(f"{scenario}:4:3: job.steps: key given twice (first at line 2, column 3)",
                      result.stderr)


class BadInput(CliTestCase):
    def test_a_mistyped_key_is_reported_at_its_line_and_column_with_a_suggestion(self):
        # Two swapped letters, the commonest slip, must still find the intended key.
        scenario = self.write_scenario("job:\n  stpes: 8\n")
        out = self.dir / "out.h5"
        result = lockstep("run", scenario, "-o", out)
        self.assert_exit(result, 2)
        self.assertIn(f"{scenario}:2:3: job.stpes: unknown key (did you mean 'steps'?)",
                      result.stderr.splitlines())
        self.assert_nothing_written(out)

    def test_an_unknown_key_far_from_any_lists_the_valid_keys(self):
        scenario = self.write_scenario("job:\n  flavour: 8\n")
        result = lockstep("validate", scenario)
        self.assert_exit(result, 2)
        line = f"{scenario}:2:3: job.flavour: unknown key (valid keys: "
        self.assertTrue(any(l.startswith(line) and "steps" in l for l in result.stderr.splitlines()),
                        result.stderr)

    def test_a_bare_number_where_a_duration_is_needed_is_reported_at_the_value(self):
        scenario = self.write_scenario("job:\n  workspace: 400\n")
        out = self.dir / "out.h5"
        result = lockstep("run", scenario, "-o", out)
        self.assert_exit(result, 2)
        self.assertIn(f"{scenario}:2:14: job.workspace: '400' needs a unit "
                      "(e.g. 4KiB, 5KB, 1.5GB)", result.stderr.splitlines())
        self.assert_nothing_written(out)

    def test_every_problem_in_a_scenario_is_reported_in_one_run(self):
        scenario = self.write_scenario("job:\n  rnks: 8\n  setps: 3\n  workspace: 400\n")
        out = self.dir / "out.h5"
        result = lockstep("run", scenario, "-o", out)
        self.assert_exit(result, 2)
        located = [l for l in result.stderr.splitlines() if l.startswith(f"{scenario}:")]
        self.assertEqual([l.split(": ")[0] for l in located],
                         [f"{scenario}:2:3", f"{scenario}:3:3", f"{scenario}:4:14"], result.stderr)
        self.assertIn("3 problem(s)", result.stderr)
        self.assert_nothing_written(out)

    def test_validate_reports_the_same_problems_without_running(self):
        scenario = self.write_scenario("job:\n  rnks: 8\n  setps: 3\n")
        result = lockstep("validate", scenario, cwd=self.dir)
        self.assert_exit(result, 2)
        self.assertEqual(len([l for l in result.stderr.splitlines()
                              if l.startswith(f"{scenario}:")]), 2, result.stderr)
        self.assertEqual(list(self.dir.glob("*.h5*")), [])

    def test_a_bad_set_value_is_reported_against_the_set_argument(self):
        out = self.dir / "out.h5"
        result = lockstep("run", "-o", out, "--set", "job.steps=abc")
        self.assert_exit(result, 2)
        self.assertTrue(any(l.startswith("--set job.steps=abc: job.steps:")
                            for l in result.stderr.splitlines()), result.stderr)
        self.assert_nothing_written(out)

    def test_an_output_directory_that_does_not_exist_is_refused_before_running(self):
        missing = self.dir / "no" / "such"
        out = missing / "out.h5"
        result = lockstep("run", "-o", out, *SMALL)
        self.assert_exit(result, 2)
        self.assertIn(str(missing), result.stderr)
        self.assertIn("does not exist", result.stderr)
        self.assertFalse((self.dir / "no").exists())
        self.assert_nothing_written(out)

    def test_an_output_path_that_is_a_directory_is_refused_before_running(self):
        taken = self.dir / "taken.h5"
        taken.mkdir()
        result = lockstep("run", "-o", taken, *SMALL)
        self.assert_exit(result, 2)
        self.assertIn(f"cannot write '{taken}': it is a directory", result.stderr)
        self.assertEqual(list(taken.iterdir()), [])
        self.assertEqual(list(self.dir.glob("taken.h5.partial*")), [])

    def test_a_shorthand_option_is_named_as_typed_in_its_error(self):
        result = lockstep("run", "-o", self.dir / "x.h5", "--seed", "-1")
        self.assert_exit(result, 2)
        self.assertIn("--seed -1: simulation.seed: '-1' is negative", result.stderr)

    def test_a_scenario_file_that_does_not_exist_exits_2(self):
        result = lockstep("run", self.dir / "missing.yaml", cwd=self.dir)
        self.assert_exit(result, 2)
        self.assertIn("missing.yaml", result.stderr)
        self.assertEqual(list(self.dir.iterdir()), [])


class NcclTests(CliTestCase):
    """`lockstep nccl-tests`: nccl-tests' table on stdout, for scripts that split it on spaces."""

    def test_prints_a_row_per_size_with_nccl_tests_columns_and_closing_lines(self):
        out = self.dir / "sweep.h5"
        result = lockstep("nccl-tests", "all_reduce", COLLECTIVES, "-b", "8", "-e", "8M", "-f", "8",
                          "-o", out)
        self.assert_exit(result, 0)
        lines = result.stdout.splitlines()
        comments = [line for line in lines if line.startswith("#")]
        rows = [line.split() for line in lines if not line.startswith("#")]
        self.assertEqual([int(r[0]) for r in rows], [8, 64, 512, 4096, 32768, 262144, 2097152])
        for r in rows:
            self.assertEqual(len(r), 13)
            self.assertEqual(r[1:5], [str(int(r[0]) // 4), "float", "sum", "-1"])
            self.assertEqual(r[5:9], r[9:13])  # in-place as out-of-place
            # Both printed with two decimals: 0.005 x 1.875 + 0.005 apart at most.
            self.assertAlmostEqual(float(r[7]), float(r[6]) * 2 * 15 / 16, delta=0.0144)
        # At 2 MiB the bus bandwidth nears the links' goodput (11.1 GB/s), less NCCL's latencies.
        self.assertGreater(float(rows[-1][7]), 6.0)
        self.assertLess(float(rows[-1][7]), 11.1)
        self.assertIn("#       size         count      type   redop    root     time   algbw   busbw "
                      "#wrong     time   algbw   busbw #wrong", comments)
        self.assertIn("# Out of bounds values : 0 OK", comments)
        average = [c for c in comments if c.startswith("# Avg bus bandwidth    : ")]
        self.assertEqual(len(average), 1)
        self.assertAlmostEqual(float(average[0].split(":")[1]),
                               sum(float(r[7]) for r in rows) / len(rows), delta=0.01)
        self.assertTrue(out.is_file())

    def test_the_tree_runs_on_the_channels_nccl_runs_the_size_on(self):
        # Tree/LL takes a channel per 4 KiB (512 threads x 8 B, NCCL's thread threshold), up to the
        # communicator's 16 across two DGX H100: 1 at 4 KiB, 4 at 16 KiB, 16 at 64 KiB and on.
        out = self.dir / "tree_channels.h5"
        result = lockstep("nccl-tests", "all_reduce", "--nodes", "2", "--algo", "Tree", "--proto",
                          "LL", "-b", "4K", "-e", "256K", "-f", "4", "-o", out)
        self.assert_exit(result, 0)
        table = la.load_table(out, "nccl_tests")
        self.assertEqual(list(table["channels"]), [1, 4, 16, 16])
        self.assertEqual(set(table["algorithm"]), {"Tree"})

    def test_one_thread_launching_on_eight_gpus_sets_a_floor_under_every_iteration(self):
        # nccl-tests -g 8: one thread launches each iteration on the 8 GPUs in turn, 4.2 us each
        # and 45 ns more for each channel beyond the first, and issues the next while the GPUs
        # run: no iteration is shorter than that, 33.6 us at one channel, and those whose GPUs
        # take longer keep their own time (time_ps is the printed time, collective_ps the GPUs').
        out = self.dir / "floor.h5"
        result = lockstep("nccl-tests", "all_reduce", "--nodes", "1", "-g", "8", "-b", "8", "-e",
                          "64M", "-f", "8", "-o", out)
        self.assert_exit(result, 0)
        self.assertIn("8 GPU(s) per thread at 4.2us a launch", result.stdout.splitlines()[0])
        table = la.load_table(out, "nccl_tests")
        floor = 8 * (4_200_000 + 45_000 * (table["channels"] - 1))
        self.assertTrue((table["time_ps"] == table["collective_ps"].where(
            table["collective_ps"] > floor, floor)).all())
        # Ring/LL runs 8 B on one channel and 256 KiB on 8 (32 KiB a channel, NCCL's threshold).
        self.assertEqual(list(table["channels"][table["bytes"] <= 256 << 10]), [1, 1, 1, 1, 1, 8])
        self.assertEqual(int(table["time_ps"].iloc[0]), 33_600_000)
        self.assertEqual(int(table["time_ps"].iloc[5]), 8 * (4_200_000 + 7 * 45_000))
        self.assertLess(int(table["collective_ps"].iloc[0]), int(floor.iloc[0]))
        self.assertGreater(int(table["collective_ps"].iloc[-1]), int(floor.iloc[-1]))
        rows = [line.split() for line in result.stdout.splitlines() if not line.startswith("#")]
        self.assertEqual(rows[0][5], "33.60")
        # CUDA graphs (nccl-tests -G) launch a whole loop at once: no floor.
        graphs = lockstep("nccl-tests", "all_reduce", "--nodes", "1", "-g", "8",
                          "--launch-overhead", "0us", "-b", "8", "-e", "8", "-o", out)
        self.assert_exit(graphs, 0)
        self.assertEqual(list(la.load_table(out, "nccl_tests")["time_ps"]),
                         [int(table["collective_ps"].iloc[0])])
        for args, message in [(["-g", "0"], "-g must be at least 1"),
                              (["-g", "9"], "-g 9: more GPUs per thread than the 8 ranks"),
                              (["--launch-overhead", "fast"], "--launch-overhead fast"),
                              (["--launch-overhead", "-1us"], "--launch-overhead -1us")]:
            bad = lockstep("nccl-tests", "all_reduce", "--nodes", "1", *args, "-o",
                           self.dir / "bad.h5")
            self.assert_exit(bad, 2)
            self.assertIn(message, bad.stderr)
            self.assertFalse((self.dir / "bad.h5").exists())

    def test_broadcast_rows_name_root_zero_and_count_busbw_as_algbw(self):
        result = lockstep("nccl-tests", "broadcast", COLLECTIVES, "-b", "4M", "-e", "4M",
                          "-o", self.dir / "bcast.h5")
        self.assert_exit(result, 0)
        rows = [line.split() for line in result.stdout.splitlines() if not line.startswith("#")]
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0][2:5], ["float", "none", "0"])
        self.assertEqual(rows[0][6], rows[0][7])

    def test_bad_arguments_are_refused_before_anything_runs(self):
        for args, message in [(["allreduce", COLLECTIVES], "unknown collective 'allreduce'"),
                              (["all_reduce", COLLECTIVES, "-b", "8M", "-e", "1M"], "-e 1M"),
                              (["all_reduce", COLLECTIVES, "-f", "1"], "-f 1"),
                              (["all_reduce"], "give a SCENARIO to run on, or --nodes N"),
]:
            result = lockstep("nccl-tests", *args, "-o", self.dir / "bad.h5")
            self.assert_exit(result, 2)
            self.assertIn(message, result.stderr)
            self.assertFalse((self.dir / "bad.h5").exists())

    def test_runs_on_gpu_servers_of_a_preset_with_nvlink_inside_and_nics_between(self):
        out = self.dir / "servers.h5"
        result = lockstep("nccl-tests", "all_reduce", "--nodes", "2", "--preset", "dgx-h100",
                          "-b", "1G", "-e", "1G", "-o", out)
        self.assert_exit(result, 0)
        self.assertIn("# lockstep nccl-tests all_reduce: 16 ranks on 2 x dgx-h100 (8 GPUs each), "
                      "fabric at flow level over RDMA, NCCL's channels for each size, "
                      "algorithm auto, protocol auto, chosen by NCCL's cost model, 1 GPU(s) per "
                      "thread at 4.2us a launch", result.stdout.splitlines())
        rows = [line.split() for line in result.stdout.splitlines() if not line.startswith("#")]
        self.assertEqual(len(rows), 1)
        # NVLS-Tree sends an eighth of the data through each NIC each way, so its busbw passes
        # the NICs' 8 x 50 GB/s, as NCCL's does (469 GB/s, NVIDIA/nccl-tests issue 309).
        self.assertEqual(list(la.load_table(out, "nccl_tests")["algorithm"]), ["NVLSTree"])
        self.assertGreater(float(rows[0][7]), 8 * 50)
        # Eight 400 Gb/s NICs per node bound the ring: NCCL reaches 8 x 47 GB/s (reference.md).
        ring = lockstep("nccl-tests", "all_reduce", "--nodes", "2", "--algo", "Ring", "-b", "1G",
                        "-e", "1G", "-o", out)
        self.assert_exit(ring, 0)
        rows = [line.split() for line in ring.stdout.splitlines() if not line.startswith("#")]
        self.assertAlmostEqual(float(rows[0][7]), 8 * 47, delta=8 * 47 * 0.10)
        self.assertRegex(la.meta(out)["scenario"], r"(?m)^    kind: rail_optimized$")
        self.assertEqual(la.meta(out)["scenario_file"], "--nodes 2 --preset dgx-h100")

    def test_nccl_own_choice_is_the_default_and_the_fastest_an_option(self):
        # Across four H100 nodes NCCL's cost model picks NVLS-Tree at 4 MiB (nccl-tests#309's
        # maintainer: NVLSTree multi-node), where the tree with LL128 is faster here; --choice
        # fastest times every pair and keeps the tree.
        out = self.dir / "choice.h5"
        sweep = ["all_reduce", "--nodes", "4", "-b", "4M", "-e", "4M", "-o", out]
        nccl = lockstep("nccl-tests", *sweep)
        self.assert_exit(nccl, 0)
        self.assertEqual(list(la.load_table(out, "nccl_tests")["algorithm"]), ["NVLSTree"])
        fastest = lockstep("nccl-tests", *sweep, "--choice", "fastest")
        self.assert_exit(fastest, 0)
        self.assertIn("chosen fastest", fastest.stdout)
        self.assertEqual(list(la.load_table(out, "nccl_tests")["algorithm"]), ["Tree"])
        wrong = lockstep("nccl-tests", *sweep, "--choice", "best")
        self.assert_exit(wrong, 2)
        self.assertIn("--choice best: nccl or fastest", wrong.stderr)

    def test_server_flags_are_scenario_keys_and_a_scenario_file_runs_the_same_sweep(self):
        # The flags set the scenario's `servers` and `hosts` keys: the shipped file with the same
        # keys gives the same tables, at either fabric level, over RDMA or sockets.
        for flags, sets in [(["--nic-on-other-socket", "9", "-e", "64M"], ["-e", "64M"]),
                            (["--nic-on-other-socket", "9", "--model", "packet", "-e", "1M"],
                             ["--set", "network.model=packet", "-e", "1M"]),
                            (["--transport", "socket", "--socket-interface", "25Gbps", "-e", "64M"],
                             ["--set", "hosts.nics_on_other_socket=[]", "--set",
                              "hosts.transport=socket", "--set", "hosts.socket_interface=25Gbps",
                              "-e", "64M"])]:
            sweep = ["-b", "1M", "-f", "8"]
            by_flags, by_file = self.dir / "flags.h5", self.dir / "file.h5"
            result = lockstep("nccl-tests", "all_reduce", "--nodes", "2", *sweep, *flags,
                              "-o", by_flags)
            self.assert_exit(result, 0)
            result = lockstep("nccl-tests", "all_reduce", SERVERS, *sweep, *sets, "-o", by_file)
            self.assert_exit(result, 0)
            for table in ("nccl_tests", "nccl_tests_ranks"):
                self.assertTrue(la.load_table(by_flags, table).equals(la.load_table(by_file, table)),
                                f"{table} differs for {flags}")
            self.assertIn("hosts:", la.meta(by_flags)["scenario"])

    def test_servers_and_a_scenario_exclude_each_other_and_presets_are_checked(self):
        for args, message in [(["all_reduce", COLLECTIVES, "--nodes", "2"], "not both"),
                              (["all_reduce", "--nodes", "2", "--preset", "dgx-b300"],
                               "--preset dgx-b300: not a preset"),
                              (["all_reduce", "--nodes", "0"], "--nodes must be at least 1")]:
            result = lockstep("nccl-tests", *args, "-o", self.dir / "bad.h5")
            self.assert_exit(result, 2)
            self.assertIn(message, result.stderr)
            self.assertFalse((self.dir / "bad.h5").exists())

    def test_nccl_environment_lists_choose_protocols_as_nccl_reads_them(self):
        out = self.dir / "proto.h5"
        result = subprocess.run([BIN, "nccl-tests", "all_reduce", str(COLLECTIVES), "-b", "1M",
                                 "-e", "1M", "-o", str(out)], capture_output=True, text=True,
                                env={**os.environ, "NCCL_PROTO": "^LL,LL128", "NCCL_ALGO": "ring"})
        self.assert_exit(result, 0)
        self.assertIn("algorithm ring, protocol ^LL,LL128", result.stdout)
        chosen = la.load_table(out, "nccl_tests")
        self.assertEqual(list(chosen["protocol"]), ["Simple"])
        self.assertEqual(list(chosen["algorithm"]), ["Ring"])

    def test_collectives_that_cannot_run_are_refused(self):
        # Three nodes without spines: a ring's hop from the last node back to the first changes
        # rails, and rails meet only at spines.
        no_spines = ["all_reduce", "--nodes", "3", "--algo", "Ring", "--set",
                     "network.topology.rail_optimized.spines=0", "--set",
                     "network.topology.rail_optimized.uplinks_per_rail_switch=0"]
        for args, message in [(no_spines, "have no path between them over the fabric"),
                              (["all_gather", COLLECTIVES, "--algo", "Tree"], "run all_reduce only"),
                              (["all_reduce", COLLECTIVES, "--channels", "65"], "at most 64"),
                              (["all_reduce", "--nodes", "2", "--nic-on-other-socket", "16"],
                               "hosts.nics_on_other_socket[0]: no rank 16 (ranks 0 to 15)"),
                              (["all_reduce", "--nodes", "2", "--socket-interface", "25Gbps"],
                               "hosts.socket_interface: applies to sockets"),
                              (["all_reduce", "--nodes", "2", "--transport", "socket",
                                "--socket-interface", "fast"], "hosts.socket_interface"),
                              (["all_reduce", "--nodes", "2", "--transport", "tcp"],
                               "'tcp' is not one of rdma, socket"),
                              (["all_reduce", SERVERS, "--set", "servers.gpus=3"],
                               "servers.gpus: 3 GPUs per server do not divide the 16 endpoints"),
                              (["all_reduce", "--nodes", "2", "--ranks", "0-99999999"],
                               "--ranks 0-99999999: a list like 0-3,8-11"),
                              (["all_reduce", "--nodes", "2", "--ranks", "0-2,8"],
                               "the same number of GPUs on each of its nodes"),
                              (["all_reduce", "--nodes", "2", "--ranks", "3-1"],
                               "--ranks 3-1: a list like 0-3,8-11"),
                              (["all_reduce", "--nodes", "2", "--ranks", "0-3,16"],
                               "the cluster has ranks 0 to 15"),
                              (["all_reduce", "--nodes", "2", "--algo", "NVLS"],
                               "no allowed algorithm and protocol run all_reduce here"),
                              (["all_reduce", VICTIM, "--set", "network.model=flow", "--set",
                                "network.link_events=[{at: 0s, a: leaf0, b: spine0, down: true}]"],
                               "link_events are not played")]:
            result = lockstep("nccl-tests", *args, "-o", self.dir / "bad.h5")
            self.assert_exit(result, 2)
            self.assertIn(message, result.stderr)
            self.assertFalse((self.dir / "bad.h5").exists())

    def test_a_tp_group_over_two_nodes_runs_as_a_communicator_and_names_its_slowest_rank(self):
        out = self.dir / "tp.h5"
        # The ring, whose every step waits for the slow NIC (NVLS-Tree, the default here, sends
        # only a quarter of the data through each NIC, and hides it among its concurrent streams).
        result = lockstep("nccl-tests", "all_reduce", "--nodes", "3", "--ranks", "8-11,0-3,16-19",
                          "--nic-on-other-socket", "10", "--algo", "Ring", "-b", "256M", "-e",
                          "256M", "-o", out)
        self.assert_exit(result, 0)
        self.assertIn("# lockstep nccl-tests all_reduce: 12 ranks on 3 x dgx-h100", result.stdout)
        rows = [line.split() for line in result.stdout.splitlines() if not line.startswith("#")]
        self.assertAlmostEqual(float(rows[0][7]) / float(rows[0][6]), 2 * 11 / 12, delta=0.01)
        ranks = la.load_table(out, "nccl_tests_ranks")
        # Node 1 first, as listed, then nodes 0 and 2.
        self.assertEqual(list(ranks["rank"]), [8, 9, 10, 11, 0, 1, 2, 3, 16, 17, 18, 19])
        summary = subprocess.run(["/usr/bin/python3", str(SOURCE / "analysis" / "summarize.py"),
                                  str(out)], capture_output=True, text=True, timeout=60)
        self.assertEqual(summary.returncode, 0, summary.stderr)
        self.assertIn("slowest rank", summary.stdout.splitlines()[1])
        self.assertEqual(summary.stdout.splitlines()[2].split()[-2], "10")

    def test_gpudirect_off_stages_the_communicators_nics_too(self):
        def busbw(*extra):
            result = lockstep("nccl-tests", "all_reduce", "--nodes", "3", "--ranks", "8-11,16-19",
                              "--algo", "Ring", "--proto", "Simple", "-b", "1G", "-e", "1G",
                              *extra, "-o", self.dir / "gdr.h5")
            self.assert_exit(result, 0)
            rows = [line.split() for line in result.stdout.splitlines()
                    if not line.startswith("#")]
            return float(rows[0][7])
        # Every NIC moves data at half its rate each way through host memory; the ring's step
        # latencies, which host memory does not lengthen, are a few percent of the time.
        self.assertAlmostEqual(busbw("--no-gpudirect") / busbw(), 0.5, delta=0.03)

    def test_run_explains_that_a_network_without_traffic_is_for_collectives(self):
        result = lockstep("run", COLLECTIVES, "-o", self.dir / "none.h5")
        self.assert_exit(result, 2)
        self.assertIn("a `network` without `traffic`", result.stderr)
        self.assertIn("nccl-tests", result.stderr)
        self.assertFalse((self.dir / "none.h5").exists())


class Interrupt(CliTestCase):
    def test_sigint_exits_130_and_leaves_no_output(self):
        out = self.dir / "long.h5"
        # A session of its own, so that the cleanup below can end everything it started.
        process = subprocess.Popen([BIN, "run", "--set", "job.steps=5000000", "-o", str(out)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        try:
            # The .partial file appears after the interrupt handler is installed, so once it exists
            # the signal lands in a running simulation rather than in start-up.
            deadline = time.monotonic() + 10
            partial = lambda: list(self.dir.glob("long.h5.partial.*"))
            while not partial() and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            self.assertTrue(partial(), "the run never started writing")
            time.sleep(0.5)
            self.assertIsNone(process.poll(), "the run ended before it was interrupted")
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=5)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate(timeout=5)
        self.assertEqual(process.returncode, 130, stderr)
        self.assertIn("interrupted", stderr)
        self.assert_nothing_written(out)


    def test_a_second_signal_or_sighup_still_leaves_no_output(self):
        for signals in ([signal.SIGTERM, signal.SIGTERM], [signal.SIGHUP]):
            out = self.dir / "twice.h5"
            process = subprocess.Popen([BIN, "run", "--set", "job.steps=5000000", "-o",
                                        str(out)], stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True,
                                       start_new_session=True)
            try:
                deadline = time.monotonic() + 10
                while (not list(self.dir.glob("twice.h5.partial.*")) and process.poll() is None
                       and time.monotonic() < deadline):
                    time.sleep(0.02)
                time.sleep(0.2)
                for s in signals:  # as coreutils' timeout sends them: back to back
                    process.send_signal(s)
                process.communicate(timeout=5)
            finally:
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.communicate(timeout=5)
            self.assertIn(process.returncode, (130, -signals[-1]), signals)
            self.assert_nothing_written(out)


class Commands(CliTestCase):
    def test_every_shipped_scenario_validates(self):
        # scenarios/sweeps/ holds sweep files, which `lockstep sweep` reads (test_sweep.py).
        scenarios = sorted(p for p in (SOURCE / "scenarios").rglob("*.yaml")
                           if p.parent.name != "sweeps")
        self.assertTrue(scenarios, "no scenarios found")
        for scenario in scenarios:
            with self.subTest(scenario=scenario.relative_to(SOURCE)):
                result = lockstep("validate", scenario)
                self.assert_exit(result, 0)

    def test_version_prints_the_program_name_and_version(self):
        result = lockstep("--version")
        self.assert_exit(result, 0)
        self.assertRegex(result.stdout, r"\Alockstep \d+\.\d+\.\d+\S*\n\Z")

    def test_an_unknown_command_exits_2_and_names_it(self):
        result = lockstep("frobnicate")
        self.assert_exit(result, 2)
        self.assertIn("unknown command 'frobnicate'", result.stderr)

    def test_keys_lists_every_key_of_the_default_scenario(self):
        result = lockstep("keys")
        self.assert_exit(result, 0)
        for key in ["simulation.seed", "job.steps", "job.model.preset", "job.parallelism.tensor",
                    "job.placement", "job.slow_gpus[].clock"]:
            self.assertIn(f"`{key}`", result.stdout)


if __name__ == "__main__":
    unittest.main()
