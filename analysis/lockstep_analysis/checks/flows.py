"""A fabric run's flows against the time each would take alone on an idle path.

Flows differ in size, so their completion times are compared with their own ideal: the bytes at
the sender's line rate plus a round trip of propagation. A tail far above it is what congestion
cost the flows; the pause check names where it started.
"""

import numpy as np

from lockstep_analysis.fct import flow_completion_summary
from lockstep_analysis.findings import UNKNOWN_PS, Finding, duration
from lockstep_analysis.flow_paths import flow_paths

# A flow that took more than twice its idle-path time waited for others as long as it ran.
SLOWED_BEYOND = 2


def slowdowns(run):
    """Each completed flow's completion time over its idle-path time, or None without flows."""
    flows = run.table("flows")
    if flows is None or flows.empty:
        return None
    nic = run.nic_ports
    paths = flow_paths(run.path)
    ideal = (paths["bytes"] * 8 * 1e12 / paths["source"].map(nic["rate_bps"])
             + 2 * paths["hops"] * paths["source"].map(nic["delay_ps"]))
    return paths.assign(slowdown=paths["fct_ps"] / ideal)


def check(run):
    paths = slowdowns(run)
    if paths is None:
        return []
    tail = float(np.quantile(paths["slowdown"], 0.99, method="inverted_cdf"))  # nearest rank
    if tail < SLOWED_BEYOND:
        return []
    fct = flow_completion_summary(run.path)
    worst = paths.sort_values("slowdown", ascending=False).iloc[0]
    evidence = (f"{fct['count']} flow(s): completion time median {duration(fct['median_ps'])}, "
                f"p99 {duration(fct['p99_ps'])}; the 99th percentile flow took {tail:.1f}x "
                f"its time alone on an idle path; the slowest, flow {int(worst['flow'])} "
                f"({run.names.node(worst['source'])} to {run.names.node(worst['destination'])}, "
                f"path {worst['path']}), {worst['slowdown']:.1f}x")
    return [Finding("inter_node_communication", "fct_tail", UNKNOWN_PS, float("nan"), "", "",
                    evidence, "The slow flows shared links with others (an incast, ECMP "
                    "collisions): spread the traffic (placement, adaptive routing), and see where "
                    "it queued (the congestion finding, if any).")]
