"""The Python loader on real runs, and the output files of both kinds of run against their schema.

Job runs (scenarios/default.yaml, made small) and fabric runs (scenarios/fabric/victim.yaml and
incast.yaml, both fast) are made once per class or module. Needs LOCKSTEP_BIN (the program),
LOCKSTEP_SOURCE_DIR (the source tree) and analysis/ on PYTHONPATH; ctest sets all three
(tests/CMakeLists.txt).
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np
import pandas as pd

import lockstep_analysis as la

BIN = os.environ["LOCKSTEP_BIN"]
SOURCE = Path(os.environ["LOCKSTEP_SOURCE_DIR"])
SCHEMA = SOURCE / "analysis" / "hdf5_schema.md"

RANKS, STEPS = 256, 3
RECORDED_RANKS = [0, 8, 64, 128, 192]  # job.record_ops.ranks in scenarios/worked-example.yaml
TOKENS_PER_STEP = 32 * 4096  # the small run's global batch x Llama 2's sequence
PARTS = ["compute_ps", "tp_comm_ps", "cp_comm_ps", "pp_comm_ps", "dp_comm_ps", "bubble_ps",
         "data_wait_ps", "checkpoint_ps", "wait_for_others_ps"]
# The worked example made small: 8 layers, 4 micro-batches per replica, collectives by formula,
# GPU 3 throttled.
SMALL_RUN = ["--set", "network.model=analytic", "--set", "job.model.layers=8",
             "--set", "job.global_batch=32", "--set", f"job.steps={STEPS}",
             "--set", "job.slow_gpus=[{rank: 3, clock: 92%}]"]

# scenarios/fabric/victim.yaml: a leaf-spine of 2 leaves with 5 hosts each and 1 spine, one 400 Gbps
# uplink per leaf, 100 Gbps host links of 1 us; hosts 0-2 send 2 MB each to host 5 (an incast on
# leaf 1's port to host 5), host 3 sends 2 MB to host 6 (the victim). PFC on class 3, no DCQCN,
# counters sampled every 10 us. Nodes as models/fabric/leaf_spine.hpp numbers them.
VICTIM = SOURCE / "scenarios" / "fabric" / "victim.yaml"
HOSTS, HOSTS_PER_LEAF = 10, 5
LEAF0, LEAF1, SPINE = 10, 11, 12
UPLINK_PORT = HOSTS_PER_LEAF  # a leaf's hosts are ports 0-4, its uplink port 5
VICTIM_FLOWS = [(0, 5), (1, 5), (2, 5), (3, 6)]  # (source, destination), in list order
VICTIM_FLOW = 3
FLOW_BYTES = 2_000_000
DATA_CLASS = 3
PAYLOAD, HEADER = 1000, 62  # network.transport defaults, checked against /meta/scenario below
WIRE = PAYLOAD + HEADER
HOST_RATE_BPS, UPLINK_RATE_BPS = 100 * 10**9, 400 * 10**9
LINK_DELAY_PS = 1_000_000
VICTIM_PERIOD_PS = 10_000_000
NO_PFC = ["--set", "network.switches.pfc.lossless_classes=[]"]
# Three small flows on the victim network where the three ids of the fabric tables all differ: the
# second flow waits for the first on the same queue pair, the third starts in between on another.
QUEUE_PAIR_FLOWS = ("[{source: 0, destination: 5, size: 100KB},"
                    " {source: 0, destination: 5, size: 50KB, after: 0, start: 2us},"
                    " {source: 2, destination: 6, size: 10KB, start: 5us}]")
# scenarios/fabric/incast.yaml: 15 senders to host 0 on a k=4 fat tree, DCQCN, sampled every 20 us.
INCAST = SOURCE / "scenarios" / "fabric" / "incast.yaml"
INCAST_FLOWS, INCAST_PERIOD_PS = 15, 20_000_000


def parse_schema(text):
    """{section: {name: (type, unit, meaning)}} from every "### `section`" and the table under it.

    Column order is kept (dicts are ordered) because the doc promises the file's column order.
    """
    sections = {}
    current = None
    for number, line in enumerate(text.splitlines(), start=1):
        heading = re.fullmatch(r"### `([^`]+)`\s*", line)
        if heading:
            current = sections.setdefault(heading.group(1), {})
            continue
        if line.startswith("#"):
            current = None  # another heading: the files of runs end here (the sweep index follows)
            continue
        if current is None or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4:
            raise ValueError(f"{SCHEMA}:{number}: expected | name | type | unit | meaning |")
        if cells[1:3] == ["type", "unit"] or set(line) <= set("|-: "):
            continue  # header and separator rows
        # The meaning may itself contain '|' only inside backticks; rejoin it.
        name, kind, unit, meaning = cells[0], cells[1], cells[2], " | ".join(cells[3:])
        match = re.fullmatch(r"`([^`]+)`", name)
        if not match:
            raise ValueError(f"{SCHEMA}:{number}: name {name!r} is not in backticks")
        if match.group(1) in current:
            raise ValueError(f"{SCHEMA}:{number}: {match.group(1)} documented twice")
        current[match.group(1)] = (kind, unit, meaning)
    return sections


# `lockstep diagnose` adds a table to a run's file afterwards: a "kind" of its own, so that the
# files of plain runs are checked without it and a diagnosed file with it.
RUN_KINDS = {"job runs": "job", "fabric runs": "fabric", "faulted runs": "faulted",
             "nccl-tests runs": "nccl-tests", "lockstep diagnose": "diagnosed"}


def parse_written_by(text):
    """{section: set of run kinds ("job", "fabric")}, from each section's "Written by: ..." line.

    Every "### `section`" must have exactly one such line, naming known kinds only.
    """
    written_by = {}
    current = None
    for number, line in enumerate(text.splitlines(), start=1):
        heading = re.fullmatch(r"### `([^`]+)`\s*", line)
        if heading:
            current = heading.group(1)
            continue
        match = re.fullmatch(r"Written by: (.+)\.", line.strip())
        if not match:
            continue
        if current is None or current in written_by:
            raise ValueError(f"{SCHEMA}:{number}: 'Written by' outside a section or twice in one")
        kinds = [k.strip() for k in match.group(1).split(",")]
        unknown = [k for k in kinds if k not in RUN_KINDS]
        if unknown:
            raise ValueError(f"{SCHEMA}:{number}: unknown kind(s) of run {unknown}")
        written_by[current] = {RUN_KINDS[k] for k in kinds}
    return written_by


def documented_for(kind):
    """The doc's sections that a run of `kind` writes: {section: {column: (type, unit, ...)}}."""
    text = SCHEMA.read_text()
    sections, written_by = parse_schema(text), parse_written_by(text)
    return {name: columns for name, columns in sections.items() if kind in written_by.get(name, ())}


def type_in_file(dtype):
    """The doc's name for an HDF5 type as h5py maps it to numpy."""
    if dtype.kind == "S":
        return f"string[{dtype.itemsize}]"
    names = {np.dtype("<i8"): "int64", np.dtype("<u8"): "uint64", np.dtype("<f8"): "float64"}
    return names.get(dtype, f"undocumented type {dtype.str}")


def type_matches(documented, dtype):
    # Plain `string` is sized to its content, so any length matches.
    if documented == "string":
        return dtype.kind == "S"
    return documented == type_in_file(dtype)


def unit_of_name(name):
    """The unit a column's name promises (the naming convention in the schema doc)."""
    if name.endswith("_ps"):
        return "ps"
    if name.endswith("_bps"):
        return "bit/s"
    if "bytes" in name.split("_"):
        return "bytes"
    if name.endswith("_per_second"):
        return name[: -len("_per_second")] + "/s"
    if "tflops" in name.split("_"):
        return "TFLOP/s"
    if "flops" in name.split("_"):
        return "FLOP"
    return "-"


def run_lockstep(out, scenario, *args):
    """Runs `lockstep run scenario -o out args...`; returns the completed process (with stdout)."""
    result = subprocess.run([BIN, "run", str(scenario), "-o", str(out), "--quiet", *map(str, args)],
                            capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise AssertionError(f"lockstep run failed ({result.returncode}): {result.stderr}")
    return result


def run_small(directory):
    out = Path(directory) / "small.h5"
    scenario = SOURCE / "scenarios" / "worked-example.yaml"
    run_lockstep(out, scenario, *SMALL_RUN)
    return out, scenario


def edge_port(host):
    """(switch, port) of the victim scenario's leaf port that leads to `host` (leaf_spine.hpp)."""
    return HOSTS + host // HOSTS_PER_LEAF, host % HOSTS_PER_LEAF


def victim_wiring():
    """{(node, port): (peer node, peer port)} of the victim scenario, both directions of every link.

    From models/fabric/leaf_spine.hpp: leaf l has its hosts at ports 0-4 and its uplink at port 5;
    the spine has its cables in leaf order.
    """
    wiring = {}
    for host in range(HOSTS):
        wiring[(host, 0)] = edge_port(host)
    for leaf in range(2):
        wiring[(HOSTS + leaf, UPLINK_PORT)] = (SPINE, leaf)
    wiring.update({peer: end for end, peer in list(wiring.items())})
    return wiring


def data_bytes_unaccounted(totals):
    """{switch: data bytes it received - bytes it sent - bytes it dropped} of a victim run that
    completed (with nothing left in the queues): every value must be 0."""
    wiring = victim_wiring()
    by_port = totals.groupby(["node", "port"])[["bytes_sent", "dropped_bytes"]].sum()

    def total(end, column):
        return int(by_port[column].get(end, 0))

    unaccounted = {}
    for switch in [LEAF0, LEAF1, SPINE]:
        ports = [end for end in wiring if end[0] == switch]
        received = sum(total(wiring[end], "bytes_sent") for end in ports)
        sent = sum(total(end, "bytes_sent") for end in ports)
        dropped = sum(total(end, "dropped_bytes") for end in ports)
        unaccounted[switch] = received - sent - dropped
    return unaccounted


def packets_of(payload_bytes):
    return -(-payload_bytes // PAYLOAD)


def serialization_ps(payload_bytes):
    """Time to put a message's packets (payload plus header each) on a 100 Gbps host link."""
    return packets_of(payload_bytes) * WIRE * 8 * 10**12 // HOST_RATE_BPS


def fct_lower_bound_ps(payload_bytes, hops):
    """No flow finishes faster than its sender can put it on the wire, plus the propagation of the
    last packet to the destination and of its acknowledgement back."""
    return serialization_ps(payload_bytes) + 2 * hops * LINK_DELAY_PS


FABRIC_RUNS = {}  # name -> (path, completed process); made once, in setUpModule


def setUpModule():
    global _FABRIC_DIRECTORY
    _FABRIC_DIRECTORY = tempfile.TemporaryDirectory()
    directory = Path(_FABRIC_DIRECTORY.name)
    # The victim scenario without its sample_period line: a run that records totals only.
    unsampled = directory / "victim_unsampled.yaml"
    text = VICTIM.read_text()
    unsampled.write_text(re.sub(r"(?m)^  sample_period: .*\n", "", text))
    assert unsampled.read_text() != text, "victim.yaml no longer sets network.sample_period"
    runs = {
        "victim": (VICTIM, []),
        "victim_lossy": (VICTIM, NO_PFC),
        "victim_unsampled": (unsampled, []),
        "victim_until": (VICTIM, ["--until", "100us"]),
        "incast": (INCAST, []),
        "queue_pairs": (VICTIM, ["--set", f"traffic.flows={QUEUE_PAIR_FLOWS}"]),
        "victim_flow_level": (VICTIM, ["--set", "network.model=flow"]),
    }
    for name, (scenario, args) in runs.items():
        out = directory / f"{name}.h5"
        FABRIC_RUNS[name] = (out, run_lockstep(out, scenario, *args))


def tearDownModule():
    _FABRIC_DIRECTORY.cleanup()


def fabric_run(name):
    return FABRIC_RUNS[name][0]


class LoaderOnARealRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._directory = tempfile.TemporaryDirectory()
        cls.path, cls.scenario = run_small(cls._directory.name)
        cls.ops = la.load_table(cls.path, "rank_ops")
        cls.rank_steps = la.load_table(cls.path, "rank_steps")
        cls.steps = la.load_table(cls.path, "steps")
        cls.meta = la.meta(cls.path)

    @classmethod
    def tearDownClass(cls):
        cls._directory.cleanup()

    def test_tables_lists_the_job_and_network_tables_and_not_meta(self):
        self.assertEqual(la.tables(self.path),
                         ["blocked_ranks", "defences", "flow_samples", "goodput", "messages",
                          "port_samples", "port_totals", "ports", "queue_pairs", "rank_memory",
                          "rank_ops", "rank_placement", "rank_steps", "steps"])
        self.assertEqual(la.run_kind(self.path), "job")

    def test_every_table_loads_as_a_dataframe_with_columns_in_file_order(self):
        with h5py.File(self.path, "r") as f:
            for name in la.tables(self.path):
                with self.subTest(table=name):
                    df = la.load_table(self.path, name)
                    self.assertIsInstance(df, pd.DataFrame)
                    self.assertEqual(list(df.columns), list(f[name].dtype.names))
                    self.assertEqual(len(df), f[name].shape[0])

    def test_an_unknown_table_raises_keyerror_naming_the_real_ones(self):
        with self.assertRaisesRegex(KeyError, "rank_ops, rank_placement, rank_steps, steps"):
            la.load_table(self.path, "meta")
        with self.assertRaises(KeyError):
            la.load_table(self.path, "no_such_table")

    def test_rank_ops_holds_the_recorded_ranks_first_step_op_by_op(self):
        ops = self.ops
        self.assertTrue(all(type(k) is str for k in ops["kind"]), "kind must be decoded to str")
        self.assertEqual(set(ops["rank"]), set(RECORDED_RANKS))
        self.assertEqual(set(ops["step"]), {0})
        self.assertEqual(set(ops["kind"]), {"kernel", "collective", "send", "recv", "marker"})
        self.assertTrue((ops["end_ps"] >= ops["start_ps"]).all())
        for rank, own in ops.groupby("rank"):
            with self.subTest(rank=rank):
                self.assertEqual(list(own["name"][own["kind"] == "marker"]), ["step_end"])
                # A stream runs one op at a time.
                compute = own[own["stream"] == "compute"].sort_values(["start_ps", "end_ps"])
                self.assertTrue((compute["start_ps"].iloc[1:].to_numpy()
                                 >= compute["end_ps"].iloc[:-1].to_numpy()).all())
                # The first stage sends activations and receives gradients; the last the reverse.
                stage = int(own["stage"].iloc[0])
                sends = set(own["name"][own["kind"] == "send"])
                self.assertEqual(sends, {"activations"} if stage == 0 else
                                 {"gradients"} if stage == 3 else {"activations", "gradients"})
        kernels = ops[ops["kind"] == "kernel"]
        flops = kernels.groupby("rank")["flops"].sum()
        # Ranks of one stage count the same FLOPs; the last stage adds the logits.
        self.assertEqual(flops[0], flops[8])
        self.assertGreater(flops[192], flops[64])
        self.assertTrue((ops[ops["kind"] == "collective"]["bytes"] > 0).all())

    def test_rank_ops_name_each_collective_and_transfer_alike_on_every_member(self):
        ops = self.ops
        shared = ops[ops["communicator"] != ""]
        self.assertTrue((shared["group"] >= 0).all() and (shared["sequence"] >= 0).all())
        self.assertTrue((ops[ops["communicator"] == ""][["group", "sequence"]] == -1).all(None))
        # Ranks 0 and 8 are data-parallel peers: the same gradient collectives, the same ids.
        def dp_ids(rank):
            own = shared[(shared["rank"] == rank) & (shared["communicator"] == "dp")]
            return list(zip(own["group"], own["sequence"], own["name"]))
        self.assertTrue(dp_ids(0))
        self.assertEqual(sorted(dp_ids(0)), sorted(dp_ids(8)))
        # Rank 0 (stage 0) sends each micro-batch's activations to rank 64 (stage 1): one receive
        # there with the same id, which ends after the send began.
        sends = shared[(shared["rank"] == 0) & (shared["kind"] == "send")]
        receives = shared[(shared["rank"] == 64) & (shared["kind"] == "recv") &
                          (shared["name"] == "activations")]
        pairs = sends.merge(receives, on=["group", "sequence"], suffixes=("_send", "_recv"))
        self.assertEqual(len(pairs), len(sends))
        self.assertTrue((pairs["end_ps_recv"] >= pairs["start_ps_send"]).all())
        # What a rank waited in collectives and receives is its step's waiting, part for part.
        first = self.rank_steps[self.rank_steps["step"] == 0].set_index("rank")
        for rank in RECORDED_RANKS:
            own = ops[ops["rank"] == rank]
            tensor = own[own["communicator"].isin(["tp", "cp"])]["waited_ps"].sum()
            bubble = own[own["kind"] == "recv"]["waited_ps"].sum()
            self.assertEqual(tensor, first.loc[rank, "wait_for_others_ps"], f"rank {rank}")
            self.assertEqual(bubble, first.loc[rank, "bubble_ps"], f"rank {rank}")
        # GPU 3 runs at 92%: its tensor-parallel peer rank 0 waits for it in TP collectives.
        self.assertGreater(first.loc[0, "wait_for_others_ps"], 0)

    def test_rank_placement_puts_every_rank_on_its_gpu_and_node(self):
        placement = la.load_table(self.path, "rank_placement")
        self.assertEqual(list(placement["rank"]), list(range(RANKS)))
        self.assertEqual(set(placement["attempt"]), {0})
        # The worked example packs ranks in order onto 8-GPU servers.
        self.assertEqual(list(placement["gpu"]), list(range(RANKS)))
        self.assertEqual(list(placement["node"]), [rank // 8 for rank in range(RANKS)])

    def test_rank_steps_accounts_for_every_rank_in_every_step(self):
        rs = self.rank_steps
        self.assertEqual(len(rs), RANKS * STEPS)
        self.assertFalse(rs.duplicated(["rank", "step"]).any())
        for column in PARTS + ["other_ps"]:
            self.assertTrue((rs[column] >= 0).all(), column)
        # A recorded rank's compute is the sum of its compute-stream kernels (optimizer included).
        kernels = self.ops[(self.ops["kind"] == "kernel") & (self.ops["stream"] == "compute")]
        busy = (kernels["end_ps"] - kernels["start_ps"]).groupby(kernels["rank"]).sum()
        first = rs[rs["step"] == 0].set_index("rank")
        for rank in RECORDED_RANKS:
            self.assertEqual(first.loc[rank, "compute_ps"], busy[rank], f"rank {rank}")

    def test_every_rank_step_adds_up_to_its_duration_and_tiles_the_run(self):
        rs = self.rank_steps
        parts = rs[PARTS + ["other_ps"]].sum(axis=1)
        self.assertTrue((parts == rs["end_ps"] - rs["start_ps"]).all())
        for rank, own in rs.sort_values("step").groupby("rank"):
            self.assertEqual(own["start_ps"].iloc[0], 0)
            self.assertEqual(list(own["start_ps"].iloc[1:]), list(own["end_ps"].iloc[:-1]))

    def test_steps_follow_each_other_and_name_the_throttled_gpu(self):
        steps = self.steps.sort_values("step")
        self.assertEqual(list(steps["step"]), list(range(STEPS)))
        self.assertEqual(steps["start_ps"].iloc[0], 0)
        self.assertEqual(list(steps["start_ps"].iloc[1:]), list(steps["end_ps"].iloc[:-1]))
        ends = self.rank_steps.groupby("step")["end_ps"].max()
        self.assertEqual(list(steps["end_ps"]), list(ends))
        # The slowest rank did the most work of its own (schema doc), the lowest on a tie.
        rs = self.rank_steps
        own = rs.assign(busy=rs["compute_ps"] + rs["tp_comm_ps"] + rs["cp_comm_ps"] + rs["pp_comm_ps"])
        for step, group in own.groupby("step"):
            busiest = group.loc[group["busy"] == group["busy"].max(), "rank"].min()
            self.assertEqual(steps.loc[steps["step"] == step, "slowest_rank"].iloc[0], busiest)
        seconds = (steps["end_ps"] - steps["start_ps"]) / 1e12
        np.testing.assert_allclose(steps["tokens_per_second"], TOKENS_PER_STEP / seconds)
        self.assertTrue(((steps["mfu"] > 0) & (steps["mfu"] < 1)).all())

    def test_meta_is_plain_python_values_describing_the_run(self):
        m = self.meta
        self.assertEqual(set(m), {"scenario", "scenario_file", "seed", "version", "kind", "outcome",
                                  "end_ps", "events"})
        for name in ["scenario", "scenario_file", "version", "kind", "outcome"]:
            self.assertIs(type(m[name]), str, name)
        for name in ["seed", "end_ps", "events"]:
            self.assertIs(type(m[name]), int, name)
        self.assertEqual(m["outcome"], "completed")
        self.assertEqual(m["kind"], "job")
        self.assertEqual(m["seed"], 1)
        self.assertEqual(m["scenario_file"], str(self.scenario))
        self.assertEqual(m["end_ps"], int(self.steps["end_ps"].max()))
        self.assertGreater(m["events"], 0)
        # The resolved scenario shows the overrides, not the file's values.
        self.assertRegex(m["scenario"], r"(?m)^    layers: 8$")
        self.assertRegex(m["scenario"], rf"(?m)^  steps: {STEPS}$")
        version = subprocess.run([BIN, "--version"], capture_output=True, text=True, timeout=10)
        self.assertEqual(version.stdout.strip(), f"lockstep {m['version']}")

    def test_step_summary_has_one_row_per_step_with_seconds(self):
        summary = la.step_summary(self.path)
        self.assertEqual(list(summary["step"]), list(range(STEPS)))
        steps = self.steps.sort_values("step").reset_index(drop=True)
        self.assertEqual(list(summary["step_ps"]), list(steps["end_ps"] - steps["start_ps"]))
        self.assertEqual(list(summary["slowest_rank"]), list(steps["slowest_rank"]))
        means = self.rank_steps.groupby("step")["compute_ps"].mean()
        np.testing.assert_allclose(summary["mean_compute_ps"], means.to_numpy())
        np.testing.assert_allclose(summary["step_s"], summary["step_ps"] / 1e12)
        np.testing.assert_allclose(summary["mfu"], steps["mfu"])
        # Step time is at least every rank's compute plus its exposed communication.
        exposed = summary["mean_compute_s"] + summary["mean_tp_comm_s"] + summary["mean_dp_comm_s"]
        self.assertTrue((summary["step_s"] >= exposed).all())

    def test_summarize_script_prints_a_line_per_step(self):
        script = SOURCE / "analysis" / "summarize.py"
        result = subprocess.run([sys.executable, str(script), str(self.path)],
                                capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertIn("completed", lines[0])
        self.assertIn("slowest rank", lines[1])
        self.assertEqual(len(lines), 2 + STEPS)
        self.assertEqual([int(line.split()[0]) for line in lines[2:]], list(range(STEPS)))

    def test_summarize_script_fails_cleanly_on_a_missing_file(self):
        script = SOURCE / "analysis" / "summarize.py"
        result = subprocess.run([sys.executable, str(script), str(self.path) + ".missing"],
                                capture_output=True, text=True, timeout=30)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("cannot read", result.stderr)
        self.assertNotIn("Traceback", result.stderr)

    def test_summarize_script_answers_help_and_stops_quietly_when_piped_into_head(self):
        script = SOURCE / "analysis" / "summarize.py"
        result = subprocess.run([sys.executable, str(script), "--help"], capture_output=True,
                                text=True, timeout=30)
        self.assertEqual(result.returncode, 0)
        self.assertIn("RUN.h5", result.stdout)
        with tempfile.TemporaryDirectory() as directory:
            # 20,000 steps (replayed at their priced time): far more than a pipe holds.
            long_run = Path(directory) / "long.h5"
            run_lockstep(long_run, SOURCE / "scenarios" / "war-stories" / "2_xid_hang.yaml",
                         "--set", "faults=[]", "--set", "job.steps=20000",
                         "--set", "job.reuse_steady_step=true")
            piped = subprocess.run(f"'{sys.executable}' '{script}' '{long_run}' | head -1",
                                   shell=True, capture_output=True, text=True, timeout=60)
        self.assertEqual(piped.stderr, "")
        self.assertEqual(len(piped.stdout.splitlines()), 1)


class WithSeconds(unittest.TestCase):
    def test_adds_a_seconds_column_beside_each_picosecond_column(self):
        df = pd.DataFrame({"rank": [0, 1], "start_ps": [0, 1_500_000_000_000],
                           "wait_for_slowest_ps": [2_000_000, 0], "bytes": [10, 20]})
        out = la.with_seconds(df)
        self.assertEqual(list(out.columns), ["rank", "start_ps", "wait_for_slowest_ps", "bytes",
                                             "start_s", "wait_for_slowest_s"])
        self.assertEqual(list(out["start_s"]), [0.0, 1.5])
        self.assertEqual(list(out["wait_for_slowest_s"]), [2e-6, 0.0])
        self.assertEqual(list(out["rank"]), [0, 1])
        self.assertEqual(list(out["bytes"]), [10, 20])

    def test_leaves_its_argument_unchanged(self):
        df = pd.DataFrame({"end_ps": [7]})
        la.with_seconds(df)
        self.assertEqual(list(df.columns), ["end_ps"])

    def test_the_conversion_factor_is_picoseconds_per_second(self):
        self.assertEqual(la.PS_PER_SECOND, 10**12)


class RunKind(unittest.TestCase):
    def test_a_job_with_background_traffic_is_a_job_run(self):
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "job_with_traffic.h5"
            with h5py.File(path, "w") as f:
                for table in ("flows", "steps"):
                    f.create_dataset(table, data=np.zeros(1, dtype=[("start_ps", "<i8")]))
            self.assertEqual(la.run_kind(path), "job")


class SchemaDoc(unittest.TestCase):
    """The doc itself: parseable, every section assigned to the runs that write it."""

    @classmethod
    def setUpClass(cls):
        text = SCHEMA.read_text()
        cls.doc = parse_schema(text)
        cls.written_by = parse_written_by(text)

    def test_the_doc_documents_meta_and_at_least_one_table(self):
        self.assertIn("/meta", self.doc)
        self.assertGreater(len(self.doc), 1)
        for section, entries in self.doc.items():
            self.assertTrue(entries, f"### `{section}` has no table")

    def test_every_documented_name_carries_its_unit_in_the_name(self):
        for section, entries in self.doc.items():
            for name, (_, unit, meaning) in entries.items():
                with self.subTest(section=section, name=name):
                    self.assertEqual(unit, unit_of_name(name))
                    self.assertTrue(meaning, "meaning is empty")

    def test_every_section_says_which_kinds_of_run_write_it(self):
        self.assertEqual(set(self.written_by), set(self.doc))
        self.assertEqual(self.written_by["/meta"], {"job", "fabric", "nccl-tests"})
        job = {name for name, kinds in self.written_by.items() if "job" in kinds}
        fabric = {name for name, kinds in self.written_by.items() if "fabric" in kinds}
        network = {"messages", "ports", "port_totals", "port_samples", "flow_samples",
                   "queue_pairs"}
        self.assertEqual(job, {"/meta", "rank_ops", "rank_placement", "rank_steps", "steps",
                               "rank_memory", "blocked_ranks", "goodput", "defences"} | network)
        self.assertEqual(fabric, {"/meta", "flows", "failed_flows"} | network)
        faulted = {name for name, kinds in self.written_by.items() if "faulted" in kinds}
        self.assertEqual(faulted, {"faults", "defences"})
        collectives = {name for name, kinds in self.written_by.items() if "nccl-tests" in kinds}
        self.assertEqual(collectives, {"/meta", "nccl_tests", "nccl_tests_ranks"})
        diagnosed = {name for name, kinds in self.written_by.items() if "diagnosed" in kinds}
        self.assertEqual(diagnosed, {"findings"})

    def test_the_written_by_parser_rejects_unknown_kinds_and_repeats(self):
        with self.assertRaisesRegex(ValueError, "unknown kind"):
            parse_written_by("### `x`\n\nWritten by: lunar runs.\n")
        with self.assertRaisesRegex(ValueError, "twice"):
            parse_written_by("### `x`\n\nWritten by: job runs.\nWritten by: job runs.\n")
        self.assertEqual(parse_written_by("### `x`\n\nWritten by: job runs, fabric runs.\n"),
                         {"x": {"job", "fabric"}})


class FileMatchesSchemaDoc:
    """Checks of one kind of run's file against the doc, in both directions; mixed into a TestCase
    per kind (RUN_KIND, or RUN_KINDS for a run of several kinds, and make_run(directory)
    returning the file's path)."""

    RUN_KIND = None
    RUN_KINDS = ()
    STRING_IN_A_TABLE = None  # a table with a text column, to see that strings are checked at all

    @classmethod
    def setUpClass(cls):
        cls.doc = {}
        for kind in cls.RUN_KINDS or (cls.RUN_KIND,):
            cls.doc.update(documented_for(kind))
        cls._directory = tempfile.TemporaryDirectory()
        cls.path = cls.make_run(cls._directory.name)

    @classmethod
    def tearDownClass(cls):
        cls._directory.cleanup()

    def test_the_root_holds_exactly_the_documented_tables_and_meta(self):
        with h5py.File(self.path, "r") as f:
            documented = {name.lstrip("/") for name in self.doc}
            self.assertEqual(set(f.keys()), documented)
            self.assertIsInstance(f["meta"], h5py.Group)

    def test_every_table_has_exactly_the_documented_columns_types_and_order(self):
        with h5py.File(self.path, "r") as f:
            for table, columns in self.doc.items():
                if table == "/meta":
                    continue
                with self.subTest(table=table):
                    self.assertIn(table, f, "documented for this kind of run, absent from the file")
                    dataset = f[table]
                    self.assertIsInstance(dataset, h5py.Dataset)
                    self.assertEqual(dataset.ndim, 1)
                    self.assertIsNotNone(dataset.dtype.names, "not a compound type")
                    self.assertEqual(list(dataset.dtype.names), list(columns))
                    for column, (documented, _, _) in columns.items():
                        actual = dataset.dtype[column]
                        self.assertTrue(type_matches(documented, actual),
                                        f"{table}.{column}: doc says {documented}, file has "
                                        f"{type_in_file(actual)}")

    def test_meta_has_exactly_the_documented_scalar_datasets_and_types(self):
        with h5py.File(self.path, "r") as f:
            group = f["meta"]
            self.assertEqual(set(group.keys()), set(self.doc["/meta"]))
            for name, (documented, _, _) in self.doc["/meta"].items():
                with self.subTest(dataset=name):
                    self.assertIsInstance(group[name], h5py.Dataset)
                    self.assertEqual(group[name].shape, ())
                    self.assertTrue(type_matches(documented, group[name].dtype),
                                    f"/meta/{name}: doc says {documented}, file has "
                                    f"{type_in_file(group[name].dtype)}")

    def test_strings_are_fixed_length_nul_padded_ascii(self):
        with h5py.File(self.path, "r") as f:
            found = []

            def check(name, obj):
                if not isinstance(obj, h5py.Dataset):
                    return
                file_type = obj.id.get_type()
                members = ([file_type.get_member_type(i) for i in range(file_type.get_nmembers())]
                           if file_type.get_class() == h5py.h5t.COMPOUND else [file_type])
                for member in members:
                    if member.get_class() == h5py.h5t.STRING:
                        found.append(name)
                        self.assertFalse(member.is_variable_str(), name)
                        self.assertEqual(member.get_strpad(), h5py.h5t.STR_NULLPAD, name)
                        self.assertEqual(member.get_cset(), h5py.h5t.CSET_ASCII, name)

            f.visititems(check)
            self.assertIn(self.STRING_IN_A_TABLE, found)
            self.assertIn("meta/outcome", found)

    def test_nothing_in_the_file_is_undocumented(self):
        # A walk over every object, so that a nested group or stray attribute is caught too.
        documented = {"meta"} | {name.lstrip("/") for name in self.doc}
        documented |= {f"meta/{name}" for name in self.doc["/meta"]}
        with h5py.File(self.path, "r") as f:
            seen = []
            f.visit(seen.append)
            self.assertEqual(set(seen), documented)
            for name in ["/", *seen]:
                self.assertEqual(list(f[name].attrs), [], f"{name} has attributes")

    def test_tables_are_chunked_and_compressed_as_documented(self):
        with h5py.File(self.path, "r") as f:
            for table in self.doc:
                if table == "/meta":
                    continue
                with self.subTest(table=table):
                    self.assertIn(table, f, "documented for this kind of run, absent from the file")
                    self.assertEqual(f[table].chunks, (1024,))
                    self.assertEqual(f[table].compression, "gzip")
                    self.assertTrue(f[table].shuffle)


class JobFileMatchesSchemaDoc(FileMatchesSchemaDoc, unittest.TestCase):
    RUN_KIND = "job"
    STRING_IN_A_TABLE = "rank_ops"

    @staticmethod
    def make_run(directory):
        return run_small(directory)[0]


class DiagnosedJobFileMatchesSchemaDoc(FileMatchesSchemaDoc, unittest.TestCase):
    """The small job run after `lockstep diagnose` (analysis/diagnose.py) added its findings."""

    RUN_KINDS = ("job", "diagnosed")
    STRING_IN_A_TABLE = "findings"

    @staticmethod
    def make_run(directory):
        path = run_small(directory)[0]
        result = subprocess.run(["/usr/bin/python3", str(SOURCE / "analysis" / "diagnose.py"),
                                 str(path)], capture_output=True, text=True, timeout=60,
                                env=dict(os.environ, PYTHONPATH=str(SOURCE / "analysis")))
        if result.returncode != 0:
            raise AssertionError(f"lockstep diagnose failed ({result.returncode}): "
                                 f"{result.stderr}")
        return path

    def test_the_findings_table_has_rows(self):
        self.assertGreater(len(la.load_table(self.path, "findings")), 0)


class FabricFileMatchesSchemaDoc(FileMatchesSchemaDoc, unittest.TestCase):
    """The victim scenario samples, so every fabric table is written (flow_samples is empty: no
    DCQCN)."""

    RUN_KIND = "fabric"
    STRING_IN_A_TABLE = "messages"

    @staticmethod
    def make_run(directory):
        return fabric_run("victim")

    def test_the_sampled_tables_have_rows(self):
        with h5py.File(self.path, "r") as f:
            for table in ["messages", "flows", "port_totals", "port_samples"]:
                self.assertGreater(f[table].shape[0], 0, table)


COLLECTIVES = SOURCE / "scenarios" / "collectives" / "leaf_spine_16.yaml"


def run_nccl_tests(out, *args):
    """Runs `lockstep nccl-tests all_reduce COLLECTIVES -o out args...`; returns the process."""
    result = subprocess.run([BIN, "nccl-tests", "all_reduce", str(COLLECTIVES), "-o", str(out),
                             *map(str, args)], capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise AssertionError(f"lockstep nccl-tests failed ({result.returncode}): {result.stderr}")
    return result


class FaultedJobFileMatchesSchemaDoc(FileMatchesSchemaDoc, unittest.TestCase):
    """War story 2 with a 30 s watchdog: a job whose GPU fails, so every fault and defence table
    has rows."""

    RUN_KINDS = ("job", "faulted")
    STRING_IN_A_TABLE = "blocked_ranks"

    @staticmethod
    def make_run(directory):
        out = Path(directory) / "xid.h5"
        run_lockstep(out, SOURCE / "scenarios" / "war-stories" / "2_xid_hang.yaml",
                     "--set", "defences.watchdog.enabled=true",
                     "--set", "defences.watchdog.timeout=30s")
        return out


class RestartedJob(unittest.TestCase):
    """War story 5 made small: GPU 77 slows from step 1, the straggler detector drains its node (9)
    and the job restarts on the spare, node 32."""

    def test_the_restart_moves_the_drained_nodes_ranks_and_their_ops_carry_the_attempt(self):
        with tempfile.TemporaryDirectory() as directory:
            out = Path(directory) / "restarted.h5"
            run_lockstep(out, SOURCE / "scenarios" / "war-stories" / "5_one_slow_gpu.yaml",
                         "--set", "job.model.layers=8", "--set", "job.global_batch=32",
                         "--set", "job.steps=8", "--set",
                         "faults=[{kind: thermal, gpu: 77, step: 1, clock: 70%}]")
            placement = la.load_table(out, "rank_placement")
            ops = la.load_table(out, "rank_ops")
            steps = la.load_table(out, "steps")
        first = placement[placement["attempt"] == 0].set_index("rank")
        second = placement[placement["attempt"] == 1].set_index("rank")
        moved = first.index[first["node"] != second["node"]]
        self.assertEqual(list(moved), list(range(72, 80)))  # GPU 77's node, ranks 72-79
        self.assertEqual(set(second.loc[moved, "node"]), {32})
        self.assertEqual(list(second.loc[moved, "gpu"] % 8), list(first.loc[moved, "gpu"] % 8))
        self.assertEqual(set(placement["attempt"]), set(steps["attempt"]))
        # The first step is recorded in each attempt that ran it.
        self.assertEqual(set(ops["attempt"]), {0, 1})


class FaultedRunSummary(unittest.TestCase):
    """summarize.py on a hung job (war story 2): the fault and the hang report follow the steps."""

    def test_the_fault_and_the_blocked_ranks_are_listed(self):
        with tempfile.TemporaryDirectory() as directory:
            out = Path(directory) / "hung.h5"
            run_lockstep(out, SOURCE / "scenarios" / "war-stories" / "2_xid_hang.yaml")
            result = subprocess.run([sys.executable, str(SOURCE / "analysis" / "summarize.py"),
                                     str(out)], capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertIn("hang", lines[0])
        self.assertIn("faults:", lines)
        self.assertRegex(result.stdout, r"(?m)^ *xid +gpu 13 +1\.5 +NaN +GPU fell off the bus$")
        self.assertIn("blocked_ranks:", lines)
        self.assertIn("... 12 more", lines)  # 32 rows: 31 ranks blocked, 1 on the failed GPU


class NcclTestsFileMatchesSchemaDoc(FileMatchesSchemaDoc, unittest.TestCase):
    RUN_KIND = "nccl-tests"
    STRING_IN_A_TABLE = "nccl_tests"

    @staticmethod
    def make_run(directory):
        out = Path(directory) / "sweep.h5"
        run_nccl_tests(out, "-b", "1K", "-e", "1M", "-f", "32")
        return out

    def test_the_table_agrees_with_what_was_printed(self):
        results = la.load_table(self.path, "nccl_tests")
        self.assertEqual(list(results["bytes"]), [1024, 32768, 1048576])
        self.assertEqual(set(results["op"]), {"all_reduce"})
        self.assertEqual(set(results["ranks"]), {16})
        self.assertTrue((results["bus_factor"] == 2 * 15 / 16).all())
        self.assertTrue(results["time_ps"].is_monotonic_increasing)
        self.assertEqual(la.run_kind(self.path), "nccl-tests")

    def test_summarize_prints_a_line_per_size_with_bus_bandwidth(self):
        result = subprocess.run(["/usr/bin/python3", str(SOURCE / "analysis" / "summarize.py"),
                                 str(self.path)], capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertIn("busbw (GB/s)", lines[1])
        self.assertEqual(len(lines), 2 + 3)
        self.assertTrue(lines[-1].split()[0] == "all_reduce")


class FlowLevelFileMatchesSchemaDoc(FileMatchesSchemaDoc, unittest.TestCase):
    """The flow-level backend writes the same fabric tables, with the same columns."""

    RUN_KIND = "fabric"
    STRING_IN_A_TABLE = "messages"

    @staticmethod
    def make_run(directory):
        return fabric_run("victim_flow_level")


class FlowLevelVictimRun(unittest.TestCase):
    """The victim scenario on the flow-level backend: the packet run's paths and byte counts, the
    columns a fluid model has no use for at zero, and rates sampled over time."""

    @classmethod
    def setUpClass(cls):
        cls.path = fabric_run("victim_flow_level")
        cls.packet_path = fabric_run("victim")
        cls.messages = la.load_table(cls.path, "messages").sort_values("message")
        cls.totals = la.load_table(cls.path, "port_totals")
        cls.samples = la.load_table(cls.path, "port_samples")
        cls.rates = la.load_table(cls.path, "flow_samples")

    def test_every_message_takes_the_packet_runs_path(self):
        packet = la.load_table(self.packet_path, "messages").sort_values("message")
        self.assertEqual(list(self.messages["path"]), list(packet["path"]))

    def test_ports_count_the_same_wire_bytes_as_the_packet_run(self):
        packet = la.load_table(self.packet_path, "port_totals")
        key = ["node", "port", "traffic_class"]
        ours = self.totals.set_index(key)["bytes_sent"].sort_index()
        theirs = packet[packet["bytes_sent"] > 0].set_index(key)["bytes_sent"].sort_index()
        self.assertEqual(ours.to_dict(), theirs.to_dict())
        self.assertEqual(data_bytes_unaccounted(self.totals), {LEAF0: 0, LEAF1: 0, SPINE: 0})

    def test_queues_marks_pauses_and_drops_are_zero(self):
        for column in ["max_queue_bytes", "ecn_marked", "pauses_sent", "pauses_received",
                       "paused_ps", "dropped_packets", "dropped_bytes"]:
            self.assertEqual(int(self.totals[column].abs().sum()), 0, column)
        self.assertEqual(int(self.samples["queue_bytes"].abs().sum()), 0)

    def test_sampled_bytes_grow_and_rates_stay_within_the_host_link(self):
        self.assertGreater(len(self.samples), 0)
        for _, port in self.samples.groupby(["node", "port"]):
            self.assertTrue(port["bytes_sent"].is_monotonic_increasing)
        self.assertGreater(len(self.rates), 0)
        self.assertTrue((self.rates["rate_bps"] > 0).all())
        self.assertTrue((self.rates["rate_bps"] <= HOST_RATE_BPS).all())
        self.assertEqual(int(self.rates["cnps_received"].sum()), 0)


class FabricVictimRun(unittest.TestCase):
    """The victim scenario with PFC: records that agree with each other and with physics."""

    @classmethod
    def setUpClass(cls):
        cls.path = fabric_run("victim")
        cls.stdout = FABRIC_RUNS["victim"][1].stdout
        cls.flows = la.load_table(cls.path, "flows")
        cls.messages = la.load_table(cls.path, "messages")
        cls.totals = la.load_table(cls.path, "port_totals")
        cls.samples = la.load_table(cls.path, "port_samples")
        cls.meta = la.meta(cls.path)

    def total(self, node, port, column):
        rows = self.totals[(self.totals["node"] == node) & (self.totals["port"] == port)]
        return int(rows[column].sum())

    def test_the_scenario_uses_the_transport_defaults_these_tests_assume(self):
        self.assertRegex(self.meta["scenario"], r"(?m)^    payload: 1KB$")
        self.assertRegex(self.meta["scenario"], r"(?m)^    header: 62B$")
        self.assertRegex(self.meta["scenario"], r"(?m)^    traffic_class: 3$")
        self.assertEqual(la.sample_period_ps(self.path), VICTIM_PERIOD_PS)

    def test_tables_lists_the_fabric_tables_and_run_kind_says_fabric(self):
        self.assertEqual(la.tables(self.path),
                         ["failed_flows", "flow_samples", "flows", "messages", "port_samples",
                          "port_totals", "ports", "queue_pairs"])
        self.assertEqual(la.run_kind(self.path), "fabric")
        with self.assertRaisesRegex(KeyError, "flow_samples, flows, messages"):
            la.load_table(self.path, "steps")

    def test_ports_list_every_cable_from_both_ends(self):
        ports = la.load_table(self.path, "ports")
        # victim.yaml: 2 leaves x 5 hosts and one spine with one uplink per leaf: 12 cables.
        self.assertEqual(len(ports), 2 * 12)
        for row in ports.itertuples():
            back = ports[(ports.node == row.peer) & (ports.port == row.peer_port)]
            self.assertEqual(len(back), 1, row)
            self.assertEqual((int(back.peer.iloc[0]), int(back.peer_port.iloc[0])),
                             (row.node, row.port))
        uplinks = ports[(ports.node >= 10) & (ports.peer >= 10)]
        self.assertEqual(set(uplinks.rate_bps), {400 * 10**9})
        self.assertEqual(set(ports.delay_ps), {10**6})

    def test_every_flow_of_the_scenario_completed_once(self):
        flows = self.flows
        self.assertEqual(sorted(flows["flow"]), list(range(len(VICTIM_FLOWS))))
        for row in flows.itertuples():
            self.assertEqual((row.source, row.destination), VICTIM_FLOWS[row.flow], row)
        self.assertTrue((flows["bytes"] == FLOW_BYTES).all())
        self.assertTrue((flows["queue_pair"] == 0).all())
        self.assertTrue((flows["start_ps"] == 0).all())
        # In completion order.
        self.assertTrue(flows["acknowledged_ps"].is_monotonic_increasing)
        self.assertEqual(self.meta["outcome"], "completed")
        self.assertEqual(self.meta["end_ps"], int(flows["acknowledged_ps"].max()))
        self.assertIn(f"lockstep: {len(VICTIM_FLOWS)} of {len(VICTIM_FLOWS)} flows completed",
                      self.stdout)

    def test_flow_times_are_in_order_and_fct_is_acknowledged_minus_start(self):
        f = self.flows
        self.assertTrue((f["fct_ps"] == f["acknowledged_ps"] - f["start_ps"]).all())
        self.assertTrue((f["acknowledged_ps"] >= f["delivered_ps"]).all())
        self.assertTrue((f["delivered_ps"] >= f["first_sent_ps"]).all())
        self.assertTrue((f["first_sent_ps"] >= f["start_ps"]).all())
        self.assertTrue((f["start_ps"] >= 0).all())
        # The acknowledgement travels back over the path: it cannot arrive with the data.
        self.assertTrue((f["acknowledged_ps"] > f["delivered_ps"]).all())

    def test_no_flow_beats_the_line_rate_and_the_speed_of_light(self):
        joined = self.flows.merge(self.messages[["message", "hops"]], on="message", validate="1:1")
        for row in joined.itertuples():
            self.assertGreaterEqual(row.fct_ps, fct_lower_bound_ps(row.bytes, row.hops),
                                    f"flow {row.flow}")
            self.assertGreaterEqual(row.delivered_ps - row.first_sent_ps,
                                    serialization_ps(row.bytes) + row.hops * LINK_DELAY_PS,
                                    f"flow {row.flow}")
        # The three incast flows share leaf 1's 100 Gbps port to host 5: the last one cannot be
        # delivered before that port has sent all three.
        incast = joined[joined["destination"] == 5]
        self.assertGreaterEqual(int(incast["delivered_ps"].max()), 3 * serialization_ps(FLOW_BYTES))

    def test_messages_and_flows_describe_the_same_transfers(self):
        m, f = self.messages, self.flows
        self.assertFalse(m["message"].duplicated().any())
        self.assertEqual(int(m["bytes"].sum()), int(f["bytes"].sum()))
        joined = f.merge(m, on="message", suffixes=("", "_m"), validate="1:1")
        self.assertEqual(len(joined), len(f))
        for column in ["source", "destination", "bytes", "first_sent_ps", "delivered_ps",
                       "acknowledged_ps"]:
            self.assertTrue((joined[column] == joined[column + "_m"]).all(), column)
        self.assertTrue((joined["start_ps"] == joined["submitted_ps"]).all())

    def test_each_path_runs_from_source_to_destination_through_switches(self):
        for row in self.messages.itertuples():
            self.assertIs(type(row.path), str)
            nodes = [int(n) for n in row.path.split(">")]
            self.assertEqual(nodes[0], row.source, row.path)
            self.assertEqual(nodes[-1], row.destination, row.path)
            self.assertEqual(row.hops, row.path.count(">"), row.path)
            self.assertEqual(len(set(nodes)), len(nodes), f"{row.path} revisits a node")
            self.assertTrue(all(n >= HOSTS for n in nodes[1:-1]), f"{row.path}: not via switches")
            # Host to leaf to spine to leaf to host.
            self.assertEqual(nodes, [row.source, edge_port(row.source)[0], SPINE,
                                     edge_port(row.destination)[0], row.destination])

    def test_port_totals_have_one_row_per_port_and_class_and_count_whole_packets(self):
        t = self.totals
        self.assertFalse(t.duplicated(["node", "port", "traffic_class"]).any())
        self.assertEqual(set(t["traffic_class"]), {DATA_CLASS})
        self.assertTrue(set(zip(t["node"], t["port"])) <= set(victim_wiring()), "unknown ports")
        # Every data packet of 2 MB flows is a full one: payload plus header.
        self.assertTrue((t["bytes_sent"] == t["packets_sent"] * WIRE).all())
        self.assertTrue((t["ecn_marked"] <= t["packets_sent"]).all())
        self.assertTrue((t.loc[t["node"] < HOSTS, "ecn_marked"] == 0).all(), "a NIC marked ECN")
        self.assertTrue((t["max_queue_bytes"] <= 32_000_000).all(), "a queue beyond the buffer")
        self.assertTrue((t.loc[t["bytes_sent"] > 0, "max_queue_bytes"] >= WIRE).all())
        self.assertTrue((t["dropped_packets"] == 0).all(), "PFC must not drop")

    def test_each_receiving_nics_leaf_port_carried_what_was_sent_to_it(self):
        for destination, group in self.flows.groupby("destination"):
            switch, port = edge_port(destination)
            payload = int(group["bytes"].sum())
            sent = self.total(switch, port, "bytes_sent")
            self.assertGreaterEqual(sent, payload, f"to host {destination}")
            # Lossless: every packet once, none resent.
            self.assertEqual(sent, packets_of(payload) * WIRE, f"to host {destination}")
        for source, group in self.flows.groupby("source"):
            self.assertEqual(self.total(source, 0, "bytes_sent"),
                             packets_of(int(group["bytes"].sum())) * WIRE, f"host {source}")

    def test_every_switch_sends_on_every_data_byte_it_receives(self):
        self.assertEqual(data_bytes_unaccounted(self.totals), {LEAF0: 0, LEAF1: 0, SPINE: 0})

    def test_pfc_paused_the_spine_for_the_incast_and_the_victim_paid(self):
        t = self.totals
        self.assertGreater(int(t["pauses_sent"].sum()), 0)
        # Leaf 1 receives the incast through its uplink and pauses the spine's port to it.
        self.assertGreater(self.total(LEAF1, UPLINK_PORT, "pauses_sent"), 0)
        self.assertGreater(self.total(SPINE, 1, "paused_ps"), 0)
        self.assertTrue((t.loc[t["node"] < HOSTS, "pauses_sent"] == 0).all(), "a NIC sent pauses")
        wiring = victim_wiring()
        for row in t.itertuples():
            # A frame is received at the far end of the link it was sent on (or is still on it).
            peer_sent = self.total(*wiring[(row.node, row.port)], "pauses_sent")
            self.assertLessEqual(row.pauses_received, peer_sent, f"{row.node}:{row.port}")
            self.assertEqual(row.paused_ps > 0, row.pauses_received > 0, f"{row.node}:{row.port}")
            self.assertLessEqual(row.paused_ps, self.meta["end_ps"])
        victim = self.flows[self.flows["flow"] == VICTIM_FLOW].iloc[0]
        alone = fct_lower_bound_ps(FLOW_BYTES, 4)
        self.assertGreater(victim["fct_ps"], alone * 1.2, "head-of-line blocking did not show")

    def test_port_samples_are_cumulative_counters_at_multiples_of_the_period(self):
        s = self.samples
        self.assertGreater(len(s), 0)
        self.assertTrue((s["time_ps"] % VICTIM_PERIOD_PS == 0).all())
        self.assertGreaterEqual(int(s["time_ps"].min()), VICTIM_PERIOD_PS)
        self.assertLessEqual(int(s["time_ps"].max()), self.meta["end_ps"])
        self.assertFalse(s.duplicated(["time_ps", "node", "port", "traffic_class"]).any())
        self.assertTrue((s["paused_ps"] <= s["time_ps"]).all())
        counters = ["bytes_sent", "ecn_marked", "pauses_sent", "pauses_received", "paused_ps",
                    "dropped_packets"]
        moved = counters
        totals = self.totals.set_index(["node", "port", "traffic_class"])
        for key, group in s.sort_values("time_ps").groupby(["node", "port", "traffic_class"]):
            with self.subTest(port=key):
                for column in counters:
                    self.assertTrue(group[column].is_monotonic_increasing, column)
                    self.assertLessEqual(int(group[column].iloc[-1]), int(totals.loc[key, column]))
                self.assertLessEqual(int(group["queue_bytes"].max()),
                                     int(totals.loc[key, "max_queue_bytes"]))
                # A row is written only for a non-empty queue or counters that moved (a paused
                # port's paused time moves), and for every sample at which paused time grew: no
                # row holds more of it than one period's.
                previous = group[moved].shift(fill_value=0)
                changed = (group[moved] != previous).any(axis=1)
                self.assertTrue(((group["queue_bytes"] > 0) | changed).all())
                self.assertLessEqual(int(group["paused_ps"].diff().max(skipna=True) or 0),
                                     VICTIM_PERIOD_PS)

    def test_no_port_sends_faster_than_its_link_between_samples(self):
        for row in self.totals.itertuples():
            uplink = row.node == SPINE or (row.node >= HOSTS and row.port == UPLINK_PORT)
            rate = UPLINK_RATE_BPS if uplink else HOST_RATE_BPS
            series = la.port_timeseries(self.path, row.node, row.port, row.traffic_class)
            sent = series["bytes_sent"].diff().fillna(series["bytes_sent"])
            # A period can hold the ends of one more packet than fit in it.
            limit = rate * VICTIM_PERIOD_PS // (8 * 10**12) + WIRE
            self.assertLessEqual(int(sent.max()), limit, f"{row.node}:{row.port}")


class FabricVictimWithoutPfc(unittest.TestCase):
    """The victim scenario with no lossless class: drops and resends instead of pauses."""

    @classmethod
    def setUpClass(cls):
        cls.path = fabric_run("victim_lossy")
        cls.totals = la.load_table(cls.path, "port_totals")
        cls.flows = la.load_table(cls.path, "flows")

    def test_no_pause_frames_and_no_paused_time(self):
        for column in ["pauses_sent", "pauses_received", "paused_ps"]:
            self.assertTrue((self.totals[column] == 0).all(), column)
        self.assertTrue((la.load_table(self.path, "port_samples")["paused_ps"] == 0).all())

    def test_the_incast_bottleneck_drops_and_the_senders_resend(self):
        t = self.totals
        self.assertGreater(int(t["dropped_packets"].sum()), 0)
        dropping = t[t["dropped_packets"] > 0]
        self.assertEqual(list(zip(dropping["node"], dropping["port"])), [edge_port(5)])
        self.assertTrue((t["dropped_bytes"] == t["dropped_packets"] * WIRE).all())
        # Go-back-N resends at least what was dropped, from the incast's senders only.
        nic = t[t["node"] < HOSTS].set_index("node")
        resent = int(nic["bytes_sent"].sum()) - len(VICTIM_FLOWS) * packets_of(FLOW_BYTES) * WIRE
        self.assertGreaterEqual(resent, int(t["dropped_bytes"].sum()))
        self.assertEqual(int(nic.loc[3, "bytes_sent"]), packets_of(FLOW_BYTES) * WIRE)
        # And everything still arrives, once: the leaf port to host 5 carried each packet once.
        switch, port = edge_port(5)
        row = t[(t["node"] == switch) & (t["port"] == port)].iloc[0]
        self.assertEqual(row["bytes_sent"], 3 * packets_of(FLOW_BYTES) * WIRE)

    def test_every_flow_still_completes_and_the_victim_is_faster_than_with_pfc(self):
        self.assertEqual(sorted(self.flows["flow"]), list(range(len(VICTIM_FLOWS))))
        self.assertTrue((self.flows["fct_ps"] == self.flows["acknowledged_ps"]
                         - self.flows["start_ps"]).all())
        with_pfc = la.load_table(fabric_run("victim"), "flows")
        victim_fct = {name: int(df.loc[df["flow"] == VICTIM_FLOW, "fct_ps"].iloc[0])
                      for name, df in [("lossy", self.flows), ("pfc", with_pfc)]}
        self.assertLess(victim_fct["lossy"], victim_fct["pfc"])

    def test_every_switch_sends_on_or_drops_every_data_byte_it_receives(self):
        self.assertEqual(data_bytes_unaccounted(self.totals), {LEAF0: 0, LEAF1: 0, SPINE: 0})


class FabricRunsThatStopEarlyOrDoNotSample(unittest.TestCase):
    def test_without_sample_period_the_sample_tables_exist_with_no_rows(self):
        path = fabric_run("victim_unsampled")
        self.assertEqual(la.tables(path), la.tables(fabric_run("victim")))
        self.assertEqual(len(la.load_table(path, "port_samples")), 0)
        self.assertEqual(len(la.load_table(path, "flow_samples")), 0)
        with self.assertRaisesRegex(ValueError, "sample_period"):
            la.port_timeseries(path, LEAF1, 0)

    def test_sampling_only_observes(self):
        sampled, unsampled = fabric_run("victim"), fabric_run("victim_unsampled")
        for table in ["flows", "messages", "port_totals"]:
            with self.subTest(table=table):
                pd.testing.assert_frame_equal(la.load_table(sampled, table),
                                              la.load_table(unsampled, table))
        self.assertEqual(la.meta(sampled)["end_ps"], la.meta(unsampled)["end_ps"])

    def test_until_stops_before_any_flow_completes(self):
        path = fabric_run("victim_until")
        info = la.meta(path)
        self.assertEqual(info["outcome"], "reached_until")
        self.assertEqual(info["end_ps"], 100_000_000)
        self.assertEqual(len(la.load_table(path, "flows")), 0)
        self.assertEqual(len(la.load_table(path, "messages")), 0)
        self.assertGreater(len(la.load_table(path, "port_totals")), 0)
        samples = la.load_table(path, "port_samples")
        self.assertEqual(int(samples["time_ps"].max()), 100_000_000)
        summary = la.flow_completion_summary(path)
        self.assertEqual(summary["count"], 0)
        self.assertIsNone(summary["median_ps"])
        self.assertIn("lockstep: 0 of 4 flows completed", FABRIC_RUNS["victim_until"][1].stdout)


class FabricIncastFlowSamples(unittest.TestCase):
    """DCQCN's record over time, from the incast scenario (the victim runs without DCQCN)."""

    @classmethod
    def setUpClass(cls):
        cls.path = fabric_run("incast")
        cls.samples = la.load_table(cls.path, "flow_samples")
        cls.messages = la.load_table(cls.path, "messages")

    def test_samples_are_at_multiples_of_the_period_for_known_queue_pairs(self):
        s = self.samples
        self.assertGreater(len(s), 0)
        self.assertEqual(la.sample_period_ps(self.path), INCAST_PERIOD_PS)
        self.assertTrue((s["time_ps"] % INCAST_PERIOD_PS == 0).all())
        self.assertFalse(s.duplicated(["time_ps", "flow"]).any())
        self.assertEqual(set(s["flow"]), set(self.messages["flow"]))
        self.assertEqual(len(self.messages), INCAST_FLOWS)

    def test_a_queue_pair_is_sampled_until_its_message_is_acknowledged(self):
        done = self.messages.set_index("flow")["acknowledged_ps"]
        for flow, group in self.samples.groupby("flow"):
            acknowledged = int(done[flow])
            self.assertLessEqual(int(group["time_ps"].max()), acknowledged, f"flow {flow}")
            # Every period from the first up to the acknowledgement.
            self.assertIn(len(group), {(acknowledged - 1) // INCAST_PERIOD_PS,
                                       acknowledged // INCAST_PERIOD_PS}, f"flow {flow}")

    def test_rates_stay_within_the_link_and_dcqcn_reacted_to_the_incast(self):
        s = self.samples
        self.assertTrue((s["rate_bps"] > 0).all())
        self.assertTrue((s["rate_bps"] <= HOST_RATE_BPS).all())
        self.assertLess(int(s["rate_bps"].min()), HOST_RATE_BPS // 10, "DCQCN never cut a rate")
        for flow, group in s.sort_values("time_ps").groupby("flow"):
            self.assertTrue(group["cnps_received"].is_monotonic_increasing, f"flow {flow}")
        self.assertGreater(int(s["cnps_received"].max()), 0)
        self.assertGreater(int(la.load_table(self.path, "port_totals")["ecn_marked"].sum()), 0)


class FabricHelpers(unittest.TestCase):
    def test_flow_completion_summary_is_exact_and_nearest_rank(self):
        path = fabric_run("victim")
        fcts = sorted(int(v) for v in la.load_table(path, "flows")["fct_ps"])
        summary = la.flow_completion_summary(path)
        self.assertEqual(summary["count"], 4)
        self.assertEqual(summary["min_ps"], fcts[0])
        self.assertEqual(summary["median_ps"], fcts[1], "nearest rank: the lower middle of 4")
        self.assertEqual(summary["p99_ps"], fcts[3])
        self.assertEqual(summary["max_ps"], fcts[3])
        self.assertEqual(summary["median_s"], fcts[1] / 1e12)
        for name in ["min_ps", "median_ps", "p99_ps", "max_ps", "count"]:
            self.assertIs(type(summary[name]), int, name)

    def test_flow_completion_summary_agrees_with_what_lockstep_run_prints(self):
        for name in ["victim", "incast"]:
            path, process = FABRIC_RUNS[name]
            line = re.search(r"(?m)^lockstep: flow completion: min (\S+), median (\S+), p99 (\S+), "
                             r"max (\S+)$", process.stdout)
            self.assertIsNotNone(line, process.stdout)
            summary = la.flow_completion_summary(path)
            for printed, key in zip(line.groups(), ["min_ps", "median_ps", "p99_ps", "max_ps"]):
                # Printed with four significant digits.
                self.assertAlmostEqual(la.duration_ps(printed) / summary[key], 1, delta=5e-4,
                                       msg=f"{name} {key}: printed {printed}")

    def test_port_timeseries_fills_the_gaps_of_port_samples(self):
        path = fabric_run("victim")
        end = la.meta(path)["end_ps"]
        samples = la.load_table(path, "port_samples")
        for node, port in [(SPINE, 1), (LEAF1, UPLINK_PORT), (LEAF1, 0), (0, 0)]:
            with self.subTest(node=node, port=port):
                series = la.port_timeseries(path, node, port, DATA_CLASS)
                self.assertEqual(list(series["time_ps"]),
                                 list(range(VICTIM_PERIOD_PS, end + 1, VICTIM_PERIOD_PS)))
                mine = samples[(samples["node"] == node) & (samples["port"] == port)]
                self.assertGreater(len(mine), 0)
                self.assertEqual(len(mine) < len(series), (node, port) != (LEAF1, 0),
                                 "only leaf 1's port to host 5 queues from start to end")
                indexed = series.set_index("time_ps")
                for row in mine.itertuples():
                    self.assertEqual(indexed.loc[row.time_ps, "bytes_sent"], row.bytes_sent)
                    self.assertEqual(indexed.loc[row.time_ps, "queue_bytes"], row.queue_bytes)
                gaps = ~series["time_ps"].isin(mine["time_ps"])
                self.assertTrue((series.loc[gaps, "queue_bytes"] == 0).all())
                # A gap repeats the counters of the sample before it.
                before = series["bytes_sent"].shift(fill_value=0)
                self.assertTrue((series.loc[gaps, "bytes_sent"] == before[gaps]).all())
                sent = series["sent_bps"] * VICTIM_PERIOD_PS / 8 / 1e12
                self.assertAlmostEqual(sent.sum(), series["bytes_sent"].iloc[-1], delta=1)
                self.assertTrue(series["paused_fraction"].between(0, 1).all())
                self.assertIn("time_s", series.columns)
        spine = la.port_timeseries(path, SPINE, 1)
        self.assertGreater(spine["paused_fraction"].max(), 0)
        totals = la.load_table(path, "port_totals")
        spine_total = totals[(totals["node"] == SPINE) & (totals["port"] == 1)].iloc[0]
        self.assertEqual(spine["pauses_received"].iloc[-1], spine_total["pauses_received"])

    def test_port_timeseries_of_a_port_that_never_moved_is_zeros(self):
        series = la.port_timeseries(fabric_run("victim"), LEAF0, 4)  # host 4 sent nothing
        self.assertGreater(len(series), 0)
        self.assertTrue((series.drop(columns=["time_ps", "time_s"]) == 0).all().all())

    def test_port_timeseries_of_a_port_the_network_lacks_is_an_error(self):
        with self.assertRaisesRegex(ValueError, "no port 9 on node 999"):
            la.port_timeseries(fabric_run("victim"), 999, 9)

    def test_flow_paths_adds_each_flows_route_and_network_id(self):
        path = fabric_run("victim")
        paths = la.flow_paths(path)
        flows = la.load_table(path, "flows")
        self.assertEqual(list(paths["flow"]), list(flows["flow"]))
        self.assertEqual(list(paths.columns),
                         list(flows.columns) + ["network_flow", "hops", "path"])
        messages = la.load_table(path, "messages").set_index("message")
        for row in paths.itertuples():
            self.assertEqual(row.network_flow, messages.loc[row.message, "flow"])
            self.assertTrue(row.path.startswith(f"{row.source}>"))

    def test_flow_paths_joins_through_message_when_the_three_ids_differ(self):
        path = fabric_run("queue_pairs")
        paths = la.flow_paths(path).set_index("flow")
        # Completion order: the third flow (short) first, then the first, then the one after it.
        self.assertEqual(list(la.load_table(path, "flows")["flow"]), [2, 0, 1])
        self.assertEqual(list(paths.loc[[0, 1, 2], "message"]), [0, 2, 1])  # in order sent
        self.assertEqual(list(paths.loc[[0, 1, 2], "network_flow"]), [0, 0, 1])  # first use
        self.assertEqual(list(paths.loc[[0, 1, 2], "bytes"]), [100_000, 50_000, 10_000])
        # "after" starts a flow at its predecessor's acknowledgement plus its own start.
        self.assertEqual(paths.loc[1, "start_ps"], paths.loc[0, "acknowledged_ps"] + 2_000_000)
        self.assertEqual(paths.loc[2, "start_ps"], 5_000_000)
        self.assertTrue((paths["fct_ps"] == paths["acknowledged_ps"] - paths["start_ps"]).all())
        for flow, row in paths.iterrows():
            self.assertGreaterEqual(row["fct_ps"], fct_lower_bound_ps(row["bytes"], row["hops"]),
                                    f"flow {flow}")

    def test_summarize_prints_flows_and_the_deepest_queues_of_a_fabric_run(self):
        script = SOURCE / "analysis" / "summarize.py"
        result = subprocess.run([sys.executable, str(script), str(fabric_run("victim"))],
                                capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertIn("completed, 4 flow(s) completed", lines[0])
        fct = la.flow_completion_summary(fabric_run("victim"))
        self.assertEqual(lines[1], "flow completion time (s): " + ", ".join(
            f"{name} {fct[name + '_ps'] / 1e12:.9f}" for name in ["min", "median", "p99", "max"]))
        pauses = int(la.load_table(fabric_run("victim"), "port_totals")["pauses_sent"].sum())
        self.assertIn(f"; {pauses} pause frame(s) sent", lines[2])
        self.assertTrue(lines[3].startswith("deepest queues"))
        self.assertIn("max queue (bytes)", lines[4])
        # The incast's bottleneck, leaf 1's port to host 5, queued most.
        self.assertEqual(lines[5].split()[:3], [str(LEAF1), "0", str(DATA_CLASS)])
        self.assertEqual(len(lines), 5 + 5)

    def test_summarize_of_a_run_stopped_before_any_flow_completed(self):
        script = SOURCE / "analysis" / "summarize.py"
        result = subprocess.run([sys.executable, str(script), str(fabric_run("victim_until"))],
                                capture_output=True, text=True, timeout=30)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("reached_until, 0 flow(s) completed", result.stdout.splitlines()[0])
        self.assertNotIn("flow completion", result.stdout)

    def test_first_sent_is_the_first_transmission_even_when_the_first_packet_is_resent(self):
        """A message whose first packet left at t = 0 and was resent keeps t = 0 as its first send."""
        with tempfile.TemporaryDirectory() as directory:
            out = Path(directory) / "resent.h5"
            # One 3-packet flow and the shortest QP timeout, 8.192 us: shorter than the round trip
            # over 2 us cables (over 16 us), so it resends.
            run_lockstep(out, VICTIM, "--set", "network.transport.qp_timeout=1",
                         "--set", "network.topology.link_delay=2us",
                         "--set", "traffic.flows=[{source: 0, destination: 5, size: 3KB}]")
            self.assertGreater(int(la.load_table(out, "port_totals").query("node == 0")
                                   ["packets_sent"].iloc[0]), 3, "nothing was resent")
            self.assertEqual(int(la.load_table(out, "messages")["first_sent_ps"].iloc[0]), 0)


class NearestRankPercentile(unittest.TestCase):
    def test_the_rank_is_ceil_of_p_n_over_100(self):
        values = [40, 10, 30, 20]
        self.assertEqual(la.nearest_rank_percentile(values, 50), 20)
        self.assertEqual(la.nearest_rank_percentile(values, 25), 10)
        self.assertEqual(la.nearest_rank_percentile(values, 26), 20)
        self.assertEqual(la.nearest_rank_percentile(values, 99), 40)
        self.assertEqual(la.nearest_rank_percentile(values, 100), 40)
        self.assertEqual(la.nearest_rank_percentile(range(1, 201), 99), 198)
        self.assertEqual(la.nearest_rank_percentile([7], 1), 7)
        # Exact on picoseconds beyond float precision.
        big = 2**62 + 1
        self.assertEqual(la.nearest_rank_percentile([big, big + 2], 100), big + 2)

    def test_bad_arguments_raise(self):
        for percent in [0, 101, 99.9, -5]:
            with self.assertRaises(ValueError, msg=str(percent)):
                la.nearest_rank_percentile([1, 2], percent)
        with self.assertRaises(ValueError):
            la.nearest_rank_percentile([], 50)


class DurationPs(unittest.TestCase):
    def test_scenario_durations_convert_exactly(self):
        self.assertEqual(la.duration_ps("10us"), 10_000_000)
        self.assertEqual(la.duration_ps("1.5us"), 1_500_000)
        self.assertEqual(la.duration_ps("0ps"), 0)
        self.assertEqual(la.duration_ps("517.7us"), 517_700_000)
        self.assertEqual(la.duration_ps("2min"), 120 * 10**12)
        self.assertEqual(la.duration_ps("1h"), 3600 * 10**12)

    def test_no_unit_a_fraction_of_a_picosecond_or_an_unknown_unit_raise(self):
        for text in ["400", "1.5ps", "10 parsecs", "", "-1us"]:
            with self.assertRaises(ValueError, msg=text):
                la.duration_ps(text)


if __name__ == "__main__":
    unittest.main()
