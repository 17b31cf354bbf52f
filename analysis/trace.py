#!/usr/bin/python3
"""Write a lockstep run as a timeline that opens in https://ui.perfetto.dev (Perfetto's protobuf
trace format, see lockstep_analysis/perfetto.py).

    lockstep trace RUN.h5 [-o FILE] [--ranks 0-7,64 | --ranks all] [--steps 3-4]
                          [--from 1.5s] [--to 2s] [--ports congested|active|none]

Tracks, in this order (a track with children folds open):

  servers
    server 2                  the ranks that ran on the server (rank_placement), in rank order
      rank 8 on GPU 16 (tp 0, dp 1)
                              the rank's steps (rank_steps: from the end of its previous step to the
                              end of its own, args: where the time went; `step 3 (attempt 1)` for
                              a step redone after a restart), and, if the job hung or its watchdog
                              fired, what it was blocked in (blocked_ranks) until a defence acted
                              or the run ended
        compute               its compute stream (rank_ops): kernels, tensor- and context-parallel
                              collectives, pipeline sends and receives, each a slice named by op
                              with args step, attempt, micro_batch, layer, stage, bytes, flops and
                              communicator (attempt left out where 0, micro_batch and layer where
                              the file has -1, bytes and flops where 0); the step_end marker is an
                              instant. A collective or a receive that waited (waited_ps) opens
                              with a child slice over the wait, `waiting for peers` (members that
                              joined after it) or `waiting for sender` (the pipeline bubble): a
                              straggler is the one member without it
        communication         its communication stream: data-parallel gradient reductions and
                              parameter gathers
  cluster
    steps                     the job's steps (steps), with MFU and the slowest rank
    faults                    each fault from its start to its end or the end of the run; faults
                              that overlap go on lanes of the same name, which Perfetto shows as
                              one track
    defences                  each action of a defence, an instant
  fabric
    leaf1 port 8 (to NIC 24)  a port's counters (port_samples): its queue, the utilization of its
                              link, and, where not all 0, the share of each sample period it was
                              paused, its ECN marks, PFC pauses received and sent, and drops per
                              sample period

A rank has a track for each GPU it ran on: a restart that replaces a drained server moves its ranks
to a spare, and their later attempts go on new tracks under the spare. So a server's tracks hold
what ran on it and nothing else: the drained server's work stops at the drain, the spare's starts
at the restart, and a fault on a GPU or a server lines up with the ranks it hit. (One track per
rank would have to sit under one server, and would show the work of the other under it.) Events
go where their attempt placed the rank; a blocked rank where its GPU is; a rank with nothing shown
has its track where it ran in the last attempt shown.

Flows link ops across ranks. rank_ops names each collective on all its members, and each pipeline
transfer on its send and its receive, by (communicator, group, sequence) within an attempt. A
collective is one flow through its members' slices in the order they joined it (to the
nanosecond), ending at the last to join; a transfer is a flow from the send to the receive.
Perfetto draws an arrow from the end of a slice to the start of the next, so the arrow to a
receive posted before its send points back in time, to the receive's `waiting for sender`. With
--ranks, a collective links its chosen members if there are two or more; a transfer, if both ends
are chosen.

Times: the file counts picoseconds and Perfetto nanoseconds; every time is rounded down to whole
nanoseconds (ps // 1000). Rounding down keeps order, so ops that follow each other on a stream
still do; an op shorter than a nanosecond may show as a slice of length 0.

Filters: --ranks keeps those ranks (a list of ranks and ranges, or `all`); by default the ranks
whose ops were recorded (job.record_ops), or every rank with steps if none were, at most the first
64 (said on stderr). --steps keeps those steps' ops, rank steps and blocked ranks, and cuts the
cluster and fabric tracks to when those steps ran, from the first rank's start to the last rank's
end. --from and --to (times from the start of the run with a unit: 1.5s, 200ms) keep what overlaps
that window, each slice with its true times. --ports chooses the ports with counter tracks:
`congested` (default: a queue, an ECN mark, a pause or a drop in the window), `active` (any
traffic) or `none`.

Exit codes: 0 written, 1 the output could not be written, 2 bad input (no such file, not a job or
fabric run of lockstep, a table the trace needs missing, a bad filter), 130 interrupted. The trace
is written beside FILE as FILE.partial.PID and renamed when complete: FILE is never half-written.
"""

import argparse
import os
import re
import signal
import sys
from pathlib import Path

import h5py
import numpy as np
import pandas as pd

from lockstep_analysis import duration_ps, load_table, meta, run_kind, scenario, tables
from lockstep_analysis import perfetto as pf
from lockstep_analysis.fabric_names import FabricNames
from lockstep_analysis.job_layout import JobLayout

DEFAULT_RANK_LIMIT = 64
PS_PER_NS = 1000
OPS_READ_AT_ONCE = 1 << 20  # rank_ops rows read per slab: bounds memory while filtering
STREAMS = ["compute", "communication"]  # rank_ops.stream, in the order their tracks are shown
# One packet sequence per group of tracks; every track's events are in exactly one of them.
OPS_SEQUENCE, RANKS_SEQUENCE, CLUSTER_SEQUENCE, FABRIC_SEQUENCE = 1, 2, 3, 4
STEP_PARTS = ["compute_ps", "tp_comm_ps", "cp_comm_ps", "pp_comm_ps", "dp_comm_ps", "bubble_ps",
              "data_wait_ps", "checkpoint_ps", "wait_for_others_ps", "other_ps"]


class BadInput(Exception):
    """The run or the options cannot give a trace: exit code 2, with this message."""


# ---- Options

def _ranges(text):
    """'0-7,64' as [(0, 7), (64, 64)]; expanded once checked against the run."""
    ranges = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not match:
            raise argparse.ArgumentTypeError(f"'{text}' is not a list such as 0-7,64")
        first, last = int(match[1]), int(match[2] or match[1])
        if last < first:
            raise argparse.ArgumentTypeError(f"'{part.strip()}' runs backwards")
        ranges.append((first, last))
    return ranges


def _rank_ranges(text):
    return "all" if text.strip() == "all" else _ranges(text)


def _time(text):
    try:
        return duration_ps(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _parser():
    parser = argparse.ArgumentParser(
        prog="lockstep trace", description="Write a lockstep run as a Perfetto trace "
        "(open it in https://ui.perfetto.dev).",
        epilog="The tracks, how ops are linked and the rounding of times are described at the "
               "top of analysis/trace.py.")
    parser.add_argument("run", metavar="RUN.h5", help="what `lockstep run` wrote")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="the trace to write (default: RUN with the suffix .perfetto-trace)")
    parser.add_argument("--ranks", type=_rank_ranges, metavar="LIST",
                        help=f"ranks to show, e.g. 0-7,64, or all (default: those with recorded "
                             f"ops, at most the first {DEFAULT_RANK_LIMIT})")
    parser.add_argument("--steps", type=_ranges, metavar="LIST", help="steps to show, e.g. 3-4")
    parser.add_argument("--from", dest="start", type=_time, metavar="TIME",
                        help="show what happens from this time on, e.g. 1.5s")
    parser.add_argument("--to", dest="end", type=_time, metavar="TIME",
                        help="show what happens up to this time, e.g. 2s")
    parser.add_argument("--ports", choices=["congested", "active", "none"], default="congested",
                        help="ports with counter tracks (default: congested)")
    return parser


def _expand(ranges, limit, what):
    """The numbers of `ranges` as a sorted array; BadInput for one not below `limit`."""
    for first, last in ranges:
        if last >= limit:
            raise BadInput(f"--{what}: the run has no {what[:-1]} {last} ({what} 0-{limit - 1})")
    return np.unique(np.concatenate([np.arange(first, last + 1) for first, last in ranges]))


# ---- The run

def _codes(column):
    """(codes, pool) of a fixed-length byte-string column: each row's index into its distinct
    texts, -1 for an empty one. The bytes are hashed as integers, 8 at a time: decoding millions
    of rows to Python strs is what makes `load_table` slow on rank_ops."""
    rows, size = len(column), column.dtype.itemsize
    padded = np.zeros((rows, -(-size // 8) * 8), dtype=np.uint8)
    padded[:, :size] = np.ascontiguousarray(column).view(np.uint8).reshape(rows, size)
    codes = np.zeros(rows, dtype=np.int64)
    for word in padded.view(np.uint64).T:
        word_codes, distinct = pd.factorize(word)
        codes = pd.factorize(codes * len(distinct) + word_codes)[0]
    firsts = pd.Series(codes).drop_duplicates()  # the first row of each code, in code order
    pool = [column[row].decode("ascii") for row in firsts.index]
    if "" in pool:
        empty = pool.index("")
        codes = np.where(codes == empty, -1, codes - (codes > empty))
        pool.remove("")
    return codes, pool


def _is(pooled, text):
    """Rows whose text column is `text`."""
    codes, pool = pooled
    return codes == pool.index(text) if text in pool else np.zeros(len(codes), dtype=bool)


def _rows_of(pooled, rows):
    return pooled[0][rows], pooled[1]


def read_ops(path, steps, ranks, limit):
    """rank_ops rows of `steps` and `ranks` (None: all) as a dict of columns, text ones as (codes,
    pool); with `ranks` None and a `limit`, only the first `limit` ranks that have ops. Also how
    many ranks had ops. Read a slab at a time, not through `load_table`, so that a filtered export
    of a huge run neither holds the whole table nor decodes its text."""
    kept, seen = [], np.empty(0, dtype=np.int64)
    with h5py.File(path, "r") as f:
        table = f["rank_ops"]
        dtype = table.dtype
        for start in range(0, len(table), OPS_READ_AT_ONCE):
            rows = table[start:start + OPS_READ_AT_ONCE]
            keep = np.ones(len(rows), dtype=bool)
            if steps is not None:
                keep &= np.isin(rows["step"], steps)
            if ranks is not None:
                keep &= np.isin(rows["rank"], ranks)
            kept.append(rows[keep])
            seen = np.union1d(seen, kept[-1]["rank"])
            if ranks is None and limit is not None and len(seen) > limit:
                kept = [part[part["rank"] <= seen[limit - 1]] for part in kept]
    rows = np.concatenate(kept) if kept else np.empty(0, dtype=dtype)
    ops = {name: (_codes(rows[name]) if dtype[name].kind == "S" else rows[name])
           for name in dtype.names}
    return ops, len(seen)


class RunTables:
    """The run's tables by name; a missing one the trace needs is bad input, named."""

    def __init__(self, path):
        self.path, self.names = path, set(tables(path))

    def require(self, name):
        if name not in self.names:
            raise BadInput(f"{self.path}: no table '{name}', which the trace needs (a file of "
                           "another version of lockstep?)")

    def load(self, name):
        self.require(name)
        return load_table(self.path, name)

    def load_optional(self, name):
        return load_table(self.path, name) if name in self.names else None


def open_run(path):
    """/meta of a job or fabric run, and whether it ran a job (a job with background traffic is
    both); BadInput for anything else."""
    if not Path(path).is_file():
        raise BadInput(f"{path}: no such file")
    try:
        kind, info = run_kind(path), meta(path)
    except OSError:
        raise BadInput(f"{path}: not an HDF5 file") from None
    except (KeyError, ValueError) as e:
        raise BadInput(f"{path}: not the output of `lockstep run`: {e}") from None
    if kind == "nccl-tests":
        raise BadInput(f"{path}: an nccl-tests run has no timeline (each size runs on a clock of "
                       "its own)")
    return info, "steps" in tables(path)


# ---- Tracks and events

class Tracks:
    """The trace's track descriptors, uuids handed out in order."""

    def __init__(self):
        self.packets = []

    def add(self, name, parent=None, order_rank=None, order_children=False, **counter):
        uuid = len(self.packets) + 1
        self.packets.append(pf.track_descriptor(uuid, name, parent, order_children, order_rank,
                                                **counter))
        return uuid


def _ns(ps):
    return np.asarray(ps, dtype=np.int64) // PS_PER_NS


def _overlaps(start, end, window):
    """Intervals that share some time with the window (not just an end point); those of no
    length, if they are in it."""
    start, end = np.asarray(start), np.asarray(end)
    return np.where(start == end, (start >= window[0]) & (start <= window[1]),
                    (start < window[1]) & (end > window[0]))


def _present(values, absent):
    """An integer argument, left out where it is `absent` (a kernel's 0 bytes of a collective,
    rank_ops' -1 for "no micro-batch" or "no layer"): fewer arguments to read, a smaller file."""
    values = np.asarray(values, dtype=np.int64)
    return np.where(values != absent, values, pf.MISSING)


# ---- Ranks: where they ran, their steps, streams, ops and how ops link

class Placement:
    """Where the ranks ran (rank_placement): the GPU of each rank in each attempt, and the server
    of each GPU."""

    def __init__(self, table):
        attempts, ranks, gpus = (table[column].to_numpy() for column in ("attempt", "rank", "gpu"))
        self._gpu = np.full((attempts.max() + 1, ranks.max() + 1), -1, dtype=np.int64)
        self._gpu[attempts, ranks] = gpus
        self.world = self._gpu.shape[1]
        self.server = np.full(gpus.max() + 1, -1, dtype=np.int64)
        self.server[gpus] = table["node"].to_numpy()

    def gpu(self, ranks, attempts):
        """The GPU of each rank in its attempt."""
        return self._gpu[np.asarray(attempts), np.asarray(ranks)]


def rank_label(layout, rank, gpu):
    """`rank 9 on GPU 17 (tp 1, dp 1)`: the rank, where it ran, and its coordinates along the
    dimensions the job splits."""
    split = ", ".join(f"{dim} {layout.coordinate(dim)[rank]}"
                      for dim, size in layout.sizes.items() if size > 1)
    return f"rank {rank} on GPU {gpu}" + (f" ({split})" if split else "")


class RankTracks:
    """A track per rank and GPU it ran on (module docstring), under its server's track, with a
    track per stream under it; the uuids of a (rank, GPU) looked up column-wise."""

    def __init__(self, tracks, layout, placement, ranks, gpus):
        self._gpus = len(placement.server)
        self._keys = np.unique(np.asarray(ranks) * self._gpus + gpus)  # sorted, for searchsorted
        ranks, gpus = np.divmod(self._keys, self._gpus)
        servers = placement.server[gpus]
        shown = np.lexsort((ranks, servers))  # by server, then rank (then GPU: the keys' order)
        root = tracks.add("servers", order_rank=0, order_children=True)
        server_uuids = {server: tracks.add(f"server {server}", root, index, order_children=True)
                        for index, server in enumerate(np.unique(servers))}
        self._uuids = np.zeros(len(shown), dtype=np.int64)
        self._streams = {stream: np.zeros(len(shown), dtype=np.int64) for stream in STREAMS}
        for index, row in enumerate(shown):
            self._uuids[row] = tracks.add(rank_label(layout, ranks[row], gpus[row]),
                                          server_uuids[servers[row]], index, order_children=True)
            for rank_in_track, stream in enumerate(STREAMS):
                self._streams[stream][row] = tracks.add(stream, int(self._uuids[row]),
                                                        rank_in_track)

    def rank(self, ranks, gpus):
        return self._uuids[self._index(ranks, gpus)]

    def stream(self, stream, ranks, gpus):
        """The tracks of `stream` (an unknown one: compute's)."""
        return self._streams.get(stream, self._streams["compute"])[self._index(ranks, gpus)]

    def _index(self, ranks, gpus):
        return np.searchsorted(self._keys, np.asarray(ranks) * self._gpus + np.asarray(gpus))


def link(ops, kept):
    """How the `kept` ops link (module docstring): a flow id per op that a flow starts at or
    passes through, one per op a flow arrives at (0: none), and how many collectives and
    transfers are linked. A flow's id is its instance's number, plus 1."""
    rows = np.flatnonzero(kept & (ops["group"] >= 0))  # kernels and markers are in no group
    names = pd.DataFrame({"attempt": ops["attempt"][rows],
                          "communicator": ops["communicator"][0][rows],
                          "group": ops["group"][rows], "sequence": ops["sequence"][rows]})
    instance = names.groupby(list(names.columns), sort=False).ngroup().to_numpy()
    linked = np.bincount(instance)[instance] >= 2
    ids = np.zeros(len(kept), dtype=np.int64)
    ids[rows[linked]] = instance[linked] + 1
    receive = _is(ops["kind"], "recv")
    transfers = len(np.unique(ids[receive & (ids > 0)]))
    collectives = len(np.unique(ids[_is(ops["kind"], "collective") & (ids > 0)]))
    return np.where(receive, 0, ids), np.where(receive, ids, 0), collectives, transfers


WAITING = {"collective": "waiting for peers", "recv": "waiting for sender"}  # rank_ops.waited_ps


def add_ops(slices, ops, rows, gpus, rank_tracks, flows, arrivals):
    """The ops `rows` (run on `gpus`) as slices on their rank's stream track, markers as
    instants; a collective or receive that waited opens with a child slice of the wait."""
    streams, stream_pool = _rows_of(ops["stream"], rows)
    track = np.zeros(len(rows), dtype=np.int64)
    for code, stream in enumerate(stream_pool):
        mine = streams == code
        track[mine] = rank_tracks.stream(stream, ops["rank"][rows[mine]], gpus[mine])
    marker = _is(ops["kind"], "marker")[rows]
    kinds, kind_pool = _rows_of(ops["kind"], rows)
    waits = [WAITING.get(kind, "") for kind in kind_pool]  # by kind code
    for instant in (False, True):
        part = rows[marker == instant]
        waited = ops["waited_ps"][part] > 0
        slices.add(track[marker == instant], _ns(ops["start_ps"][part]),
                   _rows_of(ops["name"], part),
                   end=None if instant else _ns(ops["end_ps"][part]),
                   category=_rows_of(ops["kind"], part),
                   ints={"step": ops["step"][part], "attempt": _present(ops["attempt"][part], 0),
                         "micro_batch": _present(ops["micro_batch"][part], -1),
                         "layer": _present(ops["layer"][part], -1), "stage": ops["stage"][part],
                         "bytes": _present(ops["bytes"][part], 0),
                         "flops": _present(ops["flops"][part], 0)},
                   texts={"communicator": _rows_of(ops["communicator"], part)},
                   flows=flows[part], arrivals=arrivals[part],
                   opening=(np.where(waited, _ns(ops["start_ps"][part] + ops["waited_ps"][part]),
                                     -1), (kinds[marker == instant], waits)))


def add_rank_steps(slices, rank_steps, gpus, rank_tracks):
    """Each rank's steps on its track, with where the time went."""
    slices.add(rank_tracks.rank(rank_steps["rank"], gpus), _ns(rank_steps["start_ps"]),
               _step_names(rank_steps), end=_ns(rank_steps["end_ps"]), category="step",
               ints={"step": rank_steps["step"], "attempt": rank_steps["attempt"],
                     **{part: _present(rank_steps[part], 0) for part in STEP_PARTS
                        if part in rank_steps}})


def _step_names(steps):
    """`step 4`, and `step 4 (attempt 1)` for a step redone after a restart."""
    return [f"step {s}" if a == 0 else f"step {s} (attempt {a})"
            for s, a in zip(steps["step"], steps["attempt"])]


def blocked_spans(blocked, defences, run_end_ps, window):
    """The blocked ranks that overlap the window, with `until_ps`: the first defence that acted
    after the rank began to wait, or the end of the run."""
    acted = [] if defences is None else list(defences["at_ps"])
    ends = np.sort(np.array(acted + [run_end_ps], dtype=np.int64))
    since = blocked["since_ps"].to_numpy()
    until = ends[np.minimum(np.searchsorted(ends, since), len(ends) - 1)]
    return blocked.assign(until_ps=until)[_overlaps(since, until, window)]


def add_blocked(slices, blocked, rank_tracks):
    """What each blocked rank waited in (on its stream's track; a failed GPU on the rank's
    track) over its `blocked_spans`."""
    ranks, gpus = blocked["rank"].to_numpy(), blocked["gpu"].to_numpy()
    track = rank_tracks.rank(ranks, gpus)
    for stream in STREAMS:
        mine = (blocked["stream"] == stream).to_numpy()
        track[mine] = rank_tracks.stream(stream, ranks[mine], gpus[mine])
    names = [waiting if waiting == "failed GPU" else f"blocked in {waiting}"
             for waiting in blocked["waiting_in"]]
    slices.add(track, _ns(blocked["since_ps"]), names, end=_ns(blocked["until_ps"]),
               category="blocked",
               ints={"step": blocked["step"], "gpu": blocked["gpu"],
                     "group": np.where(blocked["group"] >= 0, blocked["group"], pf.MISSING)},
               texts={"never_arrived": [text or "-" for text in blocked["never_arrived"]]})


# ---- The cluster: steps, faults, defences

def add_cluster(tracks, slices, steps, faults, defences, run_end_ps, window):
    """The job's steps, the faults (overlapping ones on parallel lanes, which Perfetto shows as one
    track since they share a name) and the defences' actions."""
    root = tracks.add("cluster", order_rank=1, order_children=True)
    counts = {}
    if steps is not None:
        steps = steps[_overlaps(steps["start_ps"], steps["end_ps"], window)]
        uuid = tracks.add("steps", root, 0)
        slices.add(np.full(len(steps), uuid), _ns(steps["start_ps"]), _step_names(steps),
                   end=_ns(steps["end_ps"]), category="step",
                   ints={"step": steps["step"], "attempt": steps["attempt"],
                         "slowest_rank": steps["slowest_rank"]},
                   doubles={"mfu": steps["mfu"], "tflops_per_gpu": steps["tflops_per_gpu"],
                            "tokens_per_second": steps["tokens_per_second"]})
        counts["step"] = len(steps)
    if faults is not None:
        end = np.where(faults["end_ps"] >= 0, faults["end_ps"], run_end_ps)
        faults = faults.assign(end_ps=np.maximum(end, faults["start_ps"]))
        faults = faults[_overlaps(faults["start_ps"], faults["end_ps"], window)]
        lanes = _lanes(faults["start_ps"].to_numpy(), faults["end_ps"].to_numpy())
        lane_uuids = np.array([tracks.add("faults", root, 1 + lane)
                               for lane in range(lanes.max(initial=-1) + 1)], dtype=np.int64)
        slices.add(lane_uuids[lanes] if len(faults) else [], _ns(faults["start_ps"]),
                   [f"{kind} {target}" for kind, target in zip(faults["kind"], faults["target"])],
                   end=_ns(faults["end_ps"]), category="fault",
                   texts={"kind": list(faults["kind"]), "target": list(faults["target"]),
                          "detail": list(faults["detail"])})
        counts["fault"] = len(faults)
    if defences is not None:
        defences = defences[_overlaps(defences["at_ps"], defences["at_ps"], window)]
        uuid = tracks.add("defences", root, 1000)
        slices.add(np.full(len(defences), uuid), _ns(defences["at_ps"]),
                   [f"{defence} {target}"
                    for defence, target in zip(defences["defence"], defences["target"])],
                   category="defence",
                   texts={"target": list(defences["target"]), "detail": list(defences["detail"])})
        counts["defence action"] = len(defences)
    return counts


def _lanes(starts, ends):
    """A lane per interval, in order of start, such that intervals on one lane do not overlap
    (one may begin where the previous ended): the fewest lanes, greedily."""
    lanes, lane_ends = np.zeros(len(starts), dtype=np.int64), []
    for row in np.argsort(starts, kind="stable"):
        free = next((i for i, end in enumerate(lane_ends) if end <= starts[row]), len(lane_ends))
        if free == len(lane_ends):
            lane_ends.append(0)
        lanes[row], lane_ends[free] = free, ends[row]
    return lanes


# ---- The fabric: port counters

EVENT_COUNTERS = [  # port_samples columns drawn as counts per sample period, where not all 0
    ("ecn_marked", "ECN marks"),
    ("pauses_received", "PFC pauses received"),
    ("pauses_sent", "PFC pauses sent"),
    ("dropped_packets", "drops"),
]


def add_fabric(tracks, samples, ports, names, period_ps, period_text, run_end_ps, window, choice):
    """Counter tracks of the chosen ports (module docstring) and their values: (track uuids, times
    in ns, values) of every value, and how many ports.

    `port_samples` has a row for a port only when its queue was not empty, it was paused, or a
    counter moved since the previous sample (analysis/hdf5_schema.md): a missing row is an empty queue and counters
    that stood still. So a row's increase over the port's previous row all happened in the period
    that ends at the row: a count or utilization is drawn from the start of that period, and falls
    back to 0 (the queue too) at the first sample without a row."""
    key = ["node", "port", "traffic_class"]
    samples = samples.sort_values([*key, "time_ps"], kind="stable")
    first = (samples[key].diff() != 0).any(axis=1).to_numpy()  # a port's first row (NaN diff)
    port = np.cumsum(first) - 1
    ids = samples.loc[first, key].reset_index(drop=True)
    time, queue = samples["time_ps"].to_numpy(), samples["queue_bytes"].to_numpy()
    grown = {column: np.where(first, samples[column], samples[column].diff()).astype(np.int64)
             for column in ["bytes_sent", "paused_ps", *(column for column, _ in EVENT_COUNTERS)]}
    followed = ~np.append(first[1:], True) & (np.append(time[1:], -1) == time + period_ps)
    idle_after = ~followed & (time + period_ps <= run_end_ps)
    shown = (time >= window[0]) & (time <= window[1])

    def ports_where(rows):
        return np.bincount(port[rows], minlength=len(ids)) > 0

    congested = ((queue > 0) | (grown["paused_ps"] > 0)
                 | np.any([grown[column] > 0 for column, _ in EVENT_COUNTERS], axis=0))
    chosen = np.flatnonzero(ports_where(shown & congested if choice == "congested" else shown))
    if not len(chosen):
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0), 0
    wiring = ids.merge(ports, on=["node", "port"], how="left", validate="many_to_one")
    several_classes = ids["traffic_class"].nunique() > 1
    counted = {column: ports_where(shown & (grown[column] > 0))
               for column in ["paused_ps", *(column for column, _ in EVENT_COUNTERS)]}
    uuids = {name: np.zeros(len(ids), dtype=np.int64)
             for name in ["queue", "utilization", *counted]}
    root = tracks.add("fabric", order_rank=2, order_children=True)
    for order, p in enumerate(chosen):
        cable = wiring.iloc[p]
        name = names.port_to(cable["node"], cable["port"], cable["peer"])
        if several_classes:
            name += f" class {cable['traffic_class']}"
        group = tracks.add(name, root, order, order_children=True)
        uuids["queue"][p] = tracks.add("queue", group, 0, counter_unit=pf.UNIT_SIZE_BYTES)
        uuids["utilization"][p] = tracks.add(f"utilization (% of {_rate(cable['rate_bps'])})",
                                             group, 1, counter_unit_name="%")
        # The share of each period the port could not send: the pause storm's own measure.
        if counted["paused_ps"][p]:
            uuids["paused_ps"][p] = tracks.add(f"paused (% of each {period_text})", group, 2,
                                               counter_unit_name="%")
        for rank, (column, title) in enumerate(EVENT_COUNTERS, start=3):
            if counted[column][p]:
                uuids[column][p] = tracks.add(f"{title} per {period_text}", group, rank,
                                              counter_unit_name=f"per {period_text}")

    values = []  # (uuid, time, value) arrays

    def draw(name, rows, at, value):
        rows = rows & (uuids[name][port] != 0)
        values.append((uuids[name][port[rows]], at[rows], np.asarray(value, np.float64)[rows]))

    zeros = np.zeros(len(time))
    draw("queue", shown, time, queue)
    draw("queue", shown & idle_after & (time + period_ps <= window[1]), time + period_ps, zeros)
    utilization = grown["bytes_sent"] * 8 / (period_ps / 1e12) / wiring["rate_bps"].to_numpy()[port]
    for name, per_period in [("utilization", utilization * 100),
                             ("paused_ps", grown["paused_ps"] / period_ps * 100),
                             *((column, grown[column]) for column, _ in EVENT_COUNTERS)]:
        draw(name, shown, time - period_ps, per_period)
        draw(name, shown & idle_after, time, zeros)
    track, times, value = (np.concatenate(column) for column in zip(*values))
    return track, _ns(times), value, len(chosen)


def _rate(bps):
    return f"{bps / 1e9:g}Gb/s"


# ---- The whole trace

def choose_ranks(requested, world, ops_ranks, recorded, rank_steps):
    """The ranks to show (module docstring), sorted, and a note for stderr when capped. `ops_ranks`
    are those of the ops read, `recorded` how many ranks had ops in all."""
    if requested == "all":
        return np.arange(world), None
    if requested is not None:
        return _expand(requested, world, "ranks"), None
    candidates = np.unique(ops_ranks)
    if not len(candidates):
        candidates = np.unique(rank_steps["rank"].to_numpy())
        recorded = len(candidates)
    if recorded <= DEFAULT_RANK_LIMIT:
        return candidates, None
    chosen = candidates[:DEFAULT_RANK_LIMIT]
    return chosen, (f"{recorded} ranks recorded; showing the first {DEFAULT_RANK_LIMIT} "
                    f"({chosen[0]}-{chosen[-1]}): choose others with --ranks, or --ranks all")


def _steps_span(steps, rank_steps, wanted, run_end_ps):
    """When the `wanted` steps ran: from the first rank's start (a rank starts a step when it ends
    its previous one, before the slowest rank does) to the end of the last, all attempts; a step
    that never finished runs from the end of the step before to the end of the run."""
    finished = [rows[rows["step"].isin(wanted)] for rows in (steps, rank_steps)]
    starts = [int(rows["start_ps"].min()) for rows in finished if len(rows)]
    ends = [int(rows["end_ps"].max()) for rows in finished if len(rows)]
    for step in set(wanted.tolist()) - set(steps["step"]):
        before = steps.loc[steps["step"] < step, "end_ps"]
        starts.append(int(before.max()) if len(before) else 0)
        ends.append(run_end_ps)
    return min(starts), max(ends)


def build(args):
    """The trace's descriptor packets, its event chunks (a generator: nothing is encoded before it
    is written) and a one-line summary; BadInput, before anything is written, if it cannot be."""
    info, job = open_run(args.run)
    run, config = RunTables(args.run), scenario(args.run)
    run_end_ps = int(info["end_ps"])
    window = [args.start or 0, run_end_ps if args.end is None else args.end]
    if window[0] > window[1]:
        raise BadInput(f"--from is after --to ({window[0]} ps > {window[1]} ps)")
    tracks = Tracks()
    sections = {sequence: pf.Slices() for sequence in (OPS_SEQUENCE, RANKS_SEQUENCE,
                                                       CLUSTER_SEQUENCE)}
    steps, summary = None, []
    if job:
        steps, rank_steps = run.load("steps"), run.load("rank_steps")
        wanted = None
        if args.steps is not None:
            wanted = _expand(args.steps, int(config["job"]["steps"]), "steps")
            rank_steps = rank_steps[rank_steps["step"].isin(wanted)]
        summary.append(add_job(tracks, sections, run, config, rank_steps, wanted, args, window,
                               run_end_ps))
        if wanted is not None:  # the rest of the trace: the time those steps ran
            first, last = _steps_span(steps, rank_steps, wanted, run_end_ps)
            window = [max(window[0], first), min(window[1], last)]
    elif args.ranks is not None or args.steps is not None:
        raise BadInput(f"{args.run}: a fabric run has no ranks or steps to choose")
    counts = add_cluster(tracks, sections[CLUSTER_SEQUENCE], steps, run.load_optional("faults"),
                         run.load_optional("defences"), run_end_ps, window)
    counters, ports = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0)), 0
    period = (config.get("network") or {}).get("sample_period")  # None: no port samples
    if args.ports != "none" and period is not None:
        samples = run.load("port_samples")
        if len(samples):
            *counters, ports = add_fabric(tracks, samples, run.load("ports"), FabricNames(config),
                                          duration_ps(period), period, run_end_ps, window,
                                          args.ports)
    summary += [_count(ports, "port")] + [_count(n, noun) for noun, n in counts.items()]

    def events():
        for sequence, section in sections.items():
            yield from section.packets(sequence)
        yield from pf.counter_packets(*counters, FABRIC_SEQUENCE)

    return b"".join(tracks.packets), events(), ", ".join(summary)


def add_job(tracks, sections, run, config, rank_steps, wanted, args, window, run_end_ps):
    """The ranks' tracks and events, of the `wanted` steps (None: all); returns a summary."""
    run.require("rank_ops")
    placement = Placement(run.load("rank_placement"))
    explicit = None if args.ranks in (None, "all") else _expand(args.ranks, placement.world,
                                                                "ranks")
    ops, recorded = read_ops(args.run, wanted, explicit,
                             None if args.ranks == "all" else DEFAULT_RANK_LIMIT)
    ranks, note = choose_ranks(args.ranks, placement.world, ops["rank"], recorded, rank_steps)
    if note:
        print(f"lockstep trace: {note}", file=sys.stderr)

    kept = np.isin(ops["rank"], ranks) & _overlaps(ops["start_ps"], ops["end_ps"], window)
    rows = np.flatnonzero(kept)
    op_gpus = placement.gpu(ops["rank"][rows], ops["attempt"][rows])
    rank_steps = rank_steps[rank_steps["rank"].isin(ranks).to_numpy()
                            & _overlaps(rank_steps["start_ps"], rank_steps["end_ps"], window)]
    step_gpus = placement.gpu(rank_steps["rank"], rank_steps["attempt"])
    blocked = run.load_optional("blocked_ranks")
    shown = [(ops["rank"][rows], op_gpus), (rank_steps["rank"].to_numpy(), step_gpus)]
    if blocked is not None:
        blocked = blocked_spans(blocked[blocked["rank"].isin(ranks)
                                        & (blocked["step"].isin(wanted) if wanted is not None
                                           else True)],
                                run.load_optional("defences"), run_end_ps, window)
        shown.append((blocked["rank"].to_numpy(), blocked["gpu"].to_numpy()))
    last = np.concatenate([ops["attempt"][rows], rank_steps["attempt"]]).max(initial=0)
    rank_tracks = RankTracks(tracks, JobLayout(config), placement,
                             *_with_idle(ranks, shown, placement, last))

    flows, arrivals, collectives, transfers = link(ops, kept)
    add_ops(sections[OPS_SEQUENCE], ops, rows, op_gpus, rank_tracks, flows, arrivals)
    add_rank_steps(sections[RANKS_SEQUENCE], rank_steps, step_gpus, rank_tracks)
    if blocked is not None:
        add_blocked(sections[RANKS_SEQUENCE], blocked, rank_tracks)
    return ", ".join([_count(len(ranks), "rank"), _count(len(rows), "op"),
                      _count(collectives, "linked collective"),
                      _count(transfers, "linked transfer")])


def _with_idle(ranks, shown, placement, last_attempt):
    """The ranks and GPUs of the (rank, GPU) columns `shown`, and of each of `ranks` with nothing
    shown: where it ran in the last attempt shown, so that it still has its track."""
    shown_ranks, shown_gpus = (np.concatenate(column) for column in zip(*shown))
    idle = np.setdiff1d(ranks, shown_ranks)
    return (np.concatenate([shown_ranks, idle]),
            np.concatenate([shown_gpus, placement.gpu(idle, np.full(len(idle), last_attempt))]))


def _count(n, noun):
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def write_atomically(out, descriptors, chunks):
    """Write to OUT.partial.PID beside `out`, then rename: `out` is complete or untouched."""
    partial = out.with_name(f"{out.name}.partial.{os.getpid()}")
    try:
        with open(partial, "xb") as f:
            f.write(descriptors)
            for chunk in chunks:
                f.write(chunk)
        os.replace(partial, out)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None):
    args = _parser().parse_args(argv)
    out = Path(args.output) if args.output else Path(args.run).with_suffix(".perfetto-trace")
    try:
        if out.is_dir() or not out.parent.resolve().is_dir():
            raise BadInput(f"-o {out}: not a file in an existing directory")
        if out.suffix == ".json":  # Perfetto reads either; only the protobuf format is written
            raise BadInput(f"-o {out}: the trace is Perfetto's protobuf format, not JSON: name it "
                           ".perfetto-trace")
        descriptors, chunks, summary = build(args)
        write_atomically(out, descriptors, chunks)
    except BadInput as e:
        print(f"lockstep trace: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"lockstep trace: cannot write {out}: {e.strerror or e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    print(f"lockstep trace: {summary}; wrote {out.resolve()}")
    return 0


if __name__ == "__main__":
    for interrupting in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(interrupting, _interrupt)
    sys.exit(main())
