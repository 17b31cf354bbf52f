"""What the fabric's record of each transfer (`messages`) says about NICs, host paths and cables.

A bulk transfer on an idle path runs near its NIC's line rate, so its achieved rate (bytes over the
time from first packet sent to last byte delivered) is a measurement of the path it took. NCCL's
channels share a NIC (a queue pair each, and a flow-level collective's flows run side by side), so
against the line rate it is the NIC's bytes over the time it had any in flight that measure:
- every NIC far below line rate, alike, with no congestion in the fabric: the hosts cap the
  transfers (NCCL on TCP sockets, or data staged through host memory without GPUDirect RDMA);
- one NIC slower than its peers both sending and receiving, step after step: that NIC's host
  path (its PCIe/NUMA placement); its partners are slow one way only, in the transfers they share
  with it;
- transfers over one cable stalled for far longer than any sharing explains, in episodes: the cable
  went down (and came back: it flaps).
"""

import numpy as np
import pandas as pd

from lockstep_analysis.findings import WORTH_REPORTING, Finding, duration, ids, listed, percent
from lockstep_analysis.step_budget import cost_per_step

# A transfer counts as bulk when putting it on the wire takes this many times the path's
# propagation delay, so that its rate measures bandwidth, not latency.
BULK_OVER_PROPAGATION = 10
# What RDMA achieves of the line rate on an idle path (headers and acknowledgements take the
# rest), and the share below which bulk transfers are not running over RDMA at line rate.
RDMA_SHARE_OF_LINE = 0.9
HOST_CAPPED_BELOW = 0.6
# Staging through host memory halves a NIC's rate; NCCL's socket transport runs at a tenth or less.
# Between the two, a cap below this share of the line is sockets.
SOCKETS_BELOW = 0.25
# A NIC this much slower than the median NIC (and beyond their spread) is slower than its peers.
SLOWER_THAN_PEER_NICS = 0.25
SPREADS = 3
# A transfer an order of magnitude slower than the median did not share a link with a handful of
# others (which divides its rate by a handful): its path stopped.
STALLED_SLOWDOWN = 10


def check(run, budget):
    transfers = _bulk_transfers(run)
    if transfers.empty:
        return []
    return [*_host_capped(run, budget, transfers), *_slow_nics(run, budget, transfers),
            *_stalled_cables(run, budget, transfers)]


def _bulk_transfers(run):
    messages, nic = run.table("messages"), run.nic_ports
    if messages is None or messages.empty or nic.empty:
        return pd.DataFrame()
    line = messages["source"].map(nic["rate_bps"])
    delay = messages["source"].map(nic["delay_ps"])
    took = messages["delivered_ps"] - messages["first_sent_ps"]
    wire_ps = messages["bytes"] * 8 * 1e12 / line
    bulk = (wire_ps >= BULK_OVER_PROPAGATION * messages["hops"] * delay) & (took > 0)
    return messages[bulk].assign(took_ps=took[bulk], line_bps=line[bulk],
                                 rate_bps=messages["bytes"][bulk] * 8 * 1e12 / took[bulk])


def _fabric_congested(run):
    totals = run.rows("port_totals")
    return not totals.empty and bool((totals[["ecn_marked", "pauses_sent"]].sum() > 0).any())


def _job_ranks_and_nodes(run):
    layout = run.layout
    return ("", "") if layout is None else (ids(range(layout.world)), ids(layout.node))


def _busy_rates(transfers):
    """What each NIC sent per second while it had a bulk transfer in flight."""
    rates = {}
    for nic, sent in transfers.groupby("source"):
        busy = sum(end - start for start, end in _episodes(sent["first_sent_ps"].to_numpy(),
                                                           sent["delivered_ps"].to_numpy()))
        rates[nic] = float(sent["bytes"].sum()) * 8 * 1e12 / busy
    return pd.Series(rates, dtype=float)


def _host_capped(run, budget, transfers):
    line = float(transfers["line_bps"].median())
    nics = _busy_rates(transfers)
    top = float(nics.quantile(0.9))
    if top >= HOST_CAPPED_BELOW * line or _fabric_congested(run):
        return []
    achieved = top / line
    evidence = (f"NICs send bulk transfers at most {top / 1e9:.1f} Gb/s while busy (90th "
                f"percentile of {len(nics)} NICs, {len(transfers)} transfers) on "
                f"{line / 1e9:.0f} Gb/s NICs, {percent(achieved)} of the line rate, on every NIC "
                "alike, with no ECN mark or pause anywhere in the fabric: the hosts cap them, not "
                "the network")
    lost = float("nan")
    if budget is not None:
        # At RDMA's rate the same communication would take achieved / RDMA_SHARE_OF_LINE of it.
        exposed = budget.inter_node_communication(run.layout)
        lost = exposed * (1 - achieved / RDMA_SHARE_OF_LINE)
        evidence += (f"; communication over the fabric takes {duration(exposed)} per step, about "
                     f"{duration(lost)} of it to the cap")
    lost_per_step, share = cost_per_step(budget, lost)
    ranks, nodes = _job_ranks_and_nodes(run)
    if achieved < SOCKETS_BELOW:
        return [Finding(
            "inter_node_communication", "nccl_socket", lost_per_step, share, ranks, nodes,
            evidence + "; that is TCP-socket speed: NCCL is on its socket transport, not RDMA",
            "Run with NCCL_DEBUG=INFO and check that it reports NET/IB (not NET/Socket) with every "
            "rail's HCA; fix NCCL_IB_DISABLE, NCCL_IB_HCA and NCCL_SOCKET_IFNAME, and give the "
            "pod its RDMA devices.")]
    return [Finding(
        "inter_node_communication", "gpudirect_off", lost_per_step, share, ranks, nodes,
        evidence + "; about half the line rate on every NIC is data staged through host memory",
        "Enable GPUDirect RDMA on every node: load nvidia-peermem, turn off PCIe ACS, and check "
        "that NCCL_DEBUG=INFO reports GPU Direct RDMA enabled for each NIC.")]


def _slow_nics(run, budget, transfers):
    """NICs slow with every partner they exchanged with. A partner of a slow NIC is slow only in
    the transfers it shares with that NIC, and normal with its other partners; the median over a
    pair's transfers keeps an episode (a pause, a flap) from making a pair slow."""
    pairs = transfers.groupby(["source", "destination"])["rate_bps"].median().reset_index()
    typical = float(pairs["rate_bps"].median())
    spread = float((pairs["rate_bps"] - typical).abs().median())
    pairs["slow"] = pairs["rate_bps"] < min((1 - SLOWER_THAN_PEER_NICS) * typical,
                                            typical - SPREADS * spread)
    ends = pd.concat([pairs[["source", "slow", "rate_bps"]].set_axis(["nic", "slow", "rate_bps"],
                                                                     axis=1),
                      pairs[["destination", "slow", "rate_bps"]].set_axis(
                          ["nic", "slow", "rate_bps"], axis=1)])
    per_nic = ends.groupby("nic").agg(slow=("slow", "all"), rate_bps=("rate_bps", "median"))
    nics = per_nic.index[per_nic["slow"]].to_numpy()
    servers = np.array([run.server(nic) for nic in nics])
    found = [_slow_nic_finding(run, budget, nics[servers == server], server,
                               per_nic["rate_bps"], typical)
             for server in np.unique(servers)]
    return [finding for finding in found if finding is not None]


def _slow_nic_finding(run, budget, nics, node, rates, typical):
    """The slow NICs of one server: one NIC's host path, or the whole server's."""
    layout = run.layout
    ranks = [r for r in (run.rank_on(nic) for nic in nics) if r is not None]
    slowest = float(rates.reindex(nics).min())
    lost = float("nan")
    if budget is not None and ranks:
        # What the peers waited for, when some ranks of the stage do not share a collective with
        # the slow NIC; when all do (a DP ring through every server), nobody is a peer left to
        # compare with, and the loss is estimated from the rate: at the typical rate the ranks'
        # communication over the fabric would take slowest / typical of its time.
        lost = budget.excess_over_stage("communication_ps", ranks)
        if lost < WORTH_REPORTING * budget.mean_step_ps:
            lost = budget.inter_node_communication(run.layout, ranks) * (1 - slowest / typical)
        if not lost >= WORTH_REPORTING * budget.mean_step_ps:
            return None
    lost_per_step, share = cost_per_step(budget, lost)
    on_ranks = f" ({listed('rank', ranks)})" if ranks else ""
    evidence = (f"{listed('NIC', nics)}{on_ranks} on server {node} "
                f"{'moves' if len(nics) == 1 else 'move'} data at {slowest / 1e9:.0f} Gb/s "
                f"against {typical / 1e9:.0f} Gb/s for the median pair of NICs "
                f"({slowest / typical:.2f}x), with every partner, sending and receiving, while "
                f"{'its partners are' if len(nics) == 1 else 'their partners are'} slow only in "
                "the transfers they share with it")
    if ranks:
        evidence += (f"; kernels normal, communication {duration(lost)} per step longer, which "
                     "the ranks sharing its collectives wait for")
    whole_server = layout is not None and len(nics) == np.count_nonzero(layout.node == node)
    if whole_server and len(nics) > 1:
        return Finding("inter_node_communication", "slow_node_nics", lost_per_step, share,
                       ids(ranks), str(node), evidence,
                       f"Every NIC of server {node} is slow: check its host path (GPUDirect RDMA "
                       "and nvidia-peermem, PCIe ACS, the PCIe link widths), then drain it.",
                       targets=frozenset([f"node {node}", *(f"nic {n}" for n in nics)]))
    return Finding("inter_node_communication", "slow_nic", lost_per_step, share, ids(ranks),
                   str(node), evidence,
                   f"Check the PCIe/NUMA placement of {listed('NIC', nics)} on server {node} "
                   "(nvidia-smi topo -m: each GPU's NIC under its PCIe switch, on its CPU socket; "
                   "NCCL_DEBUG=INFO shows GPU Direct RDMA disabled for a NIC across sockets) and "
                   "the NIC's link rate.",
                   targets=frozenset([f"node {node}", *(f"nic {n}" for n in nics),
                                      *(f"gpu {n}" for n in nics), *(f"rank {r}" for r in ranks)]))


def _stalled_cables(run, budget, transfers):
    """The cable shared by transfers that stalled, and the episodes in which they did."""
    stalled = transfers[transfers["rate_bps"] * STALLED_SLOWDOWN < transfers["rate_bps"].median()]
    if stalled.empty:
        return []
    cables = pd.Series([frozenset(pair) for path in stalled["path"] for pair in _hops(path)])
    cable = tuple(sorted(cables.value_counts().index[0]))
    if cable in _paused_cables(run):
        return []  # a pause, not a failure: the pause check names its cause
    over = stalled[[frozenset(cable) in {frozenset(h) for h in _hops(p)} for p in stalled["path"]]]
    episodes = _episodes(over["first_sent_ps"].to_numpy(), over["delivered_ps"].to_numpy())
    names = run.names
    nic = cable[0] if cable[0] < names.endpoints else None  # a NIC's own cable
    rank = run.rank_on(nic) if nic is not None else None
    lost = float("nan")
    slowed = ""
    if budget is not None:
        hit = np.zeros(budget.n_steps, dtype=bool)
        for start, end in episodes:
            hit |= budget.steps_overlapping(start, end).to_numpy()
        lost = budget.excess_of_steps(hit)
        times = budget.steps.loc[hit, "step_ps"]
        slowed = (f"; {hit.sum()} step(s) hit took up to {duration(times.max())} against a "
                  f"median step of {duration(budget.steps['step_ps'].median())}")
    lost_per_step, share = cost_per_step(budget, lost)
    label = f"{names.node(cable[0])} - {names.node(cable[1])}"
    durations = [end - start for start, end in episodes]
    evidence = (f"{len(over)} transfer(s) over the cable {label} stalled (under a "
                f"{STALLED_SLOWDOWN}th of the median rate) in {len(episodes)} episode(s) of "
                f"{duration(min(durations))} to {duration(max(durations))}, from "
                + ", ".join(duration(start) for start, _ in episodes) + slowed)
    flapping = len(episodes) > 1
    where = f"server {run.server(nic)}" if nic is not None else label
    action = (f"Replace the cable or transceiver {label} (check the port's link-down and error "
              f"counters: ibstat, ethtool -S, the switch's flap log); until then drain {where}."
              if flapping else
              f"Check the cable {label} and its ports (link state, error counters); reseat or "
              "replace it.")
    targets = {f"cable {names.scenario_name(cable[0])}-{names.scenario_name(cable[1])}"}
    if nic is not None:
        targets |= {f"nic {nic}", f"node {run.server(nic)}"}
    return [Finding("inter_node_communication", "link_flap" if flapping else "link_down",
                    lost_per_step, share, "" if rank is None else str(rank),
                    "" if nic is None else str(run.server(nic)), evidence, action, fabric=label,
                    targets=frozenset(targets))]


def _hops(path):
    nodes = [int(n) for n in path.split(">")]
    return list(zip(nodes, nodes[1:]))


def _paused_cables(run):
    totals, ports = run.rows("port_totals"), run.rows("ports")
    if totals.empty or ports.empty:
        return set()
    paused = totals[totals["paused_ps"] > 0].merge(ports, on=["node", "port"])
    return {tuple(sorted(pair)) for pair in zip(paused["node"], paused["peer"])}


def _episodes(starts, ends):
    """Overlapping [start, end) intervals merged, in time order."""
    order = np.argsort(starts)
    merged = []
    for start, end in zip(starts[order], ends[order]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(int(s), int(e)) for s, e in merged]
