"""`lockstep trace` (analysis/trace.py): a run's HDF5 file as a Perfetto timeline, read back with
the decoder of lockstep_analysis.perfetto (which links flows as Perfetto's trace processor does)
and checked against the file's own tables.

The run is war story 6 made small: 16 ranks (TP=4, CP=2, DP=2: communicator groups of all three
kinds) on two servers of a packet-level leaf-spine with PFC, both steps' ops recorded for every
rank, a PFC storm from NIC 24 cut short by the NIC's watchdog (a defence) and GPU 3 throttled (a
second fault). War story 5 made small has a pipeline and a restart that moves a server's ranks to
the spare; a hung job (war story 2) shows the blocked ranks, and a wide analytic job the default cap
on ranks. Needs LOCKSTEP_BIN, LOCKSTEP_SOURCE_DIR and analysis/ on PYTHONPATH, as
tests/python/test_cli.py; LOCKSTEP_SANITIZED=1 only gives the runs more time.
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest
from collections import Counter
from pathlib import Path

import h5py

import lockstep_analysis as la
from lockstep_analysis import perfetto as pf
from lockstep_analysis.fabric_names import FabricNames

BIN = os.environ["LOCKSTEP_BIN"]
SOURCE = Path(os.environ["LOCKSTEP_SOURCE_DIR"])
TRACE = SOURCE / "analysis" / "trace.py"
TIMEOUT = 300 if os.environ.get("LOCKSTEP_SANITIZED") in ("1", "ON", "TRUE", "true") else 100
STORIES = SOURCE / "scenarios" / "war-stories"

FAULTED = [STORIES / "6_pfc_storm.yaml", "--set", "job.steps=2", "--set", "job.record_ops.steps=2",
           "--set", "faults=[{kind: pfc_storm, nic: 24, at: 5ms, duration: 40ms},"
                    " {kind: thermal, gpu: 3, at: 2ms, clock: 70%}]",
           "--set", "defences.nic_pfc_watchdog.enabled=true",
           "--set", "defences.nic_pfc_watchdog.after=10ms",
           "--set", "traffic.flows=[{source: 32, destination: 24, size: 40MB},"
                    " {source: 33, destination: 24, size: 40MB}]",
           "--set", "job.parallelism.tensor=4", "--set", "job.parallelism.context=2"]
# Stages 0-2 of one pipeline (tensor ranks 0-7 of data-parallel replica 1): stage 1, ranks 72-79,
# ran on server 9, which the straggler detector drains.
PIPELINE, PIPELINE_RANKS = "8-15,72-79,136-143", {*range(8, 16), *range(72, 80), *range(136, 144)}
RESTARTED = [STORIES / "5_one_slow_gpu.yaml", "--set", "job.model.layers=8",
             "--set", "job.global_batch=32", "--set", "job.steps=8",
             "--set", "faults=[{kind: thermal, gpu: 77, step: 1, clock: 70%}]",
             "--set", f"job.record_ops.ranks=[{', '.join(map(str, sorted(PIPELINE_RANKS)))}]"]
HUNG = [STORIES / "2_xid_hang.yaml", "--set", "faults=[{kind: xid, gpu: 13, at: 500ms}]"]
WIDE = ["--set", "network.model=analytic", "--set", "job.model.layers=4",
        "--set", "job.global_batch=8", "--set", "job.steps=1", "--set", "job.record_ops.ranks=[]"]
PS_PER_NS = 1000
COUNTED = ["ecn_marked", "pauses_received", "pauses_sent", "dropped_packets"]


def run_lockstep(out, *args):
    result = subprocess.run([BIN, "run", *map(str, args), "-o", str(out), "--quiet"],
                            capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    return out


def export(run, out, *args):
    """`lockstep trace` as the program runs it: Debian's python on analysis/trace.py."""
    return subprocess.run([sys.executable, str(TRACE), str(run), "-o", str(out), *map(str, args)],
                          capture_output=True, text=True, timeout=TIMEOUT)


class Trace:
    """A written trace decoded: its packets, tracks, slices, instants, counter values and flow
    arrows, with the server of each server track, the rank and GPU of each rank track and the
    rank and stream of each stream track."""

    def __init__(self, path):
        self.packets = pf.read_packets(Path(path).read_bytes())
        self.tracks, self.slices, self.instants, self.counters, self.arrows = pf.timeline(
            self.packets)
        self.roots = {t["name"]: uuid for uuid, t in self.tracks.items() if t["parent"] is None}
        self.server_of = {uuid: int(re.fullmatch(r"server (\d+)", t["name"])[1])
                          for uuid, t in self.tracks.items()
                          if t["parent"] == self.roots.get("servers")}
        self.rank_of, self.gpu_of = {}, {}
        for uuid, t in self.tracks.items():
            if t["parent"] in self.server_of:
                rank, gpu = re.match(r"rank (\d+) on GPU (\d+)", t["name"]).groups()
                self.rank_of[uuid], self.gpu_of[uuid] = int(rank), int(gpu)
        self.stream_of = {uuid: (self.rank_of[t["parent"]], t["name"])
                          for uuid, t in self.tracks.items() if t["parent"] in self.rank_of}

    def children(self, parent):
        return {t["name"]: uuid for uuid, t in self.tracks.items() if t["parent"] == parent}

    def placed(self):
        """(rank, GPU, server) of every rank track."""
        return {(rank, self.gpu_of[uuid], self.server_of[self.tracks[uuid]["parent"]])
                for uuid, rank in self.rank_of.items()}

    def rank_track(self, item):
        """The rank track a slice is on, or whose stream it is on."""
        track = item["track"]
        return self.tracks[track]["parent"] if track in self.stream_of else track

    def on(self, kind, items):
        """Slices or instants on stream tracks (kind "stream") or rank tracks (kind "rank")."""
        where = self.stream_of if kind == "stream" else self.rank_of
        return [item for item in items if item["track"] in where]

    def ops(self):
        """The op slices: on stream tracks, not nested, not what a rank was blocked in."""
        return [s for s in self.on("stream", self.slices)
                if s["depth"] == 0 and s["categories"] != ["blocked"]]

    def op_slices(self):
        """(rank, stream, name, kind, begin, end, step, attempt, micro_batch, layer, stage, bytes,
        flops, communicator) of every op slice, arguments left out read as the file writes them."""
        return Counter(self._op(s) for s in self.ops())

    def _op(self, item):
        args = item["args"]
        return (*self.stream_of[item["track"]], item["name"], item["categories"][0],
                item["begin"], item["end"], args["step"], args.get("attempt", 0),
                args.get("micro_batch", -1), args.get("layer", -1), args["stage"],
                args.get("bytes", 0), args.get("flops", 0), args.get("communicator", ""))

    def waits(self):
        """(rank, stream, name, begin, end, and the kind and begin of the slice it nests in) of
        every nested slice on a stream track."""
        nested = [(s, self.slices[s["parent"]]) for s in self.on("stream", self.slices)
                  if s["depth"]]
        return Counter((*self.stream_of[s["track"]], s["name"], s["begin"], s["end"],
                        parent["categories"][0], parent["begin"]) for s, parent in nested)

    def flows(self):
        """Per flow id, the (rank, kind, name, begin, end) of the slices it links, in the order of
        its arrows; a flow whose arrows do not make one path is an error."""
        paths = {}
        for flow, source, destination in self.arrows:
            path = paths.setdefault(flow, [source])
            if path[-1] != source:
                raise AssertionError(f"flow {flow} branches at slice {source}")
            path.append(destination)
        return {flow: [self._key(self.slices[i]) for i in path] for flow, path in paths.items()}

    def _key(self, item):
        return op_key(self.stream_of[item["track"]][0], item["categories"][0], item["name"],
                      item["begin"], item["end"])


def op_key(rank, kind, name, begin, end):
    return (int(rank), kind, name, int(begin), int(end))


def expected_ops(ops):
    rows = ops[ops["kind"] != "marker"]
    return Counter(zip(rows["rank"], rows["stream"], rows["name"], rows["kind"],
                       rows["start_ps"] // PS_PER_NS, rows["end_ps"] // PS_PER_NS, rows["step"],
                       rows["attempt"], rows["micro_batch"], rows["layer"], rows["stage"],
                       rows["bytes"], rows["flops"], rows["communicator"]))


def slice_keys(ops):
    return [op_key(*row) for row in zip(ops["rank"], ops["kind"], ops["name"],
                                        ops["start_ps"] // PS_PER_NS, ops["end_ps"] // PS_PER_NS)]


def expected_collectives(ops, ranks):
    """Each collective with two or more members among `ranks`, as the set of its members' slices:
    the ops that share an attempt, communicator, group and sequence."""
    ops = ops[(ops["kind"] == "collective") & ops["rank"].isin(ranks)]
    instances = ops.assign(key=slice_keys(ops)).groupby(
        ["attempt", "communicator", "group", "sequence"])["key"].agg(frozenset)
    return {members for members in instances if len(members) >= 2}


def expected_transfers(ops, ranks):
    """(send, receive) slices of each pipeline transfer with both ends among `ranks`."""
    ops = ops[ops["rank"].isin(ranks)]
    ops = ops.assign(key=slice_keys(ops))
    sends, receives = (ops[ops["kind"] == kind] for kind in ("send", "recv"))
    pairs = sends.merge(receives, on=["attempt", "communicator", "group", "sequence"],
                        suffixes=("_send", "_recv"))
    return set(zip(pairs["key_send"], pairs["key_recv"]))


def expected_waits(ops):
    """A wait opening each op that waited: [start, start + waited] in its op."""
    waited = ops[ops["waited_ps"] > 0]
    names = waited["kind"].map({"collective": "waiting for peers", "recv": "waiting for sender"})
    begin = waited["start_ps"] // PS_PER_NS
    return Counter(zip(waited["rank"], waited["stream"], names, begin,
                       (waited["start_ps"] + waited["waited_ps"]) // PS_PER_NS, waited["kind"],
                       begin))


def expected_counters(samples, period_ps, end_ps):
    """Per congested (node, port): the queue, the paused share of each period (%) and per-period
    counts as Perfetto should draw them. A row is a sample where something moved; a missing row
    means an empty queue and counters that stood still, so each row's increase happened in the
    period ending at it."""
    series = {}
    for (node, port, _), rows in samples.groupby(["node", "port", "traffic_class"]):
        rows = rows.sort_values("time_ps")
        times = list(rows["time_ps"])
        queue, counts = [], {column: [] for column in [*COUNTED, "paused_ps"]}
        previous = {column: 0 for column in counts}
        for i, row in enumerate(rows.itertuples()):
            t = row.time_ps
            idle_after = (i + 1 == len(times) or times[i + 1] != t + period_ps) \
                and t + period_ps <= end_ps
            queue.append((t // PS_PER_NS, row.queue_bytes))
            if idle_after:
                queue.append(((t + period_ps) // PS_PER_NS, 0))
            for column in counts:
                grown = getattr(row, column) - previous[column]
                counts[column].append(((t - period_ps) // PS_PER_NS,
                                       grown / period_ps * 100 if column == "paused_ps" else grown))
                if idle_after:
                    counts[column].append((t // PS_PER_NS, 0))
                previous[column] = getattr(row, column)
        if (rows["queue_bytes"] > 0).any() or any(v > 0 for c in counts.values() for _, v in c):
            series[(node, port)] = {"queue": queue, **counts}
    return series


def setUpModule():
    global DIR, FAULTED_RUN, FULL, OPS
    directory = tempfile.TemporaryDirectory()
    DIR = Path(directory.name)
    setUpModule.directory = directory
    FAULTED_RUN = run_lockstep(DIR / "faulted.h5", *FAULTED)
    result = export(FAULTED_RUN, DIR / "faulted.perfetto-trace")
    assert result.returncode == 0, result.stderr
    FULL = Trace(DIR / "faulted.perfetto-trace")
    OPS = la.load_table(FAULTED_RUN, "rank_ops")


def tearDownModule():
    setUpModule.directory.cleanup()


class TraceOfAFaultedRun(unittest.TestCase):
    def setUp(self):
        self.info = la.meta(FAULTED_RUN)

    def test_every_rank_has_a_track_under_its_server_in_rank_order_with_its_two_streams(self):
        placement = la.load_table(FAULTED_RUN, "rank_placement")
        self.assertEqual(sorted(set(placement["node"])), [0, 2])
        self.assertEqual(FULL.placed(),
                         set(zip(placement["rank"], placement["gpu"], placement["node"])))
        self.assertEqual(len(FULL.rank_of), 16)
        servers = sorted(FULL.server_of, key=lambda uuid: FULL.tracks[uuid]["order_rank"])
        self.assertEqual([FULL.server_of[uuid] for uuid in servers], [0, 2])
        for server in servers:
            ranks = sorted(FULL.children(server).values(),
                           key=lambda uuid: FULL.tracks[uuid]["order_rank"])
            self.assertEqual([FULL.rank_of[uuid] for uuid in ranks],
                             sorted(FULL.rank_of[uuid] for uuid in ranks))
        for uuid in FULL.rank_of:
            self.assertEqual(sorted(FULL.children(uuid)), ["communication", "compute"])
        self.assertTrue(FULL.tracks[FULL.roots["servers"]]["order_children"])
        self.assertIn("rank 9 on GPU 17 (tp 1, cp 0, dp 1)",
                      [FULL.tracks[uuid]["name"] for uuid in FULL.rank_of])

    def test_every_op_is_a_slice_with_its_name_times_in_ns_and_arguments(self):
        self.assertEqual(sorted(set(OPS["step"])), [0, 1])
        self.assertEqual(FULL.op_slices(), expected_ops(OPS))
        markers = OPS[OPS["kind"] == "marker"]
        self.assertEqual(Counter((*FULL.stream_of[i["track"]], i["name"], i["ts"])
                                 for i in FULL.on("stream", FULL.instants)),
                         Counter(zip(markers["rank"], markers["stream"], markers["name"],
                                     markers["start_ps"] // PS_PER_NS)))

    def test_events_are_in_time_order_within_each_sequence_after_the_descriptors(self):
        last, descriptors_done = {}, False
        for packet in FULL.packets:
            if packet["track"]:
                self.assertFalse(descriptors_done, "a track described after events began")
                continue
            descriptors_done = True
            self.assertIn(packet["event"]["track"], FULL.tracks)
            sequence = packet["sequence"]
            self.assertIsNotNone(sequence)
            self.assertGreaterEqual(packet["timestamp"], last.get(sequence, 0))
            last[sequence] = packet["timestamp"]

    def test_each_collective_is_one_flow_through_its_members_in_join_order(self):
        paths = FULL.flows()
        expected = expected_collectives(OPS, set(range(16)))
        self.assertEqual(len(expected), 2080)  # 1536 tensor-, 512 context-, 32 data-parallel
        self.assertEqual({frozenset(path) for path in paths.values()}, expected)
        for path in paths.values():
            self.assertEqual(len(set(path)), len(path), "a flow passes each member once")
            begins = [begin for *_, begin, _ in path]
            self.assertEqual(begins, sorted(begins), "members in the order they joined")
            if path[0][2].startswith("tp_"):  # a TP group ends its collective together
                self.assertEqual(len({end for *_, end in path}), 1)

    def test_a_collective_that_waited_opens_with_the_wait(self):
        waits = FULL.waits()
        self.assertEqual(waits, expected_waits(OPS))
        self.assertEqual({name for _, _, name, *_ in waits}, {"waiting for peers"})

    def test_ports_that_congested_have_counters_that_follow_port_samples(self):
        samples, wiring = la.load_table(FAULTED_RUN, "port_samples"), la.load_table(
            FAULTED_RUN, "ports")
        period = la.sample_period_ps(FAULTED_RUN)
        names = FabricNames(la.scenario(FAULTED_RUN))
        expected = expected_counters(samples, period, self.info["end_ps"])
        groups = FULL.children(FULL.roots["fabric"])
        self.assertEqual(len(groups), len(expected))
        self.assertTrue(any(series["pauses_received"] for series in expected.values()))
        self.assertTrue(any(series["paused_ps"] for series in expected.values()))
        titles = {"ecn_marked": "ECN marks", "pauses_received": "PFC pauses received",
                  "pauses_sent": "PFC pauses sent", "dropped_packets": "drops",
                  "paused_ps": "paused"}
        for (node, port), series in expected.items():
            name, = (n for n in groups if n.startswith(names.port(node, port) + " (to "))
            counters = {n.split(" per ")[0].split(" (")[0]: FULL.counters.get(uuid, [])
                        for n, uuid in FULL.children(groups[name]).items()}
            self.assertEqual(counters["queue"], [(t, float(v)) for t, v in series["queue"]])
            for column, title in titles.items():
                if any(v for _, v in series[column]):
                    self.assertEqual(counters[title], [(t, float(v)) for t, v in series[column]])
                else:
                    self.assertNotIn(title, counters)
            rate = wiring.set_index(["node", "port"]).loc[(node, port), "rate_bps"]
            sent = samples[(samples.node == node) & (samples.port == port)].sort_values("time_ps")
            grown = sent["bytes_sent"].diff().fillna(sent["bytes_sent"]).to_numpy()
            utilization = [v for t, v in counters["utilization"]]
            self.assertEqual(len(utilization), len(series["queue"]))
            busiest = max(grown) * 8 / (period / 1e12) / rate * 100
            self.assertAlmostEqual(max(utilization), busiest, places=9)

    def test_faults_span_their_time_and_defences_are_instants_when_they_acted(self):
        cluster = FULL.children(FULL.roots["cluster"])
        faults = la.load_table(FAULTED_RUN, "faults")
        self.assertEqual(len(faults), 2)
        shown = Counter((s["name"], s["begin"], s["end"]) for s in FULL.slices
                        if FULL.tracks[s["track"]]["name"] == "faults")
        end = faults["end_ps"].where(faults["end_ps"] >= 0, self.info["end_ps"])
        self.assertEqual(shown, Counter(zip(faults["kind"] + " " + faults["target"],
                                            faults["start_ps"] // PS_PER_NS, end // PS_PER_NS)))
        defences = la.load_table(FAULTED_RUN, "defences")
        self.assertEqual(list(defences["defence"]), ["nic_pfc_watchdog"])
        self.assertEqual(Counter((i["name"], i["ts"], i["args"]["detail"]) for i in FULL.instants
                                 if i["track"] == cluster["defences"]),
                         Counter(zip(defences["defence"] + " " + defences["target"],
                                     defences["at_ps"] // PS_PER_NS, defences["detail"])))

    def test_steps_are_slices_on_each_rank_and_on_the_cluster(self):
        rank_steps = la.load_table(FAULTED_RUN, "rank_steps")
        self.assertEqual(Counter((FULL.rank_of[s["track"]], s["args"]["step"], s["begin"], s["end"],
                                  s["args"].get("bubble_ps", 0))
                                 for s in FULL.on("rank", FULL.slices)),
                         Counter(zip(rank_steps["rank"], rank_steps["step"],
                                     rank_steps["start_ps"] // PS_PER_NS,
                                     rank_steps["end_ps"] // PS_PER_NS, rank_steps["bubble_ps"])))
        steps = la.load_table(FAULTED_RUN, "steps")
        track = FULL.children(FULL.roots["cluster"])["steps"]
        self.assertEqual([(s["begin"], s["end"], s["args"]["mfu"]) for s in FULL.slices
                          if s["track"] == track],
                         list(zip(steps["start_ps"] // PS_PER_NS, steps["end_ps"] // PS_PER_NS,
                                  steps["mfu"])))


class Filters(unittest.TestCase):
    def trace(self, *args):
        out = DIR / "filtered.perfetto-trace"
        result = export(FAULTED_RUN, out, *args)
        self.assertEqual(result.returncode, 0, result.stderr)
        return Trace(out)

    def test_ranks_keeps_those_ranks_and_links_only_among_them(self):
        chosen = {0, 1, 2, 9}
        trace = self.trace("--ranks", "0-2,9")
        self.assertEqual(set(trace.rank_of.values()), chosen)
        self.assertEqual(trace.op_slices(), expected_ops(OPS[OPS["rank"].isin(chosen)]))
        paths = trace.flows().values()
        self.assertEqual({frozenset(path) for path in paths}, expected_collectives(OPS, chosen))
        self.assertTrue(any({rank for rank, *_ in path} == {1, 9} for path in paths),
                        "ranks 1 and 9 differ in their data-parallel coordinate only")

    def test_from_and_to_keep_what_overlaps_the_window_with_its_true_times(self):
        start, end = 10 * 10**9, 20 * 10**9
        trace = self.trace("--from", "10ms", "--to", "20ms")
        instant = OPS["start_ps"] == OPS["end_ps"]
        overlapping = OPS[instant & OPS["start_ps"].between(start, end)
                          | ~instant & (OPS["end_ps"] > start) & (OPS["start_ps"] < end)]
        self.assertLess(len(overlapping), len(OPS) / 2)
        self.assertEqual(trace.op_slices(), expected_ops(overlapping))
        period = la.sample_period_ps(FAULTED_RUN)
        times = [t for values in trace.counters.values() for t, _ in values]
        self.assertTrue(times)
        self.assertGreaterEqual(min(times), (start - period) // PS_PER_NS)
        self.assertLessEqual(max(times), end // PS_PER_NS)
        faults = {s["name"] for s in trace.slices if trace.tracks[s["track"]]["name"] == "faults"}
        self.assertEqual(faults, {"pfc_storm nic 24", "thermal gpu 3"})
        self.assertEqual(len([i for i in trace.instants if i["name"].startswith("nic_pfc")]), 1)

    def test_steps_keeps_those_steps_and_the_time_they_ran(self):
        trace = self.trace("--steps", "1")
        self.assertEqual(trace.op_slices(), expected_ops(OPS[OPS["step"] == 1]))
        self.assertEqual({s["args"]["step"] for s in trace.on("rank", trace.slices)}, {1})
        # The storm (5-15 ms) was over before step 1 began; the throttled GPU stays hot.
        faults = {s["name"] for s in trace.slices if trace.tracks[s["track"]]["name"] == "faults"}
        self.assertEqual(faults, {"thermal gpu 3"})

    def test_ports_none_leaves_the_fabric_out(self):
        trace = self.trace("--ports", "none")
        self.assertNotIn("fabric", trace.roots)
        self.assertEqual(trace.counters, {})


class BadInput(unittest.TestCase):
    def assert_refused(self, run, *args, says):
        out = DIR / "refused.perfetto-trace"
        result = export(run, out, *args)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(says, result.stderr)
        self.assertFalse(out.exists())
        self.assertEqual(list(DIR.glob("refused*")), [])

    def test_a_missing_file_or_one_that_is_not_a_run(self):
        self.assert_refused(DIR / "nothing.h5", says="no such file")
        text = DIR / "text.h5"
        text.write_text("not hdf5\n")
        self.assert_refused(text, says="not an HDF5 file")

    def test_a_run_without_a_table_the_trace_needs(self):
        for table in ("rank_ops", "rank_placement"):
            stripped = DIR / f"no_{table}.h5"
            with h5py.File(FAULTED_RUN, "r") as source, h5py.File(stripped, "w") as copy:
                for name in source:
                    if name != table:
                        source.copy(name, copy)
            self.assert_refused(stripped, says=f"no table '{table}'")

    def test_bad_filters(self):
        self.assert_refused(FAULTED_RUN, "--ranks", "0-99", says="no rank 99")
        self.assert_refused(FAULTED_RUN, "--ranks", "3-1", says="runs backwards")
        self.assert_refused(FAULTED_RUN, "--ranks", "x", says="not a list")
        self.assert_refused(FAULTED_RUN, "--steps", "5", says="no step 5")
        self.assert_refused(FAULTED_RUN, "--from", "5", says="not a duration with a unit")
        self.assert_refused(FAULTED_RUN, "--from", "20ms", "--to", "10ms",
                            says="--from is after --to")
        self.assert_refused(FAULTED_RUN, "-o", DIR / "missing" / "x.pftrace",
                            says="not a file in an existing directory")
        self.assert_refused(FAULTED_RUN, "-o", DIR / "refused.json", says="not JSON")


class APipelineRestartedOnASpare(unittest.TestCase):
    """War story 5 made small: GPU 77 slows from step 1, the straggler detector drains its server
    (9) and the job restarts from step 0 on the spare, server 32; one pipeline shown."""

    @classmethod
    def setUpClass(cls):
        cls.run_file = run_lockstep(DIR / "restarted.h5", *RESTARTED)
        out = DIR / "restarted.perfetto-trace"
        result = export(cls.run_file, out, "--ranks", PIPELINE)
        assert result.returncode == 0, result.stderr
        cls.trace = Trace(out)
        cls.ops = la.load_table(cls.run_file, "rank_ops")
        cls.placement = la.load_table(cls.run_file, "rank_placement")

    def test_each_transfer_is_a_flow_from_the_send_to_the_receive(self):
        transfers = {tuple(path) for path in self.trace.flows().values() if path[0][1] == "send"}
        expected = expected_transfers(self.ops, PIPELINE_RANKS)
        # 4 micro-batches x 2 stage pairs x 2 ways x 8 tensor ranks x 2 attempts
        self.assertEqual(len(expected), 256)
        self.assertEqual(transfers, expected)
        self.assertTrue(any(recv[3] < send[3] for send, recv in transfers),
                        "some receives were posted before their send")
        collectives = expected_collectives(self.ops, PIPELINE_RANKS)
        self.assertEqual(len(self.trace.flows()), len(transfers) + len(collectives))

    def test_a_receive_that_waited_for_its_sender_opens_with_the_wait(self):
        waits = self.trace.waits()
        self.assertEqual(waits, expected_waits(self.ops))
        self.assertEqual({name for _, _, name, *_ in waits}, {"waiting for sender"})

    def test_ranks_the_restart_moved_have_a_track_under_each_server_they_ran_on(self):
        chosen = self.placement[self.placement["rank"].isin(PIPELINE_RANKS)]
        tracks = self.trace.placed()
        self.assertEqual(tracks, set(zip(chosen["rank"], chosen["gpu"], chosen["node"])))
        moved = {rank for rank, _, server in tracks if server == 32}
        self.assertEqual(moved, set(range(72, 80)))
        self.assertEqual({rank for rank, _, server in tracks if server == 9}, moved)
        # Every op and step is on the track of the GPU its attempt ran it on.
        gpu = chosen.set_index(["attempt", "rank"])["gpu"]
        for item in self.trace.ops() + self.trace.on("rank", self.trace.slices):
            track = self.trace.rank_track(item)
            self.assertEqual(self.trace.gpu_of[track],
                             gpu[(item["args"].get("attempt", 0), self.trace.rank_of[track])])
        self.assertEqual(set(self.ops["rank"]), PIPELINE_RANKS)
        self.assertEqual(self.trace.op_slices(), expected_ops(self.ops))

    def test_steps_redone_after_the_restart_name_their_attempt(self):
        steps = la.load_table(self.run_file, "steps")
        self.assertEqual(sorted(set(steps["attempt"])), [0, 1])
        track = self.trace.children(self.trace.roots["cluster"])["steps"]
        self.assertEqual([s["name"] for s in self.trace.slices if s["track"] == track],
                         [f"step {s}" + (f" (attempt {a})" if a else "")
                          for s, a in zip(steps["step"], steps["attempt"])])
        rank_steps = {s["name"] for s in self.trace.on("rank", self.trace.slices)}
        self.assertIn("step 0 (attempt 1)", rank_steps)


class OtherRuns(unittest.TestCase):
    def test_a_hung_job_shows_what_each_rank_waited_in_until_the_end(self):
        run = run_lockstep(DIR / "hung.h5", *HUNG)
        out = DIR / "hung.perfetto-trace"
        result = export(run, out, "--ranks", "8-15", "--from", "400ms")
        self.assertEqual(result.returncode, 0, result.stderr)
        trace = Trace(out)
        end = la.meta(run)["end_ps"] // PS_PER_NS
        blocked = la.load_table(run, "blocked_ranks")
        blocked = blocked[blocked["rank"].between(8, 15)]
        self.assertIn("failed GPU", set(blocked["waiting_in"]))
        shown = Counter()
        for s in trace.slices:
            if s["categories"] == ["blocked"]:
                rank, stream = trace.stream_of.get(s["track"], (trace.rank_of.get(s["track"]), ""))
                shown[(rank, stream, s["name"], s["begin"], s["end"])] += 1
        self.assertEqual(shown, Counter(
            (row.rank, row.stream, f"blocked in {row.waiting_in}" if row.stream else row.waiting_in,
             row.since_ps // PS_PER_NS, end) for row in blocked.itertuples()))

    def test_by_default_at_most_64_ranks_are_shown_and_stderr_says_so(self):
        run = run_lockstep(DIR / "wide.h5", *WIDE)
        out = DIR / "wide.perfetto-trace"
        result = export(run, out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("256 ranks recorded; showing the first 64 (0-63)", result.stderr)
        trace = Trace(out)
        self.assertEqual(sorted(trace.rank_of.values()), list(range(64)))
        ops = la.load_table(run, "rank_ops")
        self.assertEqual(trace.op_slices(), expected_ops(ops[ops["rank"] < 64]))


if __name__ == "__main__":
    unittest.main()
