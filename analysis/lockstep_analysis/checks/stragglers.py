"""Ranks slower than their peers: one rank late in every collective points to its node.

Ranks of one pipeline stage run the same kernels on the same shapes and take part in the same kinds
of collective, so each is compared with its stage's median in the same step, and the comparison
tells the two usual culprits apart: a slow GPU (throttled clock, ECC retries) has longer kernels
and normal communication; a slow NIC or host path (NIC on the other CPU socket, GPUDirect off) has
normal kernels and longer communication. When the fabric recorded each transfer (`messages`), the
transfers check names the NIC itself and this one only looks at GPUs.
"""

import numpy as np
import pandas as pd

from lockstep_analysis.findings import WORTH_REPORTING, Finding, duration, ids, listed, percent
from lockstep_analysis.step_budget import KEY

# Identical work on identical GPUs takes identical time in the simulator, and within a fraction of a
# percent on a healthy cluster; beyond this a rank is slower than its peers.
SLOWER_THAN_PEERS = 0.01
# Slow GPUs are reported one finding per server (drain the server), the worst this many.
SERVERS_NAMED = 5


def check(run, budget, nics_recorded):
    found = _slow_gpus(run, budget)
    if not nics_recorded:
        found += _slow_communication(run, budget)
    return found


def _outliers(budget, part):
    """Rank-steps whose `part` exceeds their stage's median in that step, with `excess_ps` and
    `median_ps` columns."""
    value, median = budget.versus_stage(part)
    rows = budget.rank_steps.assign(excess_ps=value - median, median_ps=median)
    return rows[rows["excess_ps"] > SLOWER_THAN_PEERS * median]


def _affected_step_ps(budget, slow):
    steps = budget.steps.set_index(KEY)["step_ps"]
    return float(steps.reindex(pd.MultiIndex.from_frame(slow[KEY].drop_duplicates())).mean())


def _slow_gpus(run, budget):
    slow = _outliers(budget, "compute_ps")
    if slow.empty:
        return []
    layout = run.layout
    slow = slow.assign(node=layout.node[slow["rank"].to_numpy()])
    found = []
    for node, on_node in slow.groupby("node"):
        # Each slow step holds everyone up by its slowest rank's extra kernel time.
        lost = on_node.groupby(KEY)["excess_ps"].max()
        if lost.mean() < WORTH_REPORTING * _affected_step_ps(budget, on_node):
            continue
        lost_per_step, share = budget.cost(float(lost.sum()) / budget.n_steps)
        ranks = np.sort(on_node["rank"].unique())
        gpus = layout.gpu[ranks]
        worst = on_node.loc[on_node["excess_ps"].idxmax()]
        slowest = budget.steps["slowest_rank"].isin(ranks).sum()
        evidence = (f"{_ranks_on_gpus(ranks, gpus)} on server {node}: kernels took "
                    f"{duration(worst['compute_ps'])} against {duration(worst['median_ps'])} for "
                    "the median rank of its pipeline stage "
                    f"({worst['compute_ps'] / worst['median_ps']:.2f}x) "
                    f"in {len(lost)} of {budget.n_steps} steps ({_steps_text(lost.index)}); "
                    f"slowest rank of {slowest} step(s){_peers_waiting(run, budget, ranks, lost)}; "
                    "communication normal: the GPU, not the network")
        action = (f"Check {listed('GPU', gpus)} of server {node} for throttling (clocks, "
                  "temperature, power: nvidia-smi -q -d CLOCK,TEMPERATURE,PERFORMANCE) and ECC "
                  f"errors; {_draining(run, node)}")
        found.append(Finding("compute", "slow_gpu", lost_per_step, share, ids(ranks), str(node),
                             evidence, action, targets=_targets(ranks, gpus, [node])))
    return sorted(found, key=lambda f: -f.lost_per_step_ps)[:SERVERS_NAMED]


def _draining(run, node):
    """Taking the server out of the job, as this run's straggler detector did or could have."""
    detector = run.scenario["defences"]["straggler_detector"]
    defences = run.rows("defences")
    if not defences.empty and ((defences["defence"] == "straggler_detector")
                               & (defences["target"] == f"node {node}")).any():
        return (f"the straggler detector drained server {node}: replace the GPU before the server "
                "returns to service.")
    if detector["enabled"]:
        threshold = percent(float(detector["threshold"]))
        return (f"the straggler detector (defences.straggler_detector: {threshold} over "
                f"{detector['window']} steps here) did not drain it: lower its threshold or its "
                f"window, or drain server {node} by hand.")
    return (f"drain server {node} or replace the GPU; defences.straggler_detector (off here) "
            "would drain such a server by itself.")


def _peers_waiting(run, budget, ranks, slow_steps):
    """How long the slow ranks' tensor-parallel peers waited for them in the slow steps."""
    layout = run.layout
    peers = np.setdiff1d(np.flatnonzero(np.isin(layout.group("tp"), layout.group("tp")[ranks])),
                         ranks)
    if not len(peers):
        return ""
    rows = budget.rank_steps
    waited = rows[rows["rank"].isin(peers)].merge(slow_steps.index.to_frame(index=False),
                                                  on=KEY)["wait_for_others_ps"].mean()
    if not waited > 0:
        return ""
    return f"; its {len(peers)} TP peer(s) waited {duration(waited)} per step for it"


def _slow_communication(run, budget):
    """Without per-transfer records (network.model: analytic) a slow NIC shows as ranks whose own
    communication is longer than their stage's while their kernels are not. The rank whose NIC is
    slow is slow in every communicator it uses; its partners only in the one they share with it."""
    slow = _outliers(budget, "communication_ps")
    if slow.empty:
        return []
    lost = slow.groupby(KEY)["excess_ps"].max()
    if lost.mean() < WORTH_REPORTING * _affected_step_ps(budget, slow):
        return []
    layout = run.layout
    per_rank = slow.groupby("rank")["excess_ps"].mean()
    culprits = per_rank.index[per_rank >= per_rank.max() * (1 - SLOWER_THAN_PEERS)].to_numpy()
    singled_out = len(culprits) < len(per_rank)
    lost_per_step, share = budget.cost(float(lost.sum()) / budget.n_steps)
    named = culprits if singled_out else per_rank.index.to_numpy()
    evidence = (f"ranks {ids(per_rank.index)} spend up to {duration(per_rank.max())} per step "
                "more in communication than the median rank of their pipeline stage while their "
                f"kernels take normal time, in {len(lost)} of {budget.n_steps} steps; ")
    evidence += (f"{_ranks_on_gpus(culprits, layout.gpu[culprits])} is the slowest in every "
                 "communicator it uses, the others only in the one they share with it"
                 if singled_out else
                 "one of them has a slow NIC or host path; the run has no per-transfer record "
                 "(network.model: analytic) to tell which")
    action = (f"Check the NIC of {listed('GPU', layout.gpu[named])}: PCIe/NUMA placement "
              "(nvidia-smi topo -m: NIC and GPU under one PCIe switch on one socket), GPUDirect "
              "RDMA enabled, link rate.")
    return [Finding("inter_node_communication", "slow_nic", lost_per_step, share, ids(named),
                    ids(layout.node[named]), evidence, action,
                    targets=_targets(named, layout.gpu[named], layout.node[named]))]


def _ranks_on_gpus(ranks, gpus):
    return f"{listed('rank', ranks)} ({listed('GPU', gpus)})"


def _steps_text(keys):
    by_attempt = {}
    for step, attempt in keys:
        by_attempt.setdefault(attempt, []).append(step)
    if set(by_attempt) == {0}:
        return f"steps {ids(by_attempt[0])}"
    return ", ".join(f"steps {ids(s)} of attempt {a}" for a, s in sorted(by_attempt.items()))


def _targets(ranks, gpus, nodes):
    return frozenset([*(f"rank {r}" for r in ranks), *(f"gpu {g}" for g in gpus),
                      *(f"nic {g}" for g in gpus), *(f"node {n}" for n in nodes)])
