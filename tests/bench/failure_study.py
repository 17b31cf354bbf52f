#!/usr/bin/python3
"""Failure study: goodput against checkpoint cadence at 16,384 GPUs (war story 9).

Runs scenarios/war-stories/9_failures_at_scale.yaml (two simulated weeks of a 405B-class job on
16,384 H100s whose nodes fail at Llama 3's rate) once per checkpoint interval and mode, and prints
per run the interruptions per day, the steps redone, the goodput and where the rest went, and the
wall time of the run. Every run draws the same failures (the failure stream does not depend on
the job), so the columns differ by the cadence alone.

    tests/bench/failure_study.py [--lockstep PATH] [--every 25,100,400,1600] [--modes sync,async]
"""

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py

SOURCE = Path(__file__).resolve().parents[2]
SCENARIO = SOURCE / "scenarios" / "war-stories" / "9_failures_at_scale.yaml"
PS_PER_DAY = 86_400e12


def run_once(lockstep, every, mode, out):
    start = time.monotonic()
    result = subprocess.run(
        [lockstep, "run", "--quiet", str(SCENARIO), "-o", out,
         "--set", f"job.checkpoint.every={every}", "--set", f"job.checkpoint.mode={mode}"],
        capture_output=True, text=True)
    wall = time.monotonic() - start
    if result.returncode != 0:
        sys.exit(f"every {every} {mode}: lockstep failed\n{result.stderr}")
    with h5py.File(out, "r") as f:
        g = f["goodput"][0]
        steps = f["steps"]
        step_ps = int(steps["end_ps"][-1] - steps["start_ps"][-1]) if len(steps) else 0
    return g, wall, step_ps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lockstep", default=str(SOURCE / "build" / "bench" / "lockstep"))
    parser.add_argument("--every", default="25,100,400,1600")
    parser.add_argument("--modes", default="sync,async")
    args = parser.parse_args()
    print(f"{'mode':6} {'every':>6} {'interruptions/day':>17} {'steps redone':>12} "
          f"{'goodput':>8} {'checkpointing':>13} {'restarting':>10} {'lost':>8} {'wall':>7}")
    with tempfile.TemporaryDirectory() as directory:
        for mode in args.modes.split(","):
            for every in args.every.split(","):
                g, wall, _ = run_once(args.lockstep, every, mode, str(Path(directory) / "out.h5"))
                days = int(g["total_ps"]) / PS_PER_DAY
                share = lambda column: f"{100 * int(g[column]) / int(g['total_ps']):.1f}%"
                print(f"{mode:6} {every:>6} {g['interruptions'] / days:17.2f} "
                      f"{g['steps_redone']:12d} {100 * g['goodput']:7.1f}% "
                      f"{share('checkpointing_ps'):>13} {share('restarting_ps'):>10} "
                      f"{share('lost_ps'):>8} {wall:6.0f}s", flush=True)


if __name__ == "__main__":
    main()
