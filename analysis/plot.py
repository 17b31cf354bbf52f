#!/usr/bin/python3
"""Draw a figure of a lockstep run as PNG, SVG or PDF.

    lockstep plot KIND RUN.h5 [options] [-o FILE]

Kinds: heatmap (each rank's work per step against its stage's: stragglers), gantt (one step's ops
on a few ranks), pfc (PFC pauses per port over time), queues (queue depth and utilization of the
busiest ports), busbw (nccl-tests bus bandwidth against size), fct (CDF of flow completion times).
busbw and fct take several runs and draw them on one figure.

Output: -o FILE.png, FILE.svg or FILE.pdf writes exactly that file, in the format its suffix names;
-o FILE without a suffix writes FILE.png and FILE.svg; -o DIR/ (or an existing directory) writes
DIR/RUN-KIND.png and .svg; without -o, RUN-KIND.png and .svg in the working directory (RUN: the
first run file's name without .h5). Exit codes: 0 written, 2 bad input (a run without what the
figure needs, a bad option, a suffix that names no format), 1 the figure could not be written.
Debian's /usr/bin/python3 is named on purpose: it is the interpreter that has h5py, pandas and
matplotlib here. `lockstep plot ...` runs this file with analysis/ on PYTHONPATH.
"""

import argparse
import sys
from pathlib import Path

import matplotlib

# The figures never touch pyplot, but a headless machine should not even try a display backend.
matplotlib.use("Agg")

import h5py

from lockstep_analysis.plots import PlotInputError, busbw, fct, gantt, heatmap, pfc, queues
from lockstep_analysis.plots.fct import GROUPINGS
from lockstep_analysis.plots.figure import both, output_paths, write
from lockstep_analysis.plots.heatmap import MAX_ROWS, METRICS
from lockstep_analysis.plots.pfc import MAX_PORTS
from lockstep_analysis.plots.rank_ranges import parse_ranks

PROG = "lockstep plot"


def ports_argument(text):
    """[(49, 8), (12, 1)] from '49:8,12:1'."""
    ports = [item.split(":") for item in text.split(",")]
    if not all(len(port) == 2 and all(n.isdigit() for n in port) for port in ports):
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of node:port such as 49:8,12:1")
    return [(int(node), int(port)) for node, port in ports]


def ranks_argument(text):
    try:
        return parse_ranks(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error))


def positive_int(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of at least 1")
    return int(text)


def labels_argument(text):
    return text.split(",")


def parser():
    top = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                  epilog=__doc__.split("\n\n", 2)[2],
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    kinds = top.add_subparsers(dest="kind", required=True, metavar="KIND")

    def kind(name, help_text, runs="one"):
        sub = kinds.add_parser(name, help=help_text, description=help_text)
        if runs == "one":
            sub.add_argument("runs", nargs=1, metavar="RUN.h5", help="the run's HDF5 file")
        else:
            sub.add_argument("runs", nargs="+", metavar="RUN.h5", help="runs to draw together")
            sub.add_argument("--labels", type=labels_argument,
                             help="legend labels, one per run, comma-separated (default: the "
                                  "file names)")
        sub.add_argument("-o", "--output", metavar="FILE",
                         help="write FILE in the format its suffix names (.png, .svg, .pdf), "
                              "FILE.png and FILE.svg without a suffix, or into a directory given "
                              "as DIR/ (default: RUN-KIND.png and .svg in the working directory)")
        return sub

    sub = kind("heatmap", "each rank's own work at every step over its pipeline stage's (job "
                          "runs): finds stragglers")
    sub.add_argument("--metric", choices=list(METRICS), default="work-vs-stage",
                     help="work-vs-stage: own work over its pipeline stage's median, as the "
                          "straggler detector compares (default); work: its own work (compute, "
                          "TP/CP/PP communication; not waiting); step: end - start of the rank's "
                          "step, alike for every rank of a synchronous job")
    sub.add_argument("--max-rows", type=positive_int, default=MAX_ROWS,
                     help=f"beyond this many ranks a row is the largest of a block of ranks "
                          f"(default {MAX_ROWS})")

    sub = kind("gantt", "one step's ops on a few ranks, compute and communication streams (job "
                        "runs with job.record_ops)")
    sub.add_argument("--step", type=int, default=0, help="the step (default 0)")
    sub.add_argument("--ranks", type=ranks_argument,
                     help="ranks such as 0-7,64 (default: the first 16 recorded)")
    sub.add_argument("--attempt", type=int,
                     help="for a step redone after a restart, which attempt (default: the first "
                          "that finished)")

    for name, help_text in (("pfc", "PFC pauses per port over time (runs with "
                                    "network.sample_period)"),
                            ("queues", "queue depth and link utilization over time of the "
                                       "busiest ports (runs with network.sample_period)")):
        sub = kind(name, help_text)
        sub.add_argument("--class", dest="traffic_class", type=int,
                         help="traffic class (default: the run's RDMA class, "
                              "network.transport.traffic_class)")
        sub.add_argument("--from", dest="start", metavar="TIME",
                         help="start of the time window, e.g. 19ms (default: 0)")
        sub.add_argument("--to", dest="end", metavar="TIME",
                         help="end of the time window, e.g. 25ms (default: the end of the run)")
        if name == "pfc":
            sub.add_argument("--max-ports", type=positive_int, default=MAX_PORTS,
                             help=f"at most this many ports, the longest paused (default "
                                  f"{MAX_PORTS})")
        else:
            sub.add_argument("--ports", type=ports_argument,
                             help="ports as node:port, e.g. 49:8,51:4 (default: the 4 deepest "
                                  "queues)")

    kind("busbw", "nccl-tests bus bandwidth against size (nccl-tests runs)", runs="several")
    sub = kind("fct", "CDF of flow completion times (fabric runs with traffic)", runs="several")
    sub.add_argument("--by", choices=GROUPINGS,
                     help="a line per group of flows: size (decades) or hops (links crossed)")
    return top


def draw(args):
    """The figure `args` ask for."""
    run = args.runs[0]
    if args.kind == "heatmap":
        return heatmap(run, metric=args.metric, max_rows=args.max_rows)
    if args.kind == "gantt":
        return gantt(run, step=args.step, ranks=args.ranks, attempt=args.attempt)
    if args.kind in ("pfc", "queues"):
        window = None if args.start is None and args.end is None else (args.start, args.end)
        if args.kind == "pfc":
            return pfc(run, max_ports=args.max_ports, traffic_class=args.traffic_class,
                       window=window)
        return queues(run, ports=args.ports, traffic_class=args.traffic_class, window=window)
    if args.kind == "busbw":
        return busbw(args.runs, labels=args.labels)
    return fct(args.runs, by=args.by, labels=args.labels)


def output_files(args):
    """The files to write: those -o names, or RUN-KIND.png and .svg in the directory it names (the
    working directory without -o). Raises ValueError for a suffix that names no format."""
    default_name = f"{Path(args.runs[0]).name.removesuffix('.h5')}-{args.kind}"
    if args.output is None:
        return both(default_name)
    output = Path(args.output)
    if args.output.endswith("/") or output.is_dir():
        return both(output / default_name)
    return output_paths(output)


def main(argv):
    args = parser().parse_args(argv)
    try:
        written = output_files(args)
    except ValueError as error:
        print(f"{PROG}: -o {args.output}: {error}", file=sys.stderr)
        return 2
    for run in args.runs:
        if not Path(run).is_file() or not h5py.is_hdf5(run):
            print(f"{PROG}: '{run}' is not a run file (the HDF5 file `lockstep run` writes)",
                  file=sys.stderr)
            return 2
    try:
        figure = draw(args)
    except (PlotInputError, KeyError, ValueError) as error:
        # A KeyError's str() is the repr of its message; the message itself reads better.
        print(f"{PROG}: {error.args[0] if isinstance(error, KeyError) else error}", file=sys.stderr)
        return 2
    try:
        write(figure, written)
    except OSError as error:
        print(f"{PROG}: cannot write the figure: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(f"{PROG}: wrote {path.resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
