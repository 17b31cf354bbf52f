"""PFC pauses in the fabric, traced to where they start.

A paused port is a victim; the cause is at the head of the pause tree. Either a NIC pauses its
switch because its host does not drain what it receives (a stuck receive pipeline: a PFC storm; or
a slow receiver), or a switch port queues more than it can send and the switch pauses the ports
feeding it (an incast or a hot link). Pauses then spread hop by hop to ports that share nothing
with the cause but a switch. The cross-layer rule: GPUs idle in collectives while pauses rise on
one leaf is congestion, not the GPUs, so for a job the evidence sets the slowed steps' time in
communication against their kernels.
"""

from lockstep_analysis.findings import UNKNOWN_PS, WORTH_REPORTING, Finding, duration, ids, percent
from lockstep_analysis.step_budget import KEY
from lockstep_analysis.units import duration_ps

# Paused ports named in the evidence besides the head of the tree.
VICTIM_PORTS_NAMED = 3


def check(run, budget):
    totals, ports = run.rows("port_totals"), run.rows("ports")
    if totals.empty or not (totals["paused_ps"] > 0).any():
        return []
    totals = totals.merge(ports[["node", "port", "peer", "peer_port"]], on=["node", "port"])
    endpoints = run.names.endpoints
    pausing_nics = totals[(totals["node"] < endpoints) & (totals["pauses_sent"] > 0)]
    if not pausing_nics.empty:
        return [_storm(run, budget, totals, nic) for nic in
                pausing_nics.sort_values("pauses_sent", ascending=False).itertuples()]
    hot = _hot_port(run, budget, totals)
    # Some pausing is how a lossless fabric absorbs bursts; in a job it matters when it costs.
    return [hot] if budget is None or hot.share_of_step >= WORTH_REPORTING else []


def _storm(run, budget, totals, nic):
    names = run.names
    switch_port = totals[(totals["node"] == nic.peer) & (totals["port"] == nic.peer_port)]
    paused_ps = int(switch_port["paused_ps"].max()) if not switch_port.empty else 0
    head = names.port_to(nic.peer, nic.peer_port, nic.node)
    start, end = _paused_interval(run, nic.peer, nic.peer_port, nic.traffic_class)
    evidence = (f"{names.node(nic.node)} sent {nic.pauses_sent} PFC pause(s) and {head} was "
                f"paused {duration(paused_ps)} (from {duration(start)} to "
                f"{duration(end)}, {percent(paused_ps / run.meta['end_ps'])} of the run): "
                f"the NIC did not drain what it received; "
                + _spread(run, totals, {(nic.peer, nic.peer_port)}))
    server, rank = run.server(nic.node), run.rank_on(nic.node)
    lost_per_step, share, victim = _job_slowed(run, budget, start, end)
    if rank is None and run.is_job:
        victim += f"; {names.node(nic.node)} is not one of the job's"
    action = (f"Find why {names.node(nic.node)} (server {server}) stops draining (a stuck receive "
              "pipeline or a hung host: reset the NIC, check its driver and host). "
              + _watchdogs(run.scenario["defences"]))
    return Finding("inter_node_communication", "pfc_storm", lost_per_step, share,
                   "" if rank is None else str(rank), str(server), evidence + victim, action,
                   fabric=names.port(nic.peer, nic.peer_port),
                   targets=frozenset([f"nic {nic.node}", f"node {server}"]))


def _hot_port(run, budget, totals):
    """No NIC paused anyone: the head is the switch port that queued most without being paused."""
    names = run.names
    switches = totals[totals["node"] >= names.endpoints]
    unpaused = switches[switches["paused_ps"] == 0]
    hot = (unpaused if not unpaused.empty else switches).sort_values(
        ["max_queue_bytes", "ecn_marked"], ascending=False).iloc[0]
    head = names.port_to(hot["node"], hot["port"], hot["peer"])
    start, end = _paused_interval_of_any(run, totals)
    evidence = (f"{head} queued up to {hot['max_queue_bytes'] / 1e6:.1f} MB with "
                f"{int(hot['ecn_marked'])} ECN mark(s) and was not paused itself, while "
                f"{names.node(hot['node'])} paused the ports feeding it: more arrives for it than "
                "it can send; " + _spread(run, totals, {(hot["node"], hot["port"])}))
    lost_per_step, share, victim = _job_slowed(run, budget, start, end)
    action = (f"Spread the traffic converging on {names.port(hot['node'], hot['port'])}: an incast "
              "or an ECMP collision (rank placement, adaptive routing); and "
              + _slow_senders_sooner(run.scenario["network"]))
    return Finding("inter_node_communication", "congested_port", lost_per_step, share, "", "",
                   evidence + victim, action, fabric=names.port(hot["node"], hot["port"]))


def _watchdogs(defences):
    """The PFC watchdogs that would cut a stuck receiver off, from those the run had off."""
    off = [f"defences.{name}" for name in ("nic_pfc_watchdog", "switch_pfc_watchdog")
           if not defences[name]["enabled"]]
    if off:
        return (f"Turn on {' and '.join(off)} (off here) so that a stuck receiver is cut off "
                "instead of pausing the fabric.")
    after = defences["nic_pfc_watchdog"]["after"]
    return (f"Both PFC watchdogs are on: let them act sooner (defences.nic_pfc_watchdog.after and "
            f"switch_pfc_watchdog.after, {after} and {defences['switch_pfc_watchdog']['after']} "
            "here).")


def _slow_senders_sooner(network):
    """What makes senders back off before PFC pauses, from the run's congestion control."""
    ecn = network["switches"]["ecn"]
    if network["transport"]["congestion_control"] == "none":
        return ("turn on DCQCN (network.transport.congestion_control: dcqcn, none here) so that "
                "senders slow down on ECN marks before PFC has to pause.")
    if not ecn["enabled"]:
        return ("turn on ECN marking (network.switches.ecn.enabled, off here): DCQCN cannot slow "
                "senders without it.")
    return (f"mark earlier so that DCQCN slows senders before PFC pauses (network.switches.ecn: "
            f"kmin {ecn['kmin']}, kmax {ecn['kmax']} here).")


def _spread(run, totals, head):
    names = run.names
    paused = totals[totals["paused_ps"] > 0]
    victims = paused[[(n, p) not in head for n, p in zip(paused["node"], paused["port"])]]
    if victims.empty:
        return "no other port was paused"
    worst = victims.sort_values("paused_ps", ascending=False).head(VICTIM_PORTS_NAMED)
    switches = victims.loc[victims["node"] >= names.endpoints, "node"].nunique()
    nics = victims.loc[victims["node"] < names.endpoints, "node"].nunique()
    owners = " and ".join(text for count, text in ((switches, f"{switches} switch(es)"),
                                                    (nics, f"{nics} NIC(s)")) if count)
    return (f"the pause spread to {len(victims)} other port(s) of {owners}, e.g. "
            + ", ".join(f"{names.port_to(r.node, r.port, r.peer)} paused {duration(r.paused_ps)}"
                        for r in worst.itertuples()))


def _paused_interval(run, node, port, traffic_class):
    """When a port was paused: from the sample before its paused time first grew to the sample at
    which it reached its total; the whole run without samples."""
    samples = run.rows("port_samples")
    end_of_run = run.meta["end_ps"]
    if samples.empty:
        return 0, end_of_run
    mine = samples[(samples["node"] == node) & (samples["port"] == port)
                   & (samples["traffic_class"] == traffic_class)].sort_values("time_ps")
    paused = mine[mine["paused_ps"] > 0]
    if paused.empty:
        return 0, end_of_run
    period = duration_ps(run.scenario["network"]["sample_period"])
    reached = paused[paused["paused_ps"] == paused["paused_ps"].max()]
    start = max(0, int(paused["time_ps"].iloc[0]) - period)
    return start, int(reached["time_ps"].iloc[0])


def _paused_interval_of_any(run, totals):
    longest = totals.sort_values("paused_ps", ascending=False).iloc[0]
    return _paused_interval(run, longest["node"], longest["port"], longest["traffic_class"])


def _job_slowed(run, budget, start, end):
    """(ps per step, share of the step, evidence) of the job's steps that ran while the port was
    paused, with the cross-layer check: their extra time went to communication, not to kernels."""
    if budget is None:
        return UNKNOWN_PS, float("nan"), ""
    steps = budget.steps
    hit = budget.steps_overlapping(start, end).to_numpy()
    if not hit.any():
        return 0, 0.0, "; no step of the job ran during it"
    text = (f"; the job's step(s) {ids(steps.loc[hit, 'step'])} during it took up to "
            f"{duration(steps.loc[hit, 'step_ps'].max())}")
    if (~hit).any():
        during, others = (budget.rank_steps.merge(steps.loc[mask, KEY], on=KEY)
                          for mask in (hit, ~hit))
        text += (f" against {duration(steps.loc[~hit, 'step_ps'].median())} for the others, "
                 f"communication {duration(during['communication_ps'].mean())} against "
                 f"{duration(others['communication_ps'].mean())} per rank-step, kernels "
                 f"{duration(during['compute_ps'].mean())} against "
                 f"{duration(others['compute_ps'].mean())}: GPUs idle in collectives, the fabric "
                 "congested, not the GPUs")
    return (*budget.cost(budget.excess_of_steps(hit)), text)
