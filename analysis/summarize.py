#!/usr/bin/python3
"""Print where each step of a lockstep run went: step time, slowest rank, compute, wait, comm.

    analysis/summarize.py RUN.h5

Debian's /usr/bin/python3 is named on purpose: it is the interpreter that has h5py and pandas here.
"""

import sys

import pandas as pd

from lockstep_analysis import meta, step_summary

COLUMNS = {
    "step": "step",
    "step_s": "step time (s)",
    "slowest_rank": "slowest rank",
    "mean_compute_s": "mean compute (s)",
    "mean_wait_for_slowest_s": "mean wait for slowest (s)",
    "comm_s": "all-reduce (s)",
}


def main(argv):
    if len(argv) != 2:
        print(f"usage: {argv[0]} RUN.h5", file=sys.stderr)
        return 2
    path = argv[1]
    try:
        info = meta(path)
        summary = step_summary(path)
    except (OSError, KeyError) as e:
        print(f"{argv[0]}: cannot read '{path}': {e}", file=sys.stderr)
        return 1
    print(f"{path}: {info['scenario_file']}, seed {info['seed']}, lockstep {info['version']}, "
          f"{info['outcome']}, {len(summary)} step(s)")
    if summary.empty:
        return 0
    with pd.option_context("display.float_format", "{:.6f}".format):
        print(summary[list(COLUMNS)].rename(columns=COLUMNS).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
