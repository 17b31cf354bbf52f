#!/usr/bin/python3
"""Fabric benchmark: the scenarios shared with ns-3 and htsim (../shared/benchmarks.md), and the
flow-level scale scenarios of a k = 40 fat tree (scenarios/bench/flow_*.yaml).

Runs each scenarios/bench/*.yaml several times with `lockstep run` and prints, per scenario, the median
and the best wall time, the largest peak resident memory a run reports of itself and the flow completion
times the run reports;
for packet-level runs, packet-hops per second (every packet whose serialization onto a link completed,
ACKs and pauses included) beside the peers' figures measured on this kind of machine, with the median's
speed-up over the faster of htsim's lossless transports where htsim ran the scenario; for flow-level
runs, the wall time per rate recomputation (median, p99, max). Machines here are noisy (+-30-50%, from
other guests contending for memory, which the packet path waits on): compare medians and ratios, take
the best run as what the program does on a quiet machine, and rerun when another process was busy.
For packet-level runs it also prints the PFC frames split into pauses, refreshes and resumes, and for
Incast-128 the flow completion times by sender position beside ns-3's.

    tests/bench/fabric_bench.py [--runs N] [--lockstep PATH] [SCENARIO_NAME ...]
"""

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import h5py
import numpy as np

SOURCE = Path(__file__).resolve().parents[2]

# benchmarks.md: median wall time (s) and peak memory (MB): ns-3 DCQCN, htsim lossless HPCC, htsim RoCE.
PEERS = {
    "perm_128_1000B": "ns-3 11.5 s / 359 MB",
    "perm_128_4000B": "ns-3 1.9 s / 322 MB; htsim 0.74 s / 15 MB (HPCC), 0.49 s / 11 MB (RoCE)",
    "incast_128_1000B": "ns-3 8.0 s / 417 MB",
    "incast_128_4000B": "ns-3 2.6 s / 345 MB; htsim 0.54 s / 10 MB (HPCC), 0.38 s / 9 MB (RoCE)",
    "perm_1024_1000B": "ns-3 278 s / 4.3 GB",
    "perm_1024_4000B": "ns-3 127 s / 3.9 GB; htsim 15.7 s / 120 MB (HPCC)",
    "perm_8192_1000B": "target < 30 s / 500 MB; htsim NDP 343.8 s / 2.6 GB",
    "perm_8192_4000B": "htsim NDP 343.8 s / 2.6 GB",
    "rings_128_1000B": "ns-3 not expressible",
    "rings_128_4000B": "htsim 3.3 s / 40 MB (HPCC), 2.4 s / 43 MB (RoCE)",
    "flow_perm_16000": "target < 10 s / 4 GB",
    "flow_random_16000": "target: median recomputation < 1 ms",
}
# Incast-128 (1000 B) in HPCC's ns-3 with the same DCQCN profile and topology: flow completion times
# (us; min, median, max) by where the sender is, and its PFC frames (half pauses, half resumes).
NS3_INCAST_POSITIONS = {"host 0's rack (hosts 1-3)": (14805, 15084, 15330),
                        "host 0's pod (hosts 4-15)": (16007, 17182, 17596),
                        "other pods (hosts 16-127)": (9356, 18124, 21090)}
NS3_INCAST_PFC_FRAMES = 21932
POSITIONS = {"host 0's rack (hosts 1-3)": (1, 3), "host 0's pod (hosts 4-15)": (4, 15),
             "other pods (hosts 16-127)": (16, 127)}
# The faster of htsim's lossless transports (s): issue 3 asks for at least 5x its median.
HTSIM_FASTEST = {
    "perm_128_4000B": 0.49,
    "incast_128_4000B": 0.38,
    "perm_1024_4000B": 15.7,
    "rings_128_4000B": 2.4,
}


def peak_mib(stdout):
    """The run's own peak resident memory, as lockstep reports it: the rusage a parent gets counts
    the parent's size too (Linux carries it across exec), so a driver holding h5py would inflate it."""
    return float(re.search(r"peak resident memory ([0-9.]+) MiB", stdout).group(1))


def run_once(lockstep, scenario, out):
    start = time.monotonic()
    process = subprocess.Popen([lockstep, "run", "--quiet", str(scenario), "-o", out],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = process.communicate()
    wall = time.monotonic() - start
    if process.returncode != 0:
        sys.exit(f"{scenario.name}: lockstep failed\n{stderr}")
    fct = re.search(r"flow completion: (.*)", stdout)
    flows = re.search(r"(\d+ of \d+ flows completed in \S+)", stdout).group(1)
    return wall, peak_mib(stdout), stdout, fct.group(1) if fct else "-", flows


def throughput(stdout, wall):
    """Packet-hops and their rate, or for a flow-level run what its rate recomputations cost."""
    hops = re.search(r"packet-hops (\d+)", stdout)
    if hops:
        return f"{int(hops.group(1)):>10} hops {int(hops.group(1)) / wall / 1e6:>6.2f} M/s"
    return re.search(r"rate recomputations (\d+: wall median \S+ us, p99 \S+ us, max \S+ us)",
                     stdout).group(1)


def pfc_frames(path):
    """`pause frames: 11448 XOFF, 209 refreshes, 11448 XON`, or None for a flow-level run."""
    with h5py.File(path, "r") as f:
        totals = f["port_totals"][:]
    if totals["pauses_sent"].sum() == 0 and totals["ecn_marked"].sum() == 0:
        return None
    return (f"pause frames {int(totals['pauses_sent'].sum())}: {int(totals['xoff_sent'].sum())} "
            f"XOFF, {int(totals['xoff_refreshed'].sum())} refreshes, "
            f"{int(totals['xon_sent'].sum())} XON")


def incast_positions(path):
    """Lines of Incast-128's FCTs by sender position, lockstep beside ns-3."""
    with h5py.File(path, "r") as f:
        flows = f["flows"][:]
    lines = [f"  {'senders':28} {'lockstep min / median / max us':>32} {'ns-3':>24}"]
    for position, (first, last) in POSITIONS.items():
        chosen = (flows["source"] >= first) & (flows["source"] <= last)
        fct_us = flows["fct_ps"][chosen] / 1e6
        ours = f"{fct_us.min():.0f} / {np.median(fct_us):.0f} / {fct_us.max():.0f}"
        ns3 = " / ".join(str(v) for v in NS3_INCAST_POSITIONS[position])
        lines.append(f"  {position:28} {ours:>32} {ns3:>24}")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lockstep", default=str(SOURCE / "build" / "bench" / "lockstep"))
    parser.add_argument("scenarios", nargs="*", default=sorted(PEERS))
    args = parser.parse_args()
    print(f"{'scenario':18} {'wall: median / best':>19} {'peak MB':>8}  packet-hops or recomputations; "
          "flows; FCT; peers")
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.scenarios:
            scenario = SOURCE / "scenarios" / "bench" / f"{name}.yaml"
            runs = [run_once(args.lockstep, scenario, f"{scratch}/{name}.h5") for _ in range(args.runs)]
            wall = statistics.median(r[0] for r in runs)
            best = min(r[0] for r in runs)
            peak = max(r[1] for r in runs)
            stdout, fct, flows = runs[0][2], runs[0][3], runs[0][4]
            walls = f"{wall:.3f} / {best:.3f} s"
            speedup = f"; {HTSIM_FASTEST[name] / wall:.1f}x htsim" if name in HTSIM_FASTEST else ""
            print(f"{name:18} {walls:>19} {peak:>8.0f}  {throughput(stdout, wall)}{speedup}; "
                  f"{flows}; FCT {fct}; {PEERS.get(name, '')}", flush=True)
            frames = pfc_frames(f"{scratch}/{name}.h5")
            if frames:
                peer = (f" (ns-3: {NS3_INCAST_PFC_FRAMES}, half XOFF, half XON)"
                        if name == "incast_128_1000B" else "")
                print(f"  {frames}{peer}")
            if name == "incast_128_1000B":
                print("\n".join(incast_positions(f"{scratch}/{name}.h5")), flush=True)


if __name__ == "__main__":
    main()
