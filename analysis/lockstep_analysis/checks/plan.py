"""Costs the job's plan chose, from the low-MFU flowchart: tensor or context parallelism over the
fabric, gradient reduction left on the critical path, a pipeline bubble.

Each is measured (the part of the ranks' steps it took) and explained by the plan in the resolved
scenario (placement, overlap_grad_reduce, micro-batches per pipeline). They are trade-offs, so they
are reported from WORTH_REPLANNING of the step, and the action is the next change to this plan,
with what it would give where the arithmetic is known.
"""

import numpy as np

from lockstep_analysis.findings import WORTH_REPLANNING, Finding, duration, ids, percent
from lockstep_analysis.job_layout import JobLayout
from lockstep_analysis.step_budget import KEY

HIDDEN_WHEN_OVERLAP_WORKS = 0.5
# Megatron's default gradient bucket: max(40M, 1M x data-parallel size) parameters.
DEFAULT_BUCKET, BUCKET_PER_REPLICA = 40_000_000, 1_000_000
# The old rule of thumb: at least four micro-batches per stage keep the 1F1B bubble below a fifth.
MICRO_BATCHES_PER_STAGE = 4


def check(run, budget):
    return [*_parallelism_across_servers(run, budget), *_exposed_gradient_reduction(run, budget),
            *_pipeline_bubble(run, budget)]


def _parallelism_across_servers(run, budget):
    """Tensor and context parallelism exchange activations inside every layer: on NVLink they are
    cheap, over the NICs they can dominate the step."""
    layout = run.layout
    found = []
    for dim, part, name in (("tp", "tp_comm_ps", "TP"), ("cp", "cp_comm_ps", "CP")):
        spanning = layout.groups_spanning_nodes(dim)
        if not len(spanning):
            continue
        ranks = np.flatnonzero(np.isin(layout.group(dim), spanning))
        lost = budget.typical(part, ranks)
        lost_per_step, share = budget.cost(lost)
        if not share >= WORTH_REPLANNING:
            continue
        size = layout.sizes[dim]
        example = np.flatnonzero(layout.group(dim) == spanning[0])
        where = ", ".join(f"ranks {ids(example[layout.node[example] == node])} on server {node}"
                          for node in np.unique(layout.node[example]))
        groups = len(np.unique(layout.group(dim)))
        evidence = (f"{len(spanning)} of {groups} {name} group(s) of {size} ranks span servers "
                    f"(e.g. {where}); their {name} collectives take {duration(lost)} per step "
                    f"({percent(share)} of the step) over the NICs{_nic_rate(run)} instead of "
                    "NVLink inside a server")
        found.append(Finding("scheduling_placement", f"{dim}_across_nodes", lost_per_step, share,
                             ids(ranks), ids(layout.node[ranks]), evidence,
                             _keep_inside_servers(run, dim, name),
                             targets=frozenset(f"node {n}" for n in layout.node[ranks])))
    return found


def _keep_inside_servers(run, dim, name):
    """The change that puts every group of `dim` inside one server: the placement, else the rank
    order, each tried on the job's layout; else the group is larger than a server."""
    job, per_node = run.scenario["job"], run.gpus_per_server
    size = run.layout.sizes[dim]
    order = job["parallelism"]["order"]
    # TP innermost, CP next: both exchange activations every layer, TP the most.
    front = ["tp"] if dim == "tp" else ["tp", "cp"]
    first = "-".join([*front, *(d for d in order.split("-") if d not in front)])
    if job["placement"] != "packed" and _inside_servers(run, dim, "packed", order):
        placed = "an explicit list" if isinstance(job["placement"], list) else job["placement"]
        return (f"Place the ranks packed (job.placement: packed, {placed} here), or have the "
                f"scheduler give whole servers in rank order: every {name} group then sits in one "
                "server, on NVLink.")
    if order != first and _inside_servers(run, dim, "packed", first):
        packed = "" if job["placement"] == "packed" else ", with job.placement: packed"
        return (f"Put {' then '.join(front)} first in the rank order (job.parallelism.order: "
                f"{first}, {order} here{packed}) so that each {name} group's ranks are neighbours "
                "on one server.")
    if size > per_node:
        pipeline = run.layout.sizes["pp"]
        return (f"{name}={size} is more than a server's {per_node} GPUs: lower it to {per_node} "
                f"and split the model over more pipeline stages (job.parallelism.pipeline: "
                f"{pipeline * size // per_node}, {pipeline} here).")
    return (f"{name}={size} does not divide a server's {per_node} GPUs, so groups straddle "
            f"servers: use a size that divides {per_node}.")


def _inside_servers(run, dim, placement, order):
    """Whether every group of `dim` would sit in one server with this placement and rank order."""
    job = run.scenario["job"]
    changed = dict(job, placement=placement, parallelism=dict(job["parallelism"], order=order))
    return not len(JobLayout(dict(run.scenario, job=changed)).groups_spanning_nodes(dim))


def _nic_rate(run):
    nics = run.nic_ports
    return f" ({nics['rate_bps'].median() / 1e9:.0f} Gb/s each)" if not nics.empty else ""


def _exposed_gradient_reduction(run, budget):
    """The compute stream waiting for data-parallel gradient reduction (and parameter gathering):
    what bucketing under backward did not hide."""
    lost = budget.typical("dp_comm_ps")
    lost_per_step, share = budget.cost(lost)
    if not share >= WORTH_REPLANNING:
        return []
    layout = run.layout
    across = len(layout.groups_spanning_nodes("dp")) > 0
    place = "inter_node_communication" if across else "intra_node_communication"
    evidence = (f"the compute stream waits {duration(lost)} per step ({percent(share)}) for DP "
                "collectives")
    hidden = _hidden_share_of_gradient_collectives(run, budget)
    if hidden is not None:
        rank, step, buckets, total_ps, hidden_share = hidden
        evidence += (f"; of {duration(total_ps)} of DP collectives in rank {rank}'s step {step} "
                     f"({buckets} gradient bucket(s)), {percent(hidden_share)} ran under backward")
    ranks, nodes = ids(range(layout.world)), ids(layout.node)
    job = run.scenario["job"]
    # With overlap on, the last bucket's reduction (and the parameter gather after the optimizer)
    # is always exposed; only when overlap hides less than the rest is it failing.
    if job["overlap_grad_reduce"] and (hidden is None or hidden[-1] >= HIDDEN_WHEN_OVERLAP_WORKS):
        return []
    if not job["overlap_grad_reduce"]:
        return [Finding(place, "overlap_off", lost_per_step, share, ranks, nodes,
                        "job.overlap_grad_reduce is off, so gradients are reduced only after the "
                        "whole backward pass: " + evidence,
                        "Turn on overlapped gradient reduction (job.overlap_grad_reduce: true, "
                        "false here; DDP's or Megatron's bucketing) so each bucket is reduced as "
                        "backward produces it.")]
    replicas = layout.sizes["dp"]
    bucket = job.get("bucket_parameters")
    default = max(DEFAULT_BUCKET, BUCKET_PER_REPLICA * replicas)
    now = f"{bucket:,} here" if bucket else f"the default {default:,} here"
    return [Finding(place, "dp_not_hidden", lost_per_step, share, ranks, nodes,
                    "overlap is on, yet " + evidence,
                    f"Start the reduction earlier in backward with smaller gradient buckets "
                    f"(job.bucket_parameters: {(bucket or default) // 2:,}, {now}); or give it "
                    f"more backward to hide under: more micro-batches per step "
                    f"({_micro_batches(job, replicas)} per replica here).")]


def _hidden_share_of_gradient_collectives(run, budget):
    """(rank, step, gradient buckets, time in DP collectives, share of it hidden) in one recorded
    rank-step, or None when no rank's whole step was recorded."""
    ops = run.first_recorded_step_ops()
    if ops is None:
        return None
    dp = ops[(ops["kind"] == "collective") & (ops["communicator"] == "dp")]
    total = int((dp["end_ps"] - dp["start_ps"]).sum())
    rank, step = int(ops["rank"].iloc[0]), int(ops["step"].iloc[0])
    rows = budget.rank_steps
    exposed = rows.loc[(rows["rank"] == rank) & (rows["step"] == step), "dp_comm_ps"]
    if not total or exposed.empty:
        return None
    buckets = int(dp["name"].str.startswith("gradient").sum())
    return rank, step, buckets, total, max(0.0, 1 - int(exposed.iloc[0]) / total)


def _pipeline_bubble(run, budget):
    """Idle pipeline stages. The bubble every stage pays is the schedule's; a stage idling more than
    the least idle one waits for something else (data, a straggler), which other checks name."""
    layout = run.layout
    stages = layout.sizes["pp"]
    if stages < 2:
        return []
    per_stage = budget.rank_steps.groupby([*KEY, "stage"])["bubble_ps"].median()
    lost = float(per_stage.groupby("stage").median().min())
    lost_per_step, share = budget.cost(lost)
    if not share >= WORTH_REPLANNING:
        return []
    job = run.scenario["job"]
    micro_batches = _micro_batches(job, layout.sizes["dp"])
    chunks = int(job["parallelism"]["virtual_stages"])
    evidence = (f"every one of the {stages} pipeline stages idles at least {duration(lost)} per "
                f"step ({percent(share)}); {micro_batches} micro-batch(es) per replica over "
                f"{stages} stages leave (p-1)/(v m+p-1) = "
                f"{percent(_bubble(stages, chunks, micro_batches))} of the step to filling and "
                f"draining the pipeline under the {job['schedule']} schedule")
    return [Finding("scheduling_placement", "pipeline_bubble", lost_per_step, share,
                    ids(range(layout.world)), ids(layout.node), evidence,
                    _smaller_bubble(job, stages, chunks, micro_batches))]


def _micro_batches(job, replicas):
    return int(job["global_batch"]) // (int(job["micro_batch"]) * replicas)


def _bubble(stages, chunks, micro_batches):
    """The share of a pipelined step spent filling and draining: (p-1)/(v m+p-1)."""
    return (stages - 1) / (chunks * micro_batches + stages - 1)


def _smaller_bubble(job, stages, chunks, micro_batches):
    """The next changes that shrink the bubble, each with the bubble it would leave: more model
    chunks per stage (interleaving: the same batch, more pipeline transfers), then more
    micro-batches (smaller ones at the same batch, or a larger batch)."""
    global_batch, micro_batch = int(job["global_batch"]), int(job["micro_batch"])
    options = []
    layers_per_stage = int(job["model"]["layers"]) // stages
    more_chunks = next((v for v in range(max(2, chunks + 1), layers_per_stage + 1)
                        if layers_per_stage % v == 0), None)
    if more_chunks is not None:
        # The interleaved schedule runs whole rounds of one micro-batch per stage.
        rounded = -(-micro_batches // stages) * stages
        change = (f"the interleaved schedule with {more_chunks} model chunks per stage "
                  f"(job.schedule: interleaved, job.parallelism.virtual_stages: {more_chunks})")
        if rounded != micro_batches:
            change += (f" with {rounded} micro-batches per replica, a multiple of the {stages} "
                       f"stages (job.global_batch: {global_batch * rounded // micro_batches})")
        options.append((change, _bubble(stages, more_chunks, rounded)))
    if micro_batch > 1:
        smaller = micro_batch // 2
        more = micro_batches * micro_batch // smaller
        options.append((f"{more} micro-batches of {smaller} at the same global batch "
                        f"(job.micro_batch: {smaller})", _bubble(stages, chunks, more)))
    else:
        more = max(2 * micro_batches, MICRO_BATCHES_PER_STAGE * stages)
        options.append((f"{more} micro-batches per replica, a larger batch (job.global_batch: "
                        f"{global_batch * more // micro_batches})",
                        _bubble(stages, chunks, more)))
    return (f"With p={stages} stages, v={chunks} chunks and m={micro_batches} micro-batches the "
            f"{job['schedule']} schedule leaves {percent(_bubble(stages, chunks, micro_batches))} "
            "to the bubble: " + "; ".join(f"{change} would leave {percent(share)}"
                                          for change, share in options) + ".")
