"""`lockstep diagnose` on real runs: it names the cause of every war story from the HDF5 alone, and
follows the fault when the fault moves to another GPU, NIC, cable or server.

Each story runs as written (shrunk where it takes seconds) and with its fault moved; the expected
rank, server, leaf and port are computed here from the moved fault's target and the placement,
never taken from the diagnosis. Faults are never the answer: the diagnosis reads what the run
measured, and a test strips the fault list from the file to show it. Then the command itself: the
`findings` table it writes, `--no-write`, `--json`, and bad input. The ranking (what interrupted
the run, then the incidents by time lost, then the plan's costs by share of the step), the table's
-1/NaN rules, and actions that start from the run's own configuration are checked on every run.

Needs LOCKSTEP_BIN (the program), LOCKSTEP_SOURCE_DIR (the source tree) and analysis/ on PYTHONPATH,
as ctest sets them. LOCKSTEP_SANITIZED=1 (a sanitizer build, several times slower) skips the
packet-level PFC storm runs.
"""

import contextlib
import filecmp
import io
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import h5py
import numpy as np
import pandas as pd
import yaml

import diagnose as diagnose_command
import lockstep_analysis as la
from lockstep_analysis.checks import transfers as transfer_checks
from lockstep_analysis.diagnosis import diagnose
from lockstep_analysis.findings import COLUMNS
from lockstep_analysis.findings_file import write_findings

BIN = os.environ["LOCKSTEP_BIN"]
SOURCE = Path(os.environ["LOCKSTEP_SOURCE_DIR"])
SANITIZED = os.environ.get("LOCKSTEP_SANITIZED") == "1"
STORIES = SOURCE / "scenarios" / "war-stories"
WORKED_EXAMPLE = SOURCE / "scenarios" / "worked-example.yaml"
DIAGNOSE = SOURCE / "analysis" / "diagnose.py"

GPUS_PER_SERVER = 8  # every war story runs on DGX H100 servers
HOSTS_PER_LEAF = 16  # story 6's leaf-spine (leaf_spine: hosts_per_leaf: 16)


def server(gpu):
    return gpu // GPUS_PER_SERVER


# Story 1's scheduler gave GPUs 0-3 of two servers; moved, GPUs 0-3 of servers 1 and 2 of three.
STORY1_PLACEMENT = [0, 1, 2, 3, 8, 9, 10, 11]
STORY1_MOVED_PLACEMENT = [8, 9, 10, 11, 16, 17, 18, 19]
# Story 2's Xid on GPU 13, moved to GPU 22, with the watchdog on so the hang becomes a timeout.
STORY2_MOVED_GPU = 22
# Story 5 takes 17 s as written: 8 layers, 32 samples and 8 steps, the throttled GPU slow from step
# 1 (so the straggler detector drains it after its 3-step window and the job restarts).
STORY5_SMALL = ["--set", "job.model.layers=8", "--set", "job.global_batch=32", "--set",
                "job.steps=8"]
STORY5_MOVED_GPU = 150


def story5_faults(gpu):
    return (f"faults=[{{kind: thermal, gpu: {gpu}, step: 1, clock: 70%}}, "
            f"{{kind: ecc, gpu: {gpu}, step: 1, slowdown: 5%}}]")


# Story 6 takes seconds as written: 3 steps, and the storage-like flows (100 MB each, from 15 ms)
# still running when the storm begins at 20 ms. Moved: NIC 12, under leaf 0, the flows to it.
STORY6_MOVED_NIC = 12


def story6(nic):
    flows = ", ".join(f"{{source: {s}, destination: {nic}, size: 100MB, start: 15ms}}"
                      for s in range(32, 36))
    return ["--set", "job.steps=3", "--set", f"traffic.flows=[{flows}]",
            "--set", f"faults=[{{kind: pfc_storm, nic: {nic}, at: 20ms, duration: 300ms}}]"]


# Story 7's NIC 21 on the wrong socket, moved to NIC 6 with the servers placed in reverse, so that
# rank and GPU numbers differ.
STORY7_MOVED_NIC = 6
STORY7_REVERSED = [gpu for s in reversed(range(4)) for gpu in range(s * 8, s * 8 + 8)]


# Story 8 flaps for 17 s as written: here twice, 1 s down and 1 s up, over 8 steps.
def story8(host, rail):
    return ["--set", "job.steps=8", "--set", "job.record_ops.steps=1", "--set",
            f"faults=[{{kind: link_flap, a: host{host}, b: rail{rail}, at: 1s, down: 1s, up: 1s, "
            "flaps: 2}]"]


STORY8_MOVED = (27, 3)  # host27's cable to its rail switch, rail 3 (NIC 3 of server 3)

# Slow storage on the worked example made small: formula-priced collectives, 8 layers, 4 steps,
# and 16 MB samples so that reading a batch matters.
SMALL_JOB = ["--set", "network.model=analytic", "--set", "job.model.layers=8", "--set",
             "job.global_batch=32", "--set", "job.steps=4", "--set",
             "job.data.bytes_per_sample=16MB"]

# GPUDirect RDMA off on one server of the small worked example, at flow level (every NIC of it
# staged through host memory).
GPUDIRECT_OFF_SERVER = 6

# Pipeline bubbles at 16 micro-batches per replica, formula-priced: 8 stages of 2 layers under 1F1B
# (interleaving possible), and already interleaved in 2 chunks with micro-batches of 2 (it is not).
BUBBLE = ["--set", "network.model=analytic", "--set", "job.model.layers=16", "--set",
          "job.parallelism.pipeline=8", "--set", "job.parallelism.data=4", "--set", "job.steps=2"]
BUBBLE_INTERLEAVED = [*BUBBLE, "--set", "job.global_batch=128", "--set", "job.micro_batch=2",
                      "--set", "job.schedule=interleaved", "--set",
                      "job.parallelism.virtual_stages=2"]

VICTIM = SOURCE / "scenarios" / "fabric" / "victim.yaml"
COLLECTIVES = SOURCE / "scenarios" / "collectives" / "leaf_spine_16.yaml"
VICTIM_INCAST_HOST, VICTIM_HOSTS_PER_LEAF = 5, 5  # hosts 0-2 send to host 5, on leaf 1

RUNS = {
    "story1": (STORIES / "1_tp_across_nodes.yaml", []),
    "story1_moved": (STORIES / "1_tp_across_nodes.yaml",
                     ["--set", "network.topology.rail_optimized.servers=3",
                      "--set", f"job.placement={STORY1_MOVED_PLACEMENT}"]),
    "story1_healthy": (STORIES / "1_tp_across_nodes.yaml", ["--set", "job.placement=packed"]),
    "story2": (STORIES / "2_xid_hang.yaml", []),
    "story2_moved": (STORIES / "2_xid_hang.yaml",
                     ["--set", f"faults=[{{kind: xid, gpu: {STORY2_MOVED_GPU}, at: 1500ms}}]",
                      "--set", "defences.watchdog.enabled=true",
                      "--set", "defences.watchdog.timeout=30s"]),
    "story3": (STORIES / "3_nccl_on_sockets.yaml", []),
    "story3_one_interface": (STORIES / "3_nccl_on_sockets.yaml",
                             ["--set", "faults=[{kind: nccl_socket, rate: 25Gbps}]"]),
    "story3_healthy": (STORIES / "3_nccl_on_sockets.yaml", ["--set", "faults=[]"]),
    "story4": (STORIES / "4_gradient_overlap_off.yaml", []),
    "story4_healthy": (STORIES / "4_gradient_overlap_off.yaml",
                       ["--set", "job.overlap_grad_reduce=true"]),
    "story5": (STORIES / "5_one_slow_gpu.yaml", [*STORY5_SMALL, "--set", story5_faults(77)]),
    "story5_moved": (STORIES / "5_one_slow_gpu.yaml",
                     [*STORY5_SMALL, "--set", story5_faults(STORY5_MOVED_GPU)]),
    "story5_healthy": (STORIES / "5_one_slow_gpu.yaml", [*STORY5_SMALL, "--set", "faults=[]"]),
    "story7": (STORIES / "7_nic_on_wrong_numa.yaml", []),
    "story7_moved": (STORIES / "7_nic_on_wrong_numa.yaml",
                     ["--set", f"job.placement={STORY7_REVERSED}",
                      "--set", f"faults=[{{kind: nic_numa, nic: {STORY7_MOVED_NIC}}}]"]),
    "story7_healthy": (STORIES / "7_nic_on_wrong_numa.yaml", ["--set", "faults=[]"]),
    "story8": (STORIES / "8_link_flapping.yaml", story8(10, 2)),
    "story8_moved": (STORIES / "8_link_flapping.yaml", story8(*STORY8_MOVED)),
    "slow_storage": (WORKED_EXAMPLE,
                     [*SMALL_JOB, "--set", "faults=[{kind: slow_storage, slowdown: 99%}]"]),
    "storage_healthy": (WORKED_EXAMPLE, SMALL_JOB),
    "slow_checkpoints": (WORKED_EXAMPLE,
                         [*SMALL_JOB, "--set", "job.checkpoint.every=2", "--set",
                          "faults=[{kind: slow_storage, slowdown: 90%}]"]),
    "gpudirect_off": (WORKED_EXAMPLE,
                      [*SMALL_JOB, "--set", "network.model=flow", "--set",
                       f"faults=[{{kind: gpudirect_off, node: {GPUDIRECT_OFF_SERVER}}}]"]),
    "bubble": (WORKED_EXAMPLE, [*BUBBLE, "--set", "job.global_batch=64"]),
    "bubble_interleaved": (WORKED_EXAMPLE, BUBBLE_INTERLEAVED),
    "victim": (VICTIM, []),
}
if not SANITIZED:
    RUNS["story6"] = (STORIES / "6_pfc_storm.yaml", story6(24))
    RUNS["story6_moved"] = (STORIES / "6_pfc_storm.yaml", story6(STORY6_MOVED_NIC))

PATHS = {}

# The ranking's tiers, as the findings table documents them (analysis/hdf5_schema.md).
INTERRUPTION, INCIDENT, PLAN, VERDICT = range(4)
INTERRUPTIONS = {"hang", "collective_timeout", "node_drained", "no_spare_nodes", "stalled",
                 "out_of_memory", "restarts"}
PLAN_COSTS = {"tp_across_nodes", "cp_across_nodes", "overlap_off", "dp_not_hidden",
              "pipeline_bubble"}


def tier_of(finding, share_of_step, found):
    if finding in INTERRUPTIONS:
        return INTERRUPTION
    if finding == "checkpoint_stall":  # the cadence's cost, unless the storage misbehaves
        return INCIDENT if share_of_step >= 0.5 or "storage_wait" in found else PLAN
    if finding in PLAN_COSTS:
        return PLAN
    return VERDICT if finding in ("healthy", "no_steps") else INCIDENT


def tiers(rows):
    return [tier_of(finding, share, set(rows["finding"]))
            for finding, share in zip(rows["finding"], rows["share_of_step"])]


def time_not_on_steps(name):
    """The goodput table's restart delays and time lost, in ps."""
    goodput = la.load_table(PATHS[name], "goodput")
    return int(goodput["restarting_ps"].iloc[0] + goodput["lost_ps"].iloc[0])


def run_lockstep(name, scenario, args):
    out = Path(_DIRECTORY.name) / f"{name}.h5"
    result = subprocess.run([BIN, "run", str(scenario), "-o", str(out), "--quiet", *args],
                            capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise AssertionError(f"{name}: lockstep run failed ({result.returncode}): "
                             f"{result.stderr}")
    return out


def setUpModule():
    global _DIRECTORY
    _DIRECTORY = tempfile.TemporaryDirectory()
    # Two at a time: the runs are independent and the machine has two cores.
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(run_lockstep, name, *spec) for name, spec in RUNS.items()}
        PATHS.update({name: future.result() for name, future in futures.items()})


def tearDownModule():
    _DIRECTORY.cleanup()


_DIAGNOSES = {}


def diagnosed(name):
    if name not in _DIAGNOSES:
        _DIAGNOSES[name] = diagnose(PATHS[name])
    return _DIAGNOSES[name]


def cli(*args):
    """The command as `lockstep diagnose` runs it: its own process."""
    env = dict(os.environ, PYTHONPATH=str(SOURCE / "analysis"))
    return subprocess.run(["/usr/bin/python3", str(DIAGNOSE), *map(str, args)],
                          capture_output=True, text=True, timeout=120, env=env)


def command(*args):
    """The command's main() in this process (starting the interpreter and pandas takes longer than
    most diagnoses): a CompletedProcess-like result."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = diagnose_command.main([str(a) for a in args])
        except SystemExit as e:  # argparse, for --help
            code = e.code
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


class DiagnosisTestCase(unittest.TestCase):
    def top(self, name):
        """The first-ranked finding."""
        return diagnosed(name).iloc[0]

    def only(self, name, finding):
        rows = diagnosed(name)
        rows = rows[rows["finding"] == finding]
        self.assertEqual(len(rows), 1, f"{name}: expected one {finding} finding in\n"
                         f"{diagnosed(name)[['finding', 'ranks', 'nodes']]}")
        return rows.iloc[0]

    def assert_names(self, finding, ranks=None, nodes=None, fabric=None):
        for column, expected in (("ranks", ranks), ("nodes", nodes), ("fabric", fabric)):
            if expected is not None:
                self.assertEqual(finding[column], expected, f"{column} of {finding['finding']}: "
                                 f"{finding['evidence']}")

    def assert_healthy(self, name):
        rows = diagnosed(name)
        self.assertEqual(list(rows["finding"]), ["healthy"], rows[["finding", "evidence"]])
        healthy = rows.iloc[0]
        self.assertEqual(healthy["place"], "none")
        # The largest part of the ranks' steps, from the file.
        steps = la.load_table(PATHS[name], "rank_steps")
        parts = ["compute_ps", "tp_comm_ps", "dp_comm_ps", "pp_comm_ps", "bubble_ps"]
        largest = steps[parts].mean().idxmax()
        share = steps[largest].mean() / (steps["end_ps"] - steps["start_ps"]).mean()
        self.assertAlmostEqual(healthy["share_of_step"], share, places=6)
        label = {"compute_ps": "compute", "tp_comm_ps": "TP communication"}[largest]
        self.assertIn(f"the largest share is {label}", healthy["action"])
        self.assertIn(label, healthy["evidence"])


class Story1TensorParallelAcrossServers(DiagnosisTestCase):
    def test_tp_over_the_fabric_is_named_with_the_servers_it_spans(self):
        for name, placement in (("story1", STORY1_PLACEMENT),
                                ("story1_moved", STORY1_MOVED_PLACEMENT)):
            with self.subTest(name):
                top = self.top(name)
                self.assertEqual((top["finding"], top["place"]),
                                 ("tp_across_nodes", "scheduling_placement"))
                servers = sorted({server(g) for g in placement})
                self.assert_names(top, ranks="0-7", nodes=f"{servers[0]}-{servers[-1]}")
                steps = la.load_table(PATHS[name], "rank_steps")
                self.assertAlmostEqual(top["lost_per_step_ps"] / 1e9,
                                       steps["tp_comm_ps"].mean() / 1e9, places=3)
                self.assertGreater(top["share_of_step"], 0.5)

    def test_packed_into_one_server_it_is_healthy(self):
        self.assert_healthy("story1_healthy")


class Story2XidHang(DiagnosisTestCase):
    def test_the_hang_names_the_rank_and_server_of_the_lost_gpu(self):
        top = self.top("story2")
        self.assertEqual((top["finding"], top["place"]), ("hang", "reliability"))
        self.assert_names(top, ranks="13", nodes=str(server(13)))
        # Not a cost per step: the time the run lost, from the goodput table.
        self.assertEqual(top["lost_per_step_ps"], -1)
        self.assertTrue(math.isnan(top["share_of_step"]))
        self.assertEqual(top["lost_ps"], time_not_on_steps("story2"))

    def test_moved_with_the_watchdog_on_it_is_a_timeout_naming_the_new_culprit(self):
        top = self.top("story2_moved")
        self.assertEqual(top["finding"], "collective_timeout")
        self.assert_names(top, ranks=str(STORY2_MOVED_GPU), nodes=str(server(STORY2_MOVED_GPU)))
        self.assertIn("the watchdog aborted the job", top["evidence"])


class Story3NcclOnSockets(DiagnosisTestCase):
    def test_transfers_capped_far_below_line_rate_on_every_nic_are_sockets(self):
        for name in ("story3", "story3_one_interface"):
            with self.subTest(name):
                top = self.top(name)
                self.assertEqual((top["finding"], top["place"]),
                                 ("nccl_socket", "inter_node_communication"))
                self.assert_names(top, ranks="0-31", nodes="0-3")
                self.assertGreater(top["share_of_step"], 0.3)
                # The exposed gradient reduction is the cap's cost, not a second finding.
                self.assertNotIn("dp_not_hidden", set(diagnosed(name)["finding"]))

    def test_on_rdma_it_is_healthy(self):
        self.assert_healthy("story3_healthy")


class Story4GradientOverlapOff(DiagnosisTestCase):
    def test_the_exposed_reduction_is_blamed_on_overlap_off(self):
        top = self.top("story4")
        self.assertEqual((top["finding"], top["place"]),
                         ("overlap_off", "inter_node_communication"))
        # What every step loses: the ranks' mean wait in the median step (NCCL's tree ends its
        # ranks microseconds apart).
        steps = la.load_table(PATHS["story4"], "rank_steps")
        typical = steps.groupby(["step", "attempt"])["dp_comm_ps"].mean().median()
        self.assertAlmostEqual(top["lost_per_step_ps"] / 1e9, typical / 1e9, places=3)
        self.assertIn("0.0% ran under backward", top["evidence"])

    def test_with_overlap_on_it_is_healthy(self):
        self.assert_healthy("story4_healthy")


class Story5OneSlowGpu(DiagnosisTestCase):
    def test_the_throttled_gpu_and_its_server_are_named_from_kernel_times(self):
        for name, gpu in (("story5", 77), ("story5_moved", STORY5_MOVED_GPU)):
            with self.subTest(name):
                slow = self.only(name, "slow_gpu")
                self.assertEqual(slow["place"], "compute")
                self.assert_names(slow, ranks=str(gpu), nodes=str(server(gpu)))
                compute = diagnosed(name)[diagnosed(name)["place"] == "compute"]
                self.assertEqual(list(compute["finding"]), ["slow_gpu"])

    def test_the_restart_comes_first_naming_the_server_and_the_slow_gpu_leads_the_incidents(self):
        for name, gpu in (("story5", 77), ("story5_moved", STORY5_MOVED_GPU)):
            with self.subTest(name):
                rows = diagnosed(name)
                # The straggler detector drained that server and the job restarted.
                first = rows.iloc[0]
                self.assertEqual(first["finding"], "restarts")
                self.assert_names(first, nodes=str(server(gpu)))
                self.assertEqual((first["lost_per_step_ps"], first["lost_ps"]),
                                 (-1, time_not_on_steps(name)))
                incidents = rows[[t == INCIDENT for t in tiers(rows)]]
                slow = incidents.iloc[0]
                self.assertEqual(slow["finding"], "slow_gpu")
                self.assert_names(slow, ranks=str(gpu), nodes=str(server(gpu)))
                self.assertIn(f"finding {slow['rank']} (slow_gpu) says what was wrong on server "
                              f"{server(gpu)}", first["evidence"])
                printed = command(PATHS[name], "--no-write").stdout.splitlines()
                self.assertEqual(printed[1], "What stopped or interrupted the run:")
                self.assertTrue(printed[2].startswith(
                    f" 1. restarts [reliability] caused by server {server(gpu)}: "), printed[2])
                # A share of the run, never of a step: restarts cost many steps' worth.
                self.assertRegex(printed[2], r"lost, \d+% of the run's ")

    def test_without_the_fault_no_gpu_is_slow_and_nothing_restarts(self):
        findings = set(diagnosed("story5_healthy")["finding"])
        self.assertFalse(findings & {"slow_gpu", "slow_nic", "restarts"}, findings)


@unittest.skipIf(SANITIZED, "packet-level runs take too long under a sanitizer")
class Story6PfcStorm(DiagnosisTestCase):
    def test_the_leaf_port_where_the_pauses_start_is_named_not_the_gpus(self):
        for name, nic in (("story6", 24), ("story6_moved", STORY6_MOVED_NIC)):
            with self.subTest(name):
                top = self.top(name)
                self.assertEqual((top["finding"], top["place"]),
                                 ("pfc_storm", "inter_node_communication"))
                leaf, port = nic // HOSTS_PER_LEAF, nic % HOSTS_PER_LEAF
                self.assert_names(top, nodes=str(server(nic)), fabric=f"leaf{leaf} port {port}")
                self.assertIn("GPUs idle in collectives", top["evidence"])
                self.assertNotIn("slow_gpu", set(diagnosed(name)["finding"]))


class Story7NicOnWrongNuma(DiagnosisTestCase):
    def test_the_slow_nic_is_named_with_its_rank_and_server(self):
        for name, nic, placement in (("story7", 21, list(range(32))),
                                     ("story7_moved", STORY7_MOVED_NIC, STORY7_REVERSED)):
            with self.subTest(name):
                top = self.top(name)
                self.assertEqual((top["finding"], top["place"]),
                                 ("slow_nic", "inter_node_communication"))
                rank = placement.index(nic)
                self.assert_names(top, ranks=str(rank), nodes=str(server(nic)))
                # What the others wait for: its communication beyond its stage's median.
                steps = la.load_table(PATHS[name], "rank_steps")
                parts = steps[["tp_comm_ps", "cp_comm_ps", "pp_comm_ps", "dp_comm_ps"]]
                communication = parts.sum(axis=1).groupby(steps["rank"]).mean()
                beyond = communication[rank] - communication.median()
                self.assertAlmostEqual(top["lost_per_step_ps"] / 1e9, beyond / 1e9, places=3)

    def test_without_the_fault_it_is_healthy(self):
        self.assert_healthy("story7_healthy")


class Story8LinkFlapping(DiagnosisTestCase):
    def test_the_flapping_cable_and_the_rank_behind_it_are_named(self):
        for name, (host, rail) in (("story8", (10, 2)), ("story8_moved", STORY8_MOVED)):
            with self.subTest(name):
                top = self.top(name)
                self.assertEqual((top["finding"], top["place"]),
                                 ("link_flap", "inter_node_communication"))
                self.assert_names(top, ranks=str(host), nodes=str(server(host)),
                                  fabric=f"NIC {host} - rail{rail}")
                self.assertIn("in 2 episode(s)", top["evidence"])


class SlowStorage(DiagnosisTestCase):
    def test_gpus_idle_on_input_with_short_collectives_point_to_storage(self):
        top = self.top("slow_storage")
        self.assertEqual((top["finding"], top["place"]), ("storage_wait", "input_storage"))
        self.assertGreater(top["share_of_step"], 0.3)
        steps = la.load_table(PATHS["slow_storage"], "rank_steps")
        readers = sorted(steps.loc[steps["data_wait_ps"] > 0, "rank"].unique())
        self.assertEqual(top["ranks"], la.findings.ids(readers))

    def test_at_full_speed_the_data_wait_is_no_finding(self):
        self.assertNotIn("storage_wait", set(diagnosed("storage_healthy")["finding"]))

    def test_checkpoints_stalled_beyond_any_cadence_are_an_incident_not_the_plans_cost(self):
        slow = self.top("slow_checkpoints")
        self.assertEqual(slow["finding"], "checkpoint_stall")
        self.assertGreater(slow["share_of_step"], 0.5)
        self.assertIn("waited for the previous checkpoint's write", slow["action"])
        printed = command(PATHS["slow_checkpoints"], "--no-write").stdout.splitlines()
        self.assertTrue(printed[1].startswith("Incidents: "), printed[1])
        # Story 5 checkpoints every 2 steps on a healthy file system: the cadence's cost, last.
        rows = diagnosed("story5")
        self.assertEqual(tiers(rows)[list(rows["finding"]).index("checkpoint_stall")], PLAN)


class GpuDirectOffOnOneServer(DiagnosisTestCase):
    def test_the_server_whose_every_nic_is_slow_is_named(self):
        nics = self.only("gpudirect_off", "slow_node_nics")
        gpus = range(GPUDIRECT_OFF_SERVER * GPUS_PER_SERVER,
                     (GPUDIRECT_OFF_SERVER + 1) * GPUS_PER_SERVER)  # packed: rank = GPU
        self.assert_names(nics, ranks=f"{gpus[0]}-{gpus[-1]}", nodes=str(GPUDIRECT_OFF_SERVER))
        self.assertNotIn("slow_gpu", set(diagnosed("gpudirect_off")["finding"]))


class NicRateWhileBusy(unittest.TestCase):
    def test_transfers_side_by_side_on_a_nic_add_up_and_its_idle_gaps_do_not_count(self):
        # NIC 0 carries two transfers at once, each at half its rate; NIC 1 one after the other,
        # 1 ns apart, each at the same half rate.
        transfers = pd.DataFrame({
            "source": [0, 0, 1, 1],
            "bytes": [1000, 1000, 1000, 1000],
            "first_sent_ps": [0, 0, 0, 3000],
            "delivered_ps": [2000, 2000, 2000, 5000],
        })
        rates = transfer_checks._busy_rates(transfers)
        self.assertEqual(rates.to_dict(), {0: 8e12, 1: 4e12})


class PipelineBubble(DiagnosisTestCase):
    def test_the_advice_starts_from_the_runs_schedule_and_micro_batches(self):
        def bubble(p, v, m):
            return la.findings.percent((p - 1) / (v * m + p - 1))

        for name in ("story5", "bubble", "bubble_interleaved"):
            with self.subTest(name):
                action = self.only(name, "pipeline_bubble")["action"]
                job = la.scenario(PATHS[name])["job"]
                p = job["parallelism"]["pipeline"]
                v = job["parallelism"]["virtual_stages"]
                m = job["global_batch"] // (job["micro_batch"] * job["parallelism"]["data"])
                self.assertIn(f"p={p} stages, v={v} chunks and m={m} micro-batches the "
                              f"{job['schedule']} schedule leaves {bubble(p, v, m)}", action)
                # More micro-batches than the run has, never a number it already meets.
                more = [int(n) for n in re.findall(r"(?<![=\d])(\d+) micro-batches", action)]
                self.assertTrue(more and all(n > m for n in more), action)
                self.assertIn(f"would leave {bubble(p, v, more[-1])}", action)
                # Interleaving, with the next number of chunks a stage's layers divide into.
                per_stage = job["model"]["layers"] // p
                chunks = [c for c in range(max(2, v + 1), per_stage + 1) if per_stage % c == 0]
                if chunks:
                    self.assertIn(f"job.parallelism.virtual_stages: {chunks[0]}) would leave "
                                  f"{bubble(p, chunks[0], m)}", action)
                else:
                    self.assertNotIn("virtual_stages", action)
        self.assertIn("at the same global batch (job.micro_batch: 1)",
                      self.only("bubble_interleaved", "pipeline_bubble")["action"])


class Ranking(DiagnosisTestCase):
    def test_interruptions_then_incidents_by_time_lost_then_plan_costs_by_share(self):
        for name in PATHS:
            with self.subTest(name):
                rows = diagnosed(name)
                self.assertEqual(list(rows["rank"]), list(range(1, len(rows) + 1)))
                order = tiers(rows)
                self.assertEqual(order, sorted(order), rows[["finding", "lost_ps"]])
                by_tier = rows.assign(tier=order)
                lost = by_tier.loc[by_tier["tier"] == INCIDENT, "lost_ps"]
                self.assertTrue(lost.is_monotonic_decreasing, lost)
                share = by_tier.loc[by_tier["tier"] == PLAN, "share_of_step"]
                self.assertTrue(share.is_monotonic_decreasing, share)


class FindingsTable(DiagnosisTestCase):
    def test_times_are_int64_picoseconds_with_minus_one_and_nan_where_not_known(self):
        for name in PATHS:
            with self.subTest(name):
                rows = diagnosed(name)
                self.assertEqual({c: str(rows[c].dtype) for c in
                                  ("rank", "lost_per_step_ps", "share_of_step", "lost_ps")},
                                 {"rank": "int64", "lost_per_step_ps": "int64",
                                  "share_of_step": "float64", "lost_ps": "int64"})
                steps = len(la.load_table(PATHS[name], "steps")) if la.run_kind(
                    PATHS[name]) == "job" else 0
                for row in rows.itertuples():
                    per_step = row.lost_per_step_ps != -1
                    self.assertEqual(per_step, not math.isnan(row.share_of_step), row)
                    self.assertGreaterEqual(row.lost_ps, -1)
                    if row.finding in INTERRUPTIONS:
                        self.assertFalse(per_step, row)
                        self.assertIn(row.lost_ps, (-1, time_not_on_steps(name)))
                    elif row.finding == "healthy":
                        self.assertEqual(row.lost_ps, -1)
                    elif per_step:
                        self.assertLessEqual(row.share_of_step, 1)
                        self.assertEqual(row.lost_ps, row.lost_per_step_ps * steps, row)
                    else:
                        self.assertEqual(row.lost_ps, -1)


class FromMeasurementsOnly(DiagnosisTestCase):
    """The same diagnosis with the fault list gone from the file: the faults table deleted and
    `faults: []` in /meta/scenario."""

    def strip_faults(self, name):
        path = Path(_DIRECTORY.name) / f"{name}_unfaulted.h5"
        shutil.copyfile(PATHS[name], path)
        with h5py.File(path, "r+") as f:
            del f["faults"]
            resolved = yaml.safe_load(f["meta/scenario"][()].decode("ascii"))
            resolved["faults"] = []
            text = yaml.safe_dump(resolved).encode("ascii")
            del f["meta/scenario"]
            f["meta"].create_dataset("scenario", data=np.array(text, dtype=f"S{len(text)}"))
        return path

    def test_the_culprit_is_found_without_the_faults(self):
        for name in ("story5_moved", "story7_moved", "story8_moved", "story2_moved"):
            with self.subTest(name):
                columns = ["finding", "ranks", "nodes", "fabric", "lost_per_step_ps", "lost_ps"]
                without = diagnose(self.strip_faults(name))[columns]
                pd.testing.assert_frame_equal(without, diagnosed(name)[columns])
                # Only the note saying which injected fault a finding matches needs them.
                self.assertTrue(diagnosed(name)["evidence"].str.contains(
                    "matches injected fault").any())


class FabricRuns(DiagnosisTestCase):
    def test_the_incast_port_is_the_head_of_the_pauses(self):
        top = self.top("victim")
        self.assertEqual(top["finding"], "congested_port")
        leaf, port = divmod(VICTIM_INCAST_HOST, VICTIM_HOSTS_PER_LEAF)
        self.assert_names(top, fabric=f"leaf{leaf} port {port}")
        self.assertEqual((top["lost_per_step_ps"], top["lost_ps"]), (-1, -1))

    def test_an_nccl_tests_run_is_refused_with_exit_2(self):
        with tempfile.TemporaryDirectory() as directory:
            out = Path(directory) / "sweep.h5"
            subprocess.run([BIN, "nccl-tests", "all_reduce", str(COLLECTIVES), "-b", "1K", "-e",
                            "1K", "-o", str(out)], capture_output=True, check=True, timeout=60)
            before = out.read_bytes()
            result = command(out)
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertIn(f"{out}: an nccl-tests run has no job or traffic to diagnose",
                          result.stderr)
            self.assertEqual(out.read_bytes(), before)


class CommandLine(unittest.TestCase):
    def setUp(self):
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.dir = Path(directory.name)

    def copy_of(self, name):
        path = self.dir / f"{name}.h5"
        shutil.copyfile(PATHS[name], path)
        return path

    def assert_exit(self, result, code):
        self.assertEqual(result.returncode, code,
                         f"stdout: {result.stdout}\nstderr: {result.stderr}")

    def test_the_findings_are_printed_and_written_as_a_table_that_reads_back(self):
        path = self.copy_of("story7")
        result = cli(path)
        self.assert_exit(result, 0)
        written = la.load_table(path, "findings")
        self.assertEqual(list(written.columns), list(COLUMNS))
        with h5py.File(path, "r") as f:
            types = f["findings"].dtype
            self.assertEqual([types[c].str for c in ("lost_per_step_ps", "share_of_step",
                                                     "lost_ps")], ["<i8", "<f8", "<i8"])
        pd.testing.assert_frame_equal(written, diagnosed("story7"), check_dtype=True)
        lines = result.stdout.splitlines()
        self.assertRegex(lines[0], r"^\S+: job run, completed; 2 step\(s\) of [\d.]+ ms on "
                                   r"average, MFU [\d.]+%; \d+ findings?$")
        self.assertEqual(lines[1], "Incidents: anomalies against peers or the run's other steps, "
                                   "by time lost:")
        for row in written.itertuples():
            self.assertIn(f"{row.rank:2d}. {row.finding} [{row.place}]", result.stdout)
        self.assertEqual(lines[-1],
                         f"lockstep diagnose: wrote the findings table to {path.resolve()}")
        self.assertEqual(list(self.dir.iterdir()), [path], "a partial file was left")

    def test_the_diagnosed_file_is_still_the_same_run(self):
        path = self.copy_of("story8")
        self.assert_exit(command(path), 0)
        original = PATHS["story8"]
        self.assertEqual(la.tables(path), sorted(la.tables(original) + ["findings"]))
        self.assertEqual(la.run_kind(path), "job")
        self.assertEqual(la.meta(path), la.meta(original))
        for table in la.tables(original):
            pd.testing.assert_frame_equal(la.load_table(path, table),
                                          la.load_table(original, table))
        with h5py.File(path, "r") as f:
            table = f["findings"]
            self.assertEqual((table.chunks, table.compression, table.shuffle),
                             ((1024,), "gzip", True))
            self.assertEqual(list(table.attrs), [])

    def test_diagnosing_again_replaces_the_table_and_same_input_gives_same_bytes(self):
        once, twice = self.copy_of("story4"), self.dir / "again.h5"
        shutil.copyfile(once, twice)
        self.assert_exit(cli(once), 0)
        self.assert_exit(cli(twice), 0)
        self.assertTrue(filecmp.cmp(once, twice, shallow=False), "not reproducible")
        self.assert_exit(command(twice), 0)
        pd.testing.assert_frame_equal(la.load_table(twice, "findings"),
                                      la.load_table(once, "findings"))

    def test_no_write_prints_the_same_and_leaves_the_file_byte_identical(self):
        path = self.copy_of("story1")
        result = command(path, "--no-write")
        self.assert_exit(result, 0)
        self.assertTrue(filecmp.cmp(path, PATHS["story1"], shallow=False))
        self.assertIn("tp_across_nodes [scheduling_placement]", result.stdout)
        self.assertNotIn("wrote", result.stdout)

    def test_json_is_the_table_with_nan_as_null(self):
        path = self.copy_of("story2")
        result = command(path, "--json", "--no-write")
        self.assert_exit(result, 0)
        printed = json.loads(result.stdout)
        self.assertEqual((printed["kind"], printed["outcome"]), ("job", "hang"))
        findings = pd.DataFrame(printed["findings"])
        self.assertEqual(list(findings.columns), list(COLUMNS))
        self.assertIsNone(printed["findings"][0]["share_of_step"])
        self.assertEqual(printed["findings"][0]["lost_per_step_ps"], -1)
        self.assertEqual(list(findings["finding"]), list(diagnosed("story2")["finding"]))

    def test_bad_input_exits_2_naming_the_file_and_writes_nothing(self):
        text = self.dir / "notes.h5"
        text.write_text("not hdf5\n")
        empty = self.dir / "empty.h5"
        with h5py.File(empty, "w"):
            pass
        for path, message in ((self.dir / "missing.h5", "no such file"),
                              (self.dir, "not a regular file"),
                              (text, "not an HDF5 file"),
                              (empty, "not a lockstep run")):
            with self.subTest(message):
                result = command(path)
                self.assert_exit(result, 2)
                self.assertTrue(result.stderr.startswith(f"lockstep diagnose: {path}: {message}"),
                                result.stderr)
                self.assertNotIn("Traceback", result.stderr)
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["empty.h5", "notes.h5"])

    def test_a_failed_write_leaves_the_file_as_it_was_and_no_partial(self):
        path = self.copy_of("story4")
        findings = diagnosed("story4").copy()
        findings.loc[0, "evidence"] = "caf\u00e9"  # not ASCII: the write fails midway
        with self.assertRaises(UnicodeEncodeError):
            write_findings(path, findings)
        self.assertTrue(filecmp.cmp(path, PATHS["story4"], shallow=False))
        self.assertEqual(list(self.dir.iterdir()), [path])

    def test_a_partial_file_a_killed_diagnosis_left_is_removed(self):
        path = self.copy_of("story4")
        dead = subprocess.Popen(["true"])
        dead.wait()
        stale = path.with_name(f"{path.name}.partial.{dead.pid}")
        stale.write_bytes(b"left by a killed run")
        self.assert_exit(command(path), 0)
        self.assertFalse(stale.exists())

    def test_help_names_the_command(self):
        result = command("--help")
        self.assert_exit(result, 0)
        self.assertTrue(result.stdout.startswith("usage: lockstep diagnose"))
        self.assertIn("--no-write", result.stdout)


if __name__ == "__main__":
    unittest.main()
