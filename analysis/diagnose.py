#!/usr/bin/python3
"""Diagnose a lockstep run: where its time went and why, ranked, from what the run measured.

    lockstep diagnose RUN.h5             (or: PYTHONPATH=analysis analysis/diagnose.py RUN.h5)

Prints the findings in tiers (what stopped or interrupted the run, the incidents, what the plan
costs; lockstep_analysis/ranking.py), each under its heading, and writes them into RUN.h5 as the
`findings` table (analysis/hdf5_schema.md), replacing one a previous diagnosis wrote; the file is
never left half-written. Exit codes: 0 done, 1 the file could not be read or written, 2 bad input
(no such file, not a lockstep run, or a run with nothing to diagnose), 130 interrupted.
Debian's /usr/bin/python3 is named on purpose: it is the interpreter that has h5py and pandas here.
"""

import argparse
import json
import math
import os
import signal
import sys
import textwrap
from pathlib import Path

import h5py

from lockstep_analysis.diagnosis import NothingToDiagnose, diagnose
from lockstep_analysis.findings import UNKNOWN_PS, duration, percent
from lockstep_analysis.findings_file import write_findings
from lockstep_analysis.ranking import HEADINGS, INTERRUPTION, tier
from lockstep_analysis.run_file import load_table, meta, tables

PROG = "lockstep diagnose"
WIDTH = 100


class BadInput(Exception):
    """Exit code 2: the user named something that is not a lockstep run to diagnose."""


class Interrupted(Exception):
    """SIGTERM or SIGHUP, raised where the program is so that the partial copy is removed."""


def parse(argv):
    parser = argparse.ArgumentParser(
        prog=PROG, description="Where a lockstep run's time went and why: ranked findings, "
        "printed and written into the file as the `findings` table.")
    parser.add_argument("run", metavar="RUN.h5", help="the HDF5 file `lockstep run` wrote")
    parser.add_argument("--no-write", action="store_true",
                        help="print only; leave the file as it is")
    parser.add_argument("--json", action="store_true",
                        help="print the findings as JSON (NaN as null) instead of text")
    return parser.parse_args(argv)


def check_input(path):
    if not path.exists():
        raise BadInput(f"{path}: no such file")
    if not path.is_file():
        raise BadInput(f"{path}: not a regular file")
    if not h5py.is_hdf5(path):
        raise BadInput(f"{path}: not an HDF5 file")
    with h5py.File(path, "r") as f:
        if not isinstance(f.get("meta"), h5py.Group) or "kind" not in f["meta"]:
            raise BadInput(f"{path}: not a lockstep run (no /meta/kind)")


def headline(path, info, findings):
    """What ran and how it ended; for a job, its steps in figures."""
    parts = [f"{path}: {info['kind']} run, {info['outcome']}"]
    if "steps" in tables(path):
        steps = load_table(path, "steps")
        if len(steps):
            mean_ps = (steps["end_ps"] - steps["start_ps"]).mean()
            parts.append(f"{len(steps)} step(s) of {duration(mean_ps)} on average, "
                         f"MFU {100 * steps['mfu'].mean():.1f}%")
    parts.append(f"{len(findings)} finding{'s' if len(findings) != 1 else ''}")
    return "; ".join(parts)


def as_text(row, level, run_ps):
    """A finding as its reader needs it: the first line says what, where and what it cost. What
    an interruption names (the culprit of a hang, the servers the defences drained) is its cause."""
    where = ", ".join(part for part in (_named("rank", row.ranks), _named("server", row.nodes),
                                        row.fabric) if part)
    if where and level == INTERRUPTION:
        where = f"caused by {where}"
    cost = _cost(row, run_ps)
    head = (f"{row.rank:2d}. {row.finding} [{row.place}]" + (f" {where}" if where else "")
            + (f": {cost}" if cost else ""))
    lines = textwrap.wrap(head, WIDTH, subsequent_indent="    ")
    lines += textwrap.wrap(row.evidence, WIDTH, initial_indent="    ", subsequent_indent="    ")
    lines += textwrap.wrap(row.action, WIDTH, initial_indent="    -> ",
                           subsequent_indent="       ")
    return "\n".join(lines)


def _named(noun, values):
    """`server 9`, `servers 0-31`: the table's id lists with their noun."""
    if not values:
        return ""
    return f"{noun}{'s' if '-' in values or ' ' in values else ''} {values}"


def _cost(row, run_ps):
    """A cost per step with its share, and over the run when known; or, for what is no cost per
    step (a restart, a hang), the time lost as a share of the run, which is never above 100%."""
    if row.lost_per_step_ps != UNKNOWN_PS:
        text = (f"{duration(row.lost_per_step_ps)} per step, {percent(row.share_of_step)} of the "
                "step")
        return text + (f"; {duration(row.lost_ps)} over the run" if row.lost_ps != UNKNOWN_PS
                       else "")
    if row.lost_ps != UNKNOWN_PS:
        return (f"{duration(row.lost_ps)} lost, {percent(row.lost_ps / run_ps)} of the run's "
                f"{duration(run_ps)}")
    return ""


def as_json(path, info, findings):
    rows = [{column: (None if isinstance(value, float) and math.isnan(value) else value)
             for column, value in row.items()} for row in findings.to_dict("records")]
    return json.dumps({"file": str(path), "kind": info["kind"], "outcome": info["outcome"],
                       "findings": rows}, indent=2, default=int)


def run(args):
    path = Path(args.run)
    check_input(path)
    try:
        findings = diagnose(path)
    except NothingToDiagnose as e:
        raise BadInput(str(e)) from e
    info = meta(path)
    if args.json:
        say(as_json(path, info, findings))
    else:
        say(headline(path, info, findings))
        found, printed = set(findings["finding"]), None
        for row in findings.itertuples(index=False):
            level = tier(row.finding, row.share_of_step, found)
            heading = HEADINGS.get(level)  # a verdict (healthy) has none
            if heading and heading != printed:
                say(f"{heading}:")
                printed = heading
            say(as_text(row, level, info["end_ps"]))
    if not args.no_write:
        write_findings(path, findings)
        if not args.json:
            say(f"{PROG}: wrote the findings table to {path.resolve()}")


def say(text):
    """Prints, and once the reader has gone (piped into `head`) prints nowhere, so that the table is
    still written."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def interrupted(signum, frame):
    raise Interrupted(signal.Signals(signum).name)


def main(argv):
    args = parse(argv)
    try:
        run(args)
    except BadInput as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, Interrupted):
        print(f"{PROG}: interrupted; {args.run} left as it was", file=sys.stderr)
        return 130
    except OSError as e:
        print(f"{PROG}: {args.run}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    # Stopped like `lockstep run` is, the file is left as it was (the partial copy removed).
    for stop in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop, interrupted)
    sys.exit(main(sys.argv[1:]))
