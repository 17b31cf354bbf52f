#!/usr/bin/python3
"""Print what a lockstep run did: per step for a job run, flows and ports for a fabric run, per size
for an nccl-tests run.

    analysis/summarize.py RUN.h5

A job run gets a line per step: step time, slowest rank, MFU, TFLOP/s per GPU, and where the
ranks' time went on average (compute, exposed TP, PP and DP communication, pipeline bubble, data
wait, waiting for other ranks). A fabric run gets its
flow completion times and the ports that queued most. Either, when faults or defences acted, then
lists the faults, the defences' actions, the hang report (blocked ranks) and the goodput. An nccl-tests run gets a line per size: time,
algbw and busbw (GB/s, nccl-tests' definitions), the algorithm and protocol that ran, and the
slowest rank (whose transfers out and in took longest) with its time over the median rank's. Which
it is comes from the tables in the file.
Debian's /usr/bin/python3 is named on purpose: it is the interpreter that has h5py and pandas here.
"""

import signal
import sys

import pandas as pd

from lockstep_analysis import (flow_completion_summary, load_table, meta, run_kind, step_summary,
                               tables as run_tables, with_seconds)

STEP_COLUMNS = {
    "step": "step",
    "attempt": "attempt",
    "step_s": "step time (s)",
    "slowest_rank": "slowest rank",
    "mfu": "MFU",
    "tflops_per_gpu": "TFLOP/s per GPU",
    "mean_compute_s": "compute (s)",
    "mean_tp_comm_s": "TP (s)",
    "mean_pp_comm_s": "PP (s)",
    "mean_dp_comm_s": "DP (s)",
    "mean_bubble_s": "bubble (s)",
    "mean_data_wait_s": "data (s)",
    "mean_wait_for_others_s": "waiting (s)",
}

PORT_COLUMNS = {
    "node": "node",
    "port": "port",
    "traffic_class": "class",
    "max_queue_bytes": "max queue (bytes)",
    "bytes_sent": "sent (bytes)",
    "ecn_marked": "ECN marked",
    "pauses_sent": "pauses sent",
    "pauses_received": "pauses received",
    "paused_ps": "paused (ps)",
    "dropped_packets": "dropped",
}
BUSIEST_PORTS = 5
INCIDENT_ROWS = 20


def print_job(path, info):
    summary = step_summary(path)
    print(f"{path}: {info['scenario_file']}, seed {info['seed']}, lockstep {info['version']}, "
          f"{info['outcome']}, {len(summary)} step(s)")
    if not summary.empty:
        with pd.option_context("display.float_format", "{:.6f}".format):
            print(summary[list(STEP_COLUMNS)].rename(columns=STEP_COLUMNS).to_string(index=False))
    print_incidents(path)


def print_incidents(path):
    """The faults, what the defences did, the hang report and the goodput, when there are any."""
    tables = set(run_tables(path))
    for table, columns in (("faults", ["kind", "target", "start_s", "end_s", "detail"]),
                           ("defences", ["defence", "at_s", "target", "detail"]),
                           ("blocked_ranks", ["rank", "gpu", "step", "waiting_in", "since_s",
                                              "never_arrived"])):
        if table not in tables:
            continue
        rows = with_seconds(load_table(path, table))
        if rows.empty:
            continue
        if table == "faults":  # -1: lasts to the end of the run
            rows["end_s"] = rows["end_s"].where(rows["end_ps"] >= 0, float("nan"))
        print(f"{table}:")
        with pd.option_context("display.max_colwidth", 200):
            print(rows[columns].head(INCIDENT_ROWS).to_string(index=False))
        if len(rows) > INCIDENT_ROWS:
            print(f"... {len(rows) - INCIDENT_ROWS} more")
    if "goodput" in tables:
        g = load_table(path, "goodput").iloc[0]
        if g["interruptions"] > 0:
            total = g["total_ps"]
            parts = ", ".join(f"{name} {100 * g[column] / total:.1f}%" for name, column in (
                ("useful", "useful_ps"), ("checkpointing", "checkpointing_ps"),
                ("restarting", "restarting_ps"), ("lost", "lost_ps")))
            print(f"goodput {100 * g['goodput']:.1f}% over {int(g['interruptions'])} "
                  f"interruptions, {int(g['steps_redone'])} steps redone: {parts}")


def print_fabric(path, info):
    fct = flow_completion_summary(path)
    ports = load_table(path, "port_totals")
    print(f"{path}: {info['scenario_file']}, seed {info['seed']}, lockstep {info['version']}, "
          f"{info['outcome']}, {fct['count']} flow(s) completed")
    if fct["count"]:
        print("flow completion time (s): " + ", ".join(
            f"{name} {fct[name + '_s']:.9f}" for name in ["min", "median", "p99", "max"]))
    print(f"ports: {len(ports)} port-class pair(s) active; "
          f"{int(ports['pauses_sent'].sum())} pause frame(s) sent, "
          f"{int(ports['ecn_marked'].sum())} ECN mark(s), "
          f"{int(ports['dropped_packets'].sum())} packet(s) ({int(ports['dropped_bytes'].sum())} "
          f"bytes) dropped")
    if ports.empty:
        return
    busiest = ports.sort_values(["max_queue_bytes", "node", "port", "traffic_class"],
                                ascending=[False, True, True, True], kind="stable")
    print(f"deepest queues (top {min(BUSIEST_PORTS, len(ports))} of {len(ports)}):")
    print(busiest.head(BUSIEST_PORTS)[list(PORT_COLUMNS)].rename(columns=PORT_COLUMNS)
          .to_string(index=False))
    print_incidents(path)


def print_nccl_tests(path, info):
    results = load_table(path, "nccl_tests")
    print(f"{path}: {info['scenario_file']}, lockstep {info['version']}, {len(results)} size(s)")
    if results.empty:
        return
    seconds = results["time_ps"] / 1e12
    table = pd.DataFrame({
        "op": results["op"],
        "ranks": results["ranks"],
        "size (B)": results["bytes"],
        "time (us)": seconds * 1e6,
        "algbw (GB/s)": results["bytes"] / seconds / 1e9,
        "busbw (GB/s)": results["bytes"] / seconds / 1e9 * results["bus_factor"],
        "algorithm": results["algorithm"],
        "protocol": results["protocol"],
    })
    # The rank whose transfers out and in took longest is on the path the others waited for; when
    # none stands out from the median there is no slowest rank to name.
    ranks = load_table(path, "nccl_tests_ranks")
    ranks["transfer_ps"] = ranks["send_time_ps"] + ranks["receive_time_ps"]
    per_size = ranks.groupby("size_index")
    slowest = ranks.loc[per_size["transfer_ps"].idxmax()].set_index("size_index")
    median = per_size["transfer_ps"].median()
    stands_out = slowest["transfer_ps"] > median
    table["slowest rank"] = slowest["rank"].where(stands_out).reindex(results.index).map(
        lambda r: "-" if pd.isna(r) else str(int(r))).to_numpy()
    table["x median"] = (slowest["transfer_ps"] / median).where(stands_out).reindex(
        results.index).to_numpy()
    with pd.option_context("display.float_format", "{:.2f}".format):
        print(table.to_string(index=False))


PRINTERS = {"job": print_job, "fabric": print_fabric, "nccl-tests": print_nccl_tests}


def main(argv):
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) != 2:
        print(f"usage: {argv[0]} RUN.h5", file=sys.stderr)
        return 2
    path = argv[1]
    try:
        info = meta(path)
        PRINTERS[run_kind(path)](path, info)
    except (OSError, KeyError, ValueError) as e:
        print(f"{argv[0]}: cannot read '{path}': {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    # Piped into `head`, stop quietly when the reader has had enough.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main(sys.argv))
