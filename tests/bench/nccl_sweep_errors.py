#!/usr/bin/python3
"""lockstep nccl-tests against published nccl-tests sweeps: busbw and time errors per size.

For every sweep in tests/data/nccl_sweeps/ (those marked `complete: no` only with --all), reads
its `# key: value` header and its table, runs `lockstep nccl-tests` on the matching servers (preset
from the GPU, nodes from the rank count, the NIC rate, NCCL_ALGO/NCCL_PROTO when the run forced
them) over the same sizes, and prints per size the measured and simulated busbw and time and their
errors. Both sides use the in-place columns (in-place busbw is NCCL's default choice). Each sweep
is then scored against the project's targets: busbw within 10% at every size >= 64 MiB, within 20%
from 64 KiB to 64 MiB, and time within 25% at <= 8 KiB. A sweep whose hardware lockstep cannot
express is reported as skipped, with the missing option, rather than compared.

    tests/bench/nccl_sweep_errors.py [--sweep NAME] [--bin PATH] [--all]

Exit status 0 for a report, whatever the errors (a benchmark, not a test); 2 for bad arguments.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import h5py

SOURCE = Path(__file__).resolve().parents[2]
SWEEPS = SOURCE / "tests" / "data" / "nccl_sweeps"

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30

# The project's targets: (band name, lowest size, highest size, measure compared, tolerance %).
TARGETS = [
    (">=64MiB busbw 10%", 64 * MIB, None, "busbw", 10.0),
    ("64KiB-64MiB busbw 20%", 64 * KIB, 64 * MIB - 1, "busbw", 20.0),
    ("<=8KiB time 25%", 0, 8 * KIB, "time", 25.0),
]

PRESETS = {"A100": "dgx-a100", "H100": "dgx-h100", "H200": "dgx-h200"}

# NCCL settings whose value is what lockstep does anyway (CollNet off; NVLS and RDMA on).
LOCKSTEP_DEFAULTS = {"NCCL_COLLNET_ENABLE": "0", "NCCL_NVLS_ENABLE": "1", "NCCL_IB_DISABLE": "0",
                     "NCCL_IB_QPS_PER_CONNECTION": "1", "NCCL_IB_SPLIT_DATA_ON_QPS": "0"}

# nccl-tests prints busbw with two decimals: below 0.1 GB/s the rounding alone is 5% or more.
PRECISE_BUSBW = 0.1

# Hardware or configurations lockstep has no option for; the sweep is skipped with the reason.
# Searched in the header's hardware, environment, algorithm_protocol and notes lines.
NOT_EXPRESSIBLE = [
    (re.compile(r"TCPXO"),
     "GPUDirect-TCPXO over Ethernet: --transport offers only rdma and socket"),
    (re.compile(r"internally inconsistent"),
     "the source is internally inconsistent (job size, sizes) and does not print the NICs per "
     "node"),
    (re.compile(r"untuned", re.IGNORECASE),
     "a misconfigured RoCE fabric (no NCCL_IB_GID_INDEX): no lockstep option models a wrong RoCE "
     "GID (queue pairs per connection it does: hosts.queue_pairs_per_connection)"),
]


def human(size):
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size} B"


def parse_sweep(path):
    """The header's keys, the table's step factor and its rows with size > 0.

    Rows are (size, out-of-place (time us, busbw), in-place (time us, busbw)). The last eight
    columns are always the two halves (time, algbw, busbw, #wrong or error), whether or not the
    nccl-tests version printed a root column; 0-byte rows (gather/scatter requests below one
    element per rank) have nothing to compare.
    """
    header, rows, factor = {}, [], None
    in_header = True
    gpus_per_thread = None
    for line in path.read_text().splitlines():
        if line.startswith("#"):
            key = re.match(r"# ([a-z_]+): (.*)$", line)
            if in_header and key:
                header[key.group(1)] = key.group(2)
            elif line.strip() == "#":
                in_header = False
            step = re.search(r"step:\s*(\d+)\(factor\)", line)
            if step:
                factor = int(step.group(1))
            threads = re.search(r"nThread\s+\d+\s+nGpus\s+(\d+)", line)
            if threads:
                gpus_per_thread = int(threads.group(1))
            continue
        fields = line.split()
        if len(fields) < 12 or int(fields[0]) == 0:
            continue
        rows.append((int(fields[0]), (float(fields[-8]), float(fields[-6])),
                     (float(fields[-4]), float(fields[-2]))))
    if gpus_per_thread:
        header["gpus_per_thread"] = str(gpus_per_thread)
    return header, factor, rows


def leading_int(text):
    match = re.match(r"\s*(\d+)", text or "")
    return int(match.group(1)) if match else None


def lockstep_setup(header):
    """(arguments after OP, notes on approximations) or (None, reason it cannot be expressed)."""
    hardware = header.get("hardware", "")
    environment = header.get("environment", "")
    searched = " ".join(header.get(k, "") for k in
                        ("hardware", "environment", "algorithm_protocol", "notes"))
    for pattern, reason in NOT_EXPRESSIBLE:
        if pattern.search(searched):
            return None, reason

    gpu = re.search(r"\b(A100|H100|H200)\b", hardware)
    if not gpu:
        return None, "GPU not A100/H100/H200: --preset offers dgx-a100, dgx-h100, dgx-h200"
    per_node = re.search(r"(\d+) GPUs/node", hardware)
    gpus_per_node = int(per_node.group(1)) if per_node else 8
    ranks = leading_int(header.get("ranks"))
    if not ranks or ranks % gpus_per_node:
        return None, f"ranks ({header.get('ranks')}) not whole nodes of {gpus_per_node} GPUs"
    nodes = ranks // gpus_per_node
    args = ["--nodes", str(nodes), "--preset", PRESETS[gpu.group(1)]]
    if gpus_per_node != 8:
        args += ["--gpus-per-node", str(gpus_per_node)]
    # How many GPUs one nccl-tests thread launched on (its "nGpus" line): the host's share of an
    # iteration.
    if int(header.get("gpus_per_thread", "1")) > 1:
        args += ["-g", header["gpus_per_thread"]]
    notes = []

    if nodes > 1:
        # The NIC rate: the first "400 Gb/s" or "400G" of the hardware line (GPU memory is
        # written "80GB", which this does not match).
        rate = re.search(r"(\d+)\s*G(?:b/s|bps)?\b", hardware)
        if not rate:
            return None, "inter-node NICs not stated: no rate for network.topology.link_rate"
        rate = int(rate.group(1))
        # NICs per node: "8x ConnectX-7 400 Gb/s", "16x 100 Gb/s", or "16 RDMA NICs".
        count = (re.search(r"(\d+)\s*x\s*[^,;()]*?\d+\s*G(?:b/s|bps)?\b", hardware)
                 or re.search(r"(\d+) RDMA NICs", hardware))
        count = int(count.group(1)) if count else gpus_per_node
        if count % gpus_per_node:
            return None, (f"{count} NICs per node for {gpus_per_node} GPUs: "
                          "lockstep has one NIC per GPU")
        per_gpu = rate * count // gpus_per_node
        if count != gpus_per_node:
            notes.append(f"{count} x {rate} Gb/s NICs per node run as one {per_gpu} Gb/s NIC per "
                         "GPU (lockstep has one NIC per GPU; same rate per GPU)")
        args += ["--set", f"network.topology.link_rate={per_gpu}Gbps"]
        if "RoCE" in hardware:
            notes.append("RoCE v2 fabric: lockstep's flow level does not tell RoCE from InfiniBand")
        if re.search(r"\bVMs?\b", hardware):
            notes.append("virtual machines (GPU/NIC passthrough) run as bare-metal servers")

    # NCCL settings lockstep has options for; the rest are listed as not passed.
    settings = {name: value for name, value in
                re.findall(r"\b(NCCL_[A-Z0-9_]+)=([^\s,;]+)", environment)
                if LOCKSTEP_DEFAULTS.get(name) != value}
    algo, proto = settings.pop("NCCL_ALGO", None), settings.pop("NCCL_PROTO", None)
    if settings.pop("NCCL_NVLS_ENABLE", None) == "0" and not algo:
        algo = "^NVLS,NVLSTree"  # NCCL_NVLS_ENABLE=0 turns off both
    # In-network (InfiniBand) SHARP is NCCL's CollNet, which joins NCCL's choice (lockstep's with
    # NCCL_COLLNET_ENABLE=1); "NVLink SHARP" is NVLS.
    collnet = (settings.pop("NCCL_COLLNET_ENABLE", None) == "1"
               or re.search(r"(?<!NVLink )SHARP", hardware + " " + header.get("algorithm_protocol", "")))
    if collnet and not algo:
        algo = "Ring,Tree,NVLS,NVLSTree,CollNetDirect"
    if algo:
        args += ["--algo", algo]
    if proto:
        args += ["--proto", proto]
    if settings.pop("NCCL_IB_DISABLE", None) == "1":
        args += ["--transport", "socket"]
    queue_pairs = settings.pop("NCCL_IB_QPS_PER_CONNECTION", None)
    if queue_pairs and "NCCL_IB_SPLIT_DATA_ON_QPS" not in settings:
        args += ["--set", f"hosts.queue_pairs_per_connection={queue_pairs}"]
    min_ctas = settings.pop("NCCL_MIN_CTAS", None)
    if min_ctas:  # NCCL's CTAs are its channels; lockstep's default is one per GPU of a node
        args += ["--channels", str(max(int(min_ctas), gpus_per_node))]
    if settings:
        notes.append("NCCL settings not passed (no lockstep option): "
                     + ", ".join(sorted(settings)))
    return args, notes


def run_lockstep(binary, op, args, sizes, factor, out):
    """The command, lockstep's first output line (its error if it failed) and its rows
    {size: (time us, busbw GB/s, algo/proto)} (None if it failed)."""
    command = [binary, "nccl-tests", op, *args, "-b", str(sizes[0]), "-e", str(sizes[-1]),
               "-f", str(factor), "-o", out]
    # The sweep's header decides NCCL_ALGO/NCCL_PROTO, not the shell this script runs in.
    environment = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")}
    result = subprocess.run(command, capture_output=True, text=True, env=environment)
    if result.returncode != 0:
        return command, result.stderr.strip() or f"exit status {result.returncode}", None
    rows = {}
    with h5py.File(out, "r") as f:
        for row in f["nccl_tests"][()]:
            time_ps = int(row["time_ps"])
            busbw = int(row["bytes"]) / time_ps * 1e12 / 1e9 * float(row["bus_factor"])
            choice = f"{row['algorithm'].decode()}/{row['protocol'].decode()}"
            rows[int(row["bytes"])] = (time_ps / 1e6, busbw, choice)
    return command, result.stdout.splitlines()[0], rows


def error(simulated, measured):
    return None if measured == 0 else 100.0 * (simulated - measured) / measured


def band_of(size):
    for band in TARGETS:
        low, high = band[1], band[2]
        if size >= low and (high is None or size <= high):
            return band
    return None


def spread(pairs):
    """Median and largest |difference| % of (size, out-of-place, in-place) and the size of it."""
    differences = sorted((abs(error(ip, oop)), size) for size, oop, ip in pairs if oop > 0)
    if not differences:
        return "no sizes"
    largest, size = differences[-1]
    return (f"median {differences[len(differences) // 2][0]:.1f}%, "
            f"largest {largest:.1f}% at {human(size)}")


def percent(value):
    return "n/a" if value is None else f"{value:+.1f}%"


def compare(name, header, factor, rows, binary, directory):
    """Prints the sweep's table and target summary; returns its summary cells."""
    op = header.get("op", "").split()[0]
    print(f"== {name}: {op}, {header.get('ranks', '?').split(' (')[0]} ranks, "
          f"NCCL {header.get('nccl_version', 'not stated').split(' (')[0]}")
    print(f"   hardware: {header.get('hardware', 'not stated')}")
    args, notes = lockstep_setup(header)
    if args is None:
        print(f"   SKIPPED, cannot be expressed in lockstep: {notes}\n")
        return "skipped: " + notes
    sizes = [size for size, _, _ in rows]
    command, banner, simulated = run_lockstep(binary, op, args, sizes, factor or 2,
                                              str(Path(directory) / f"{name}.h5"))
    print("   lockstep: " + " ".join(str(c) for c in command[1:-2]))
    for note in notes:
        print(f"   note: {note}")
    if simulated is None:
        print(f"   lockstep FAILED: {banner}\n")
        return "lockstep failed"
    print(f"   {banner}")

    print(f"   {'size':>8} {'busbw GB/s':>10} {'lockstep':>9} {'error':>8} {'time us':>10} "
          f"{'lockstep':>10} {'error':>8}  {'algo/proto':<12} target")
    results = {band[0]: [] for band in TARGETS}
    for size, _, (time_us, busbw) in rows:
        if size not in simulated:
            print(f"   {human(size):>8} not in lockstep's output")
            continue
        sim_time, sim_busbw, choice = simulated[size]
        busbw_error = error(sim_busbw, busbw) if busbw >= PRECISE_BUSBW else None
        time_error = error(sim_time, time_us)
        verdict = ""
        band = band_of(size)
        if band:
            label, _, _, measure, tolerance = band
            value = busbw_error if measure == "busbw" else time_error
            passed = value is not None and abs(value) <= tolerance
            results[label].append((passed, value, size))
            verdict = f"{measure} {tolerance:g}% {'ok' if passed else 'MISS'}"
        print(f"   {human(size):>8} {busbw:10.2f} {sim_busbw:9.2f} {percent(busbw_error):>8} "
              f"{time_us:10.2f} {sim_time:10.2f} {percent(time_error):>8}  {choice:<12} {verdict}")

    # How far the run's own two halves are apart: a yardstick for the errors above.
    print("   measured out-of-place vs in-place: busbw at >= 64 KiB "
          + spread((size, oop[1], ip[1]) for size, oop, ip in rows if size >= 64 * KIB)
          + "; time at <= 8 KiB "
          + spread((size, oop[0], ip[0]) for size, oop, ip in rows if size <= 8 * KIB))

    cells = []
    for label, _, _, _, _ in TARGETS:
        checked = results[label]
        if not checked:
            print(f"   {label:<22} no sizes in the sweep")
            cells.append((0, 0, "-"))
            continue
        passed = sum(ok for ok, _, _ in checked)
        worst = max(checked, key=lambda c: float("inf") if c[1] is None else abs(c[1]))
        print(f"   {label:<22} {passed}/{len(checked)} sizes pass, worst "
              f"{percent(worst[1])} at {human(worst[2])}")
        cells.append((passed, len(checked),
                      f"{passed}/{len(checked)} worst {percent(worst[1])} @{human(worst[2])}"))
    print()
    return cells


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", help="one sweep: its file name in tests/data/nccl_sweeps "
                        "(with or without .txt); runs even if marked incomplete")
    parser.add_argument("--bin", default=str(SOURCE / "build" / "release" / "lockstep"),
                        help="the lockstep program (default: build/release/lockstep)")
    parser.add_argument("--all", action="store_true",
                        help="also the sweeps marked `complete: no`")
    args = parser.parse_args()
    if not os.access(args.bin, os.X_OK):
        print(f"{args.bin}: not an executable lockstep program", file=sys.stderr)
        sys.exit(2)
    if args.sweep:
        path = SWEEPS / (args.sweep if args.sweep.endswith(".txt") else args.sweep + ".txt")
        if not path.is_file():
            print(f"no sweep {args.sweep} in {SWEEPS}", file=sys.stderr)
            sys.exit(2)
        paths = [path]
    else:
        paths = sorted(SWEEPS.glob("*.txt"))

    summary = []
    with tempfile.TemporaryDirectory() as directory:
        for path in paths:
            header, factor, rows = parse_sweep(path)
            if not args.sweep and not args.all and header.get("complete", "").startswith("no"):
                summary.append((path.stem, "not run: complete: no (use --all)"))
                continue
            summary.append((path.stem, compare(path.stem, header, factor, rows, args.bin,
                                               directory)))

    width = max(len(name) for name, _ in summary)
    print("== summary (in-place busbw and time; pass/sizes, worst error @ size)")
    print(f"{'sweep':<{width}}  " + "  ".join(f"{label:<30}" for label, *_ in TARGETS))
    compared = [cells for _, cells in summary if not isinstance(cells, str)]
    for name, cells in summary:
        if isinstance(cells, str):
            print(f"{name:<{width}}  {cells}")
        else:
            print(f"{name:<{width}}  " + "  ".join(f"{text:<30}" for _, _, text in cells))
    if len(compared) > 1:
        totals = [f"{sum(c[i][0] for c in compared)}/{sum(c[i][1] for c in compared)}"
                  for i in range(len(TARGETS))]
        print(f"{'sweeps compared: ' + str(len(compared)):<{width}}  "
              + "  ".join(f"{total:<30}" for total in totals))


if __name__ == "__main__":
    main()
