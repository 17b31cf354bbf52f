#!/usr/bin/python3
"""Training-job benchmark: wall time and peak memory per simulated step.

Runs the worked example (scenarios/worked-example.yaml, 256 H100s, Llama 2 70B with TP=8, PP=4,
DP=8) for one step at each network level, one step of the 16,384-GPU job of
scenarios/bench/training_16384_gpus.yaml and one of plain data parallelism over 128 H100s
(scenarios/bench/training_pure_dp_128_h100.yaml, NCCL's NVLS-Tree and rings across servers of eight
GPUs) at the levels named, and prints per run the wall time per simulated step, the peak resident
memory, the events per second and the step the run simulated.
Targets (issue "Training jobs on the cluster"): worked example under 1 s per step analytic, 5 s flow,
5 min packet; the 16,384-GPU step under 60 s and 8 GB at flow level.

    tests/bench/training_bench.py [--lockstep PATH] [--levels analytic,flow,packet] [--big LEVELS]
                                  [--dp LEVELS]
"""

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2]


def peak_mib(stdout):
    """The run's own peak resident memory, as lockstep reports it: the rusage a parent gets counts
    the parent's size too (Linux carries it across exec), so a driver holding h5py would inflate it."""
    return float(re.search(r"peak resident memory ([0-9.]+) MiB", stdout).group(1))


def run_once(lockstep, scenario, level, out):
    start = time.monotonic()
    process = subprocess.Popen(
        [lockstep, "run", "--quiet", str(scenario), "-o", out, "--set", f"network.model={level}",
         "--set", "job.steps=1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = process.communicate()
    wall = time.monotonic() - start
    if process.returncode != 0:
        sys.exit(f"{scenario.name} at {level}: lockstep failed\n{stderr}")
    step = re.search(r"step time (\S+), MFU ([0-9.]+%)", stdout)
    events = re.search(r"(\d+) events;", stdout)
    return wall, peak_mib(stdout), step.group(1), step.group(2), int(events.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lockstep", default=str(SOURCE / "build" / "bench" / "lockstep"))
    parser.add_argument("--levels", default="analytic,flow,packet")
    parser.add_argument("--big", default="analytic", help="levels for the 16,384-GPU step")
    parser.add_argument("--dp", default="analytic,flow",
                        help="levels for the step of plain data parallelism over 128 H100s")
    args = parser.parse_args()
    runs = [(SOURCE / "scenarios" / "worked-example.yaml", level)
            for level in args.levels.split(",") if level]
    runs += [(SOURCE / "scenarios" / "bench" / "training_16384_gpus.yaml", level)
             for level in args.big.split(",") if level]
    runs += [(SOURCE / "scenarios" / "bench" / "training_pure_dp_128_h100.yaml", level)
             for level in args.dp.split(",") if level]
    print(f"{'scenario':28} {'level':9} {'wall/step':>10} {'peak MB':>8} {'M events/s':>10} "
          f"{'simulated step':>15} {'MFU':>6}")
    with tempfile.TemporaryDirectory() as directory:
        for scenario, level in runs:
            wall, peak, step, mfu, events = run_once(args.lockstep, scenario, level,
                                                     str(Path(directory) / "out.h5"))
            print(f"{scenario.stem:28} {level:9} {wall:9.2f}s {peak:8.0f} "
                  f"{events / wall * 1e-6:10.2f} {step:>15} {mfu:>6}", flush=True)


if __name__ == "__main__":
    main()
