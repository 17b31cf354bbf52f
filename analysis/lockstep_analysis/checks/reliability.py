"""A job that did not finish, or lost time to failures and restarts: the outcome, the hang report
(`blocked_ranks`), what the defences did and the goodput. And a plan that does not fit in memory.

The culprit of a hang is found the way one reads a real NCCL hang: follow who waits for whom until
a rank that is not waiting itself, because its GPU is lost or it never reached the collective.
None of these is a cost per step: what they cost is the run's time the goodput table says was not
spent on steps, told once, by the restarts when the job restarted, else by what ended it.
"""

import numpy as np

from lockstep_analysis.findings import UNKNOWN_PS, Finding, duration, ids, listed, percent

# The defences that take a node out of the job, and what they are called in the evidence.
DRAINING = {"health_check": "the health check", "straggler_detector": "the straggler detector"}
DRAINS_NAMED = 3


def check(run):
    ended, restarts = _ending(run), _restarts(run)
    # The goodput table's time not spent on steps, told once; a plan that does not fit never ran.
    telling = restarts or (ended if ended and ended.finding != "out_of_memory" else None)
    if telling:
        telling.lost_ps = _time_not_on_steps(run)
    return [f for f in (ended, restarts) if f]


def _ending(run):
    """What ended the job before its last step, or None."""
    outcome = run.meta["outcome"]
    if outcome == "out_of_memory":
        return _out_of_memory(run)
    if outcome in ("hang", "collective_timeout"):
        ended = _blocked(run, outcome)
    elif outcome == "network_error":
        ended = _network_error(run)
    elif outcome in ("node_drained", "no_spare_nodes"):
        ended = _drained(run, outcome)
    elif outcome == "stalled":
        ended = _interruption(
            "reliability", "stalled", "", "",
            "the run ended with work left and nothing that could move it (every remaining "
            "transfer on a path that carries nothing, such as a cable at 0 b/s)",
            "Find the transfers that never completed (the fabric's messages stop) and the cable "
            "or port on their path.")
    else:
        return None
    # What the run lost is the time it hung; what the job lost is the steps it never ran.
    ended.evidence += (f"; the job stopped after {run.rows('steps')['step'].nunique()} of its "
                       f"{run.scenario['job']['steps']} steps")
    return ended


def _interruption(place, finding, ranks, nodes, evidence, action, targets=frozenset()):
    return Finding(place, finding, UNKNOWN_PS, float("nan"), ranks, nodes, evidence, action,
                   lost_ps=UNKNOWN_PS, targets=targets)


def _goodput(run):
    """The goodput table's one row as a dict of ints (and the goodput share), or None."""
    goodput = run.rows("goodput")
    if goodput.empty:
        return None
    row = {name: int(goodput[name].iloc[0]) for name in goodput.columns if name != "goodput"}
    return {**row, "goodput": float(goodput["goodput"].iloc[0])}


def _time_not_on_steps(run):
    """Restart delays and time lost (hung until a defence acted, steps redone), in ps."""
    g = _goodput(run)
    return UNKNOWN_PS if g is None else g["restarting_ps"] + g["lost_ps"]


def _blocked(run, outcome):
    blocked = run.table("blocked_ranks")
    failed = blocked[blocked["waiting_in"] == "failed GPU"]
    waiting = blocked[blocked["waiting_in"] != "failed GPU"]
    awaited = {int(r) for text in waiting["never_arrived"] for r in text.split()}
    culprits = sorted(set(failed["rank"]) | (awaited - set(waiting["rank"])))
    gpu_of = dict(zip(failed["rank"], failed["gpu"]))
    gpus = [int(gpu_of.get(r, run.last_gpu_of_rank[r])) for r in culprits]
    servers = sorted({run.server(g) for g in gpus})
    waits = "; ".join(
        f"{len(group)} in {what} for "
        f"{listed('rank', [r for text in group['never_arrived'] for r in text.split()])} since "
        f"{duration(group['since_ps'].min())}"
        for what, group in sorted(waiting.groupby("waiting_in"),
                                  key=lambda item: item[1]["since_ps"].min()))
    lost = "; ".join(f"rank {r} on GPU {g} (server {run.server(g)}): GPU lost at {duration(t)}"
                     for r, g, t in zip(failed["rank"], failed["gpu"], failed["since_ps"]))
    evidence = (f"{waiting['rank'].nunique()} rank(s) blocked: {waits}"
                + (f"; {lost}" if lost else "")
                + f"; the culprit: {listed('rank', culprits)}, waited for and waiting for no one")
    where = f"{listed('GPU', gpus)} of {listed('server', servers)}"
    defences = run.scenario["defences"]
    recovery = _recovery_left_off(defences)
    if outcome == "hang":
        evidence += "; no watchdog fired, so the job sits there until someone kills it"
        watchdog = defences["watchdog"]
        action = (f"Drain {listed('server', servers)} and check {where} (the kernel log's Xid). "
                  + ("Turn on the collective watchdog (defences.watchdog.enabled is false here; "
                     "TORCH_NCCL's timeout in PyTorch)" if not watchdog["enabled"] else
                     f"The watchdog's timeout (defences.watchdog.timeout: {watchdog['timeout']}) "
                     "is longer than the run: shorten it")
                  + " so that a hang becomes a crash naming the culprit"
                  + (f", and turn on {recovery} so the job recovers by itself." if recovery
                     else "."))
    else:
        watchdog = run.rows("defences")
        watchdog = watchdog[watchdog["defence"] == "watchdog"]
        if not watchdog.empty:
            evidence += (f"; the watchdog aborted the job at {duration(watchdog['at_ps'].iloc[0])}"
                         f": {watchdog['detail'].iloc[0]}")
        action = (f"Drain {listed('server', servers)}, check {where}, and restart from the last "
                  "checkpoint" + (f"; with {recovery} on the job recovers by itself." if recovery
                                  else "."))
    return _interruption("reliability", outcome, ids(culprits), ids(servers), evidence, action,
                         targets=frozenset([*(f"rank {r}" for r in culprits),
                                            *(f"gpu {g}" for g in gpus),
                                            *(f"node {s}" for s in servers)]))


def _network_error(run):
    """Queue pairs that ran out of retries: the NIC that every one of them goes through, its
    cable, and the watchdog's abort on NCCL's error."""
    qps = run.rows("queue_pairs")
    failed = qps[qps["failed_ps"] >= 0] if not qps.empty else qps
    ends = failed["source"].tolist() + failed["destination"].tolist()
    shared = sorted({e for e in ends if ends.count(e) == len(failed)}) if len(failed) else []
    nics = shared or sorted(set(ends))
    # Both ends of a queue pair are on its path; the dead cable is the one whose ports lost
    # packets (a lossless fabric drops nothing else).
    dropping = [n for n in nics if _cable_dropped(run, n)]
    nics = dropping or nics
    transport = run.scenario["network"]["transport"]
    timeout_ps = 4_096_000 * 2 ** int(transport["qp_timeout"])
    retries = int(transport["retry_count"])
    names = run.names
    ports = run.nic_ports
    cables = [f"{names.node(n)} - {names.node(ports.loc[n, 'peer'])}" for n in nics
              if n in ports.index]
    ranks = [r for r in (run.rank_on(n) for n in nics) if r is not None]
    servers = sorted({run.server(n) for n in nics})
    first = int(failed["failed_ps"].min()) if len(failed) else UNKNOWN_PS
    evidence = (f"{len(failed)} queue pair(s) ran out of retries, the first at {duration(first)}: "
                f"{retries + 1} local ACK timeouts of {duration(timeout_ps)} in a row "
                f"(network.transport.qp_timeout {transport['qp_timeout']}, retry_count {retries})"
                f"; every one of them goes through {listed('NIC', nics)}"
                + (f" ({listed('rank', ranks)} on {listed('server', servers)})" if ranks else "")
                + (f", cable {', '.join(cables)}" if cables else ""))
    watchdog = run.rows("defences")
    watchdog = watchdog[watchdog["defence"] == "watchdog"] if not watchdog.empty else watchdog
    if not watchdog.empty:
        evidence += (f"; the watchdog aborted the job at {duration(watchdog['at_ps'].iloc[0])}: "
                     f"{watchdog['detail'].iloc[0]}")
    recovery = _recovery_left_off(run.scenario["defences"])
    action = (f"Check {', '.join(cables) or listed('NIC', nics)}: link state and flap log on the "
              f"switch port, the NIC's counters (ibstat, ethtool -S); drain "
              f"{listed('server', servers)} until it is fixed, and restart from the last "
              "checkpoint" + (f"; {recovery} would do it unattended." if recovery else ".")
              + f" NCCL reported the dead path {duration((retries + 1) * timeout_ps)} after it died: "
              "NCCL_IB_TIMEOUT and NCCL_IB_RETRY_CNT set that wait.")
    targets = {*(f"nic {n}" for n in nics), *(f"gpu {n}" for n in nics),
               *(f"rank {r}" for r in ranks), *(f"node {s}" for s in servers),
               *(f"cable {names.scenario_name(n)}-{names.scenario_name(ports.loc[n, 'peer'])}"
                 for n in nics if n in ports.index)}
    return _interruption("reliability", "network_error", ids(ranks), ids(servers), evidence,
                         action, targets=frozenset(targets))


def _cable_dropped(run, nic):
    """Whether the NIC's port or the switch port facing it dropped packets."""
    totals, ports = run.rows("port_totals"), run.nic_ports
    if totals.empty or nic not in ports.index:
        return False
    peer, peer_port = int(ports.loc[nic, "peer"]), int(ports.loc[nic, "peer_port"])
    ends = (((totals["node"] == nic) & (totals["port"] == 0))
            | ((totals["node"] == peer) & (totals["port"] == peer_port)))
    return int(totals.loc[ends, "dropped_packets"].sum()) > 0


def _recovery_left_off(defences):
    """The automatic-recovery defences the run had off, as text ("" when both were on)."""
    off = [f"defences.{name}" for name in ("health_check", "restart")
           if not defences[name]["enabled"]]
    return f"{' and '.join(off)} (off here)" if off else ""


def _drains(run):
    """(text naming the first few, drained server numbers) of the defence actions that took a node
    out; at scale there are hundreds."""
    defences = run.rows("defences")
    if defences.empty:
        return "", []
    drains = defences[defences["defence"].isin(list(DRAINING))]
    named = drains.head(DRAINS_NAMED)
    texts = [f"{DRAINING[d]} at {duration(t)} on {target.replace('node', 'server')}: {detail}"
             for d, t, target, detail in zip(named["defence"], named["at_ps"], named["target"],
                                             named["detail"])]
    if len(drains) > DRAINS_NAMED:
        texts.append(f"{len(drains) - DRAINS_NAMED} more drain(s)")
    servers = [int(t.split()[1]) for t in drains["target"] if t.startswith("node ")]
    return "; ".join(texts), servers


def _drained(run, outcome):
    drained, servers = _drains(run)
    if outcome == "no_spare_nodes":
        evidence = "a restart found no healthy idle server to replace the drained one"
        in_fabric = run.names.endpoints // run.gpus_per_server
        action = (f"Keep spare servers for restarts to land on: the job uses "
                  f"{len(np.unique(run.layout.node))} of the fabric's {in_fabric}; add at least "
                  f"{len(set(servers))} idle one(s), as many as were drained.")
    else:
        evidence = "a defence drained a node and no restart was configured"
        every = int(run.scenario["job"]["checkpoint"]["every"])
        action = ("Turn on automatic restart from the last checkpoint (defences.restart.enabled, "
                  "off here) with spare servers to replace drained ones"
                  + (f"; it restarts from the checkpoint taken every {every} steps." if every else
                     ", and checkpoint (job.checkpoint.every, 0 here) so that a restart does not "
                     "start over."))
    return _interruption("reliability", outcome, "", ids(servers),
                         f"{evidence}; {drained}" if drained else evidence, action,
                         targets=frozenset(f"node {s}" for s in servers))


def _restarts(run):
    g = _goodput(run)
    defences = run.rows("defences")
    # Without a restart, the interruption ended the job and its finding tells the loss.
    if g is None or defences.empty or not (defences["defence"] == "restart").any():
        return None
    drained, servers = _drains(run)
    evidence = ((f"{drained}; " if drained else "")
                + f"{g['interruptions']} interruption(s), {g['steps_redone']} step(s) redone: "
                f"restarting took {duration(g['restarting_ps'])} and {duration(g['lost_ps'])} was "
                f"lost (hung until a defence acted, steps redone) of {duration(g['total_ps'])}; "
                f"goodput {percent(g['goodput'])}")
    return _interruption("reliability", "restarts", "", ids(np.unique(servers)), evidence,
                         _shorter_restarts(run, g),
                         targets=frozenset(f"node {s}" for s in servers))


def _shorter_restarts(run, g):
    """What would have cost the run less, the larger of the two parts first: the restart delay, or
    the time lost (detection, and the work since the last checkpoint, redone)."""
    delay = run.scenario["defences"]["restart"]["delay"]
    every = int(run.scenario["job"]["checkpoint"]["every"])
    restarting = (f"Restarting took {duration(g['restarting_ps'])}, {g['interruptions']} x the "
                  f"restart delay (defences.restart.delay: {delay}): restart onto hot spares "
                  "with the checkpoint already staged to shorten it.")
    if not g["steps_redone"]:
        redone = ""
    elif every == 0:
        redone = (f"{g['steps_redone']} step(s) were redone from the start: checkpoint "
                  "(job.checkpoint.every, 0 here) so that a restart resumes.")
    elif every > 1:
        redone = (f"{g['steps_redone']} step(s) were redone from checkpoints every {every} "
                  f"steps: checkpointing every {every // 2} redoes fewer, for more checkpoint "
                  "stalls.")
    else:
        redone = (f"{g['steps_redone']} step(s) were redone although every step is "
                  "checkpointed: the time lost is detection (the defences' intervals and "
                  "windows).")
    parts = sorted([(g["restarting_ps"], restarting), (g["lost_ps"], redone)], key=lambda p: -p[0])
    return " ".join(text for _, text in parts if text)


def _out_of_memory(run):
    memory = run.table("rank_memory")
    short = memory[memory["fits"] == 0]
    worst = short.sort_values("total_bytes", ascending=False).iloc[0]
    parts = {name: worst[name + "_bytes"] for name in
             ("weights", "gradients", "optimizer", "activations", "workspace")}
    layout = run.layout
    evidence = (f"{len(short)} rank(s) in pipeline stage(s) {ids(short['stage'])} do not fit: "
                f"rank {int(worst['rank'])} needs {worst['total_bytes'] / 1e9:.1f} GB of "
                f"{worst['capacity_bytes'] / 1e9:.1f} GB of HBM ("
                + ", ".join(f"{name} {size / 1e9:.1f}" for name, size in parts.items()) + " GB)")
    return _interruption("memory", "out_of_memory", ids(short["rank"]),
                         ids(layout.node[short["rank"].to_numpy()]), evidence,
                         _fitting(run, max(parts, key=parts.get)))


def _fitting(run, largest):
    """The changes to the plan that shrink a rank's memory and that the plan does not make yet,
    the ones aimed at its largest part first."""
    job = run.scenario["job"]
    tensor, pipeline = job["parallelism"]["tensor"], job["parallelism"]["pipeline"]
    recompute = job["recompute"]
    for_activations = []
    if recompute != "full":
        for_activations.append(f"recompute activations (job.recompute: "
                               f"{'full' if recompute == 'selective' else 'selective'}, "
                               f"{recompute} here)")
    if int(job["micro_batch"]) > 1:
        for_activations.append(f"halve the micro-batch (job.micro_batch: "
                               f"{int(job['micro_batch']) // 2})")
    for_state = []
    if not job["distributed_optimizer"]:
        for_state.append("shard the optimizer state (job.distributed_optimizer: true)")
    if tensor < run.gpus_per_server:
        for_state.append(f"raise job.parallelism.tensor to {2 * tensor} (within a server's "
                         f"{run.gpus_per_server} GPUs)")
    for_state.append(f"raise job.parallelism.pipeline to {2 * pipeline}")
    ordered = (for_activations + for_state if largest == "activations"
               else for_state + for_activations)
    return f"The largest part is {largest}: " + "; or ".join(ordered) + "."
