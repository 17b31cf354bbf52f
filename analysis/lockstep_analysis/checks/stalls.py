"""GPUs idle on input or on checkpoints: the input/storage place of the taxonomy.

A rank waiting for its batch or stalled by a checkpoint holds up every rank (the pipeline and the
collectives wait for it), so what a step lost is the longest such wait of any rank in it. The cross-
layer rule: GPUs idle with short collective time and a long data wait point to storage, not to the
network; the evidence gives both figures.
"""

import numpy as np

from lockstep_analysis.findings import (CHECKPOINT_BEYOND_PLAN, WORTH_REPORTING, Finding, duration,
                                       ids, listed, percent)


def check(run, budget):
    data_wait = _data_wait(run, budget)
    return [*data_wait, *_checkpoint_stall(run, budget, storage_slow=bool(data_wait))]


def _data_wait(run, budget):
    worst = budget.worst_rank_per_step("data_wait_ps")
    lost = float(worst.mean())
    lost_per_step, share = budget.cost(lost)
    if not share >= WORTH_REPORTING:
        return []
    rows = budget.rank_steps
    reading = rows[rows["data_wait_ps"] > 0]
    waiting = reading["rank"].unique()
    communication = float(rows["communication_ps"].mean())
    times = budget.steps["step_ps"]
    data = run.scenario["job"]["data"]  # a job without it never waits for data
    evidence = (f"{listed('rank', waiting)} (pipeline stage(s) {ids(reading['stage'])}) wait up "
                f"to {duration(worst.max())} for their batch (reading {data['prefetch']} batch(es) "
                f"ahead, {percent(float(data['cache_hit']))} from the local cache), "
                f"{duration(lost)} per "
                f"step on the critical path ({percent(share)} of the step), while exposed "
                f"communication is only {duration(communication)} per rank-step: the GPUs idle on "
                f"input; step times range {duration(times.min())} to {duration(times.max())}")
    return [Finding("input_storage", "storage_wait", lost_per_step, share, ids(waiting),
                    ids(run.layout.node[waiting]), evidence, _faster_input(run.scenario["job"]))]


def _faster_input(job):
    """Check the file system, then the loader's settings that would hide it, from this run's."""
    data, storage = job["data"], job["storage"]
    prefetch, cached = int(data["prefetch"]), float(data["cache_hit"])
    ahead = (f"read {2 * prefetch} batches ahead (job.data.prefetch, {prefetch} here)"
             if prefetch else "read ahead (job.data.prefetch: 2, 0 here: on demand)")
    cache = (f", serve more from the local NVMe cache (job.data.cache_hit, {percent(cached)} "
             "here)" if cached < 1 else "")
    return (f"Check the file system's read throughput for this job; then {ahead}{cache}, or give "
            f"the job more storage bandwidth (job.storage: {storage['per_node']} per node, "
            f"{storage['aggregate']} in all here).")


def _checkpoint_stall(run, budget, storage_slow):
    """What checkpoints cost the steps: the cadence's price, unless beyond any plan or with the
    data loader starved too (the file system is slow), which the evidence says."""
    worst = budget.worst_rank_per_step("checkpoint_ps")
    lost = float(worst.mean())
    lost_per_step, share = budget.cost(lost)
    if not share >= WORTH_REPORTING:
        return []
    checkpoint = run.scenario["job"]["checkpoint"]
    mode, every = checkpoint["mode"], int(checkpoint["every"])
    stalls = worst[worst > 0]
    evidence = (f"{len(stalls)} of {budget.n_steps} steps stalled for a checkpoint ({mode}, every "
                f"{every} steps), {duration(np.median(stalls))} each: {duration(lost)} per step "
                f"({percent(share)} of the step)")
    if share >= CHECKPOINT_BEYOND_PLAN:
        evidence += ("; stalled longer than training between checkpoints: the file system writes "
                     "slower than this cadence needs")
    if storage_slow:
        evidence += "; the same file system keeps the data loader waiting (storage_wait)"
    less_often = (f"every {2 * every} steps instead of {every} (job.checkpoint.every): "
                  f"about {duration(lost / 2)} per step, for up to {2 * every} steps redone after "
                  f"a failure instead of {every}")
    if mode == "sync":
        action = ("Checkpoint asynchronously (job.checkpoint.mode: async, sync here) so that ranks "
                  f"stall only for the copy to host memory; or checkpoint {less_often}.")
    elif stalls.max() > 2 * stalls.min():
        # The shortest stall is the copy to host memory alone; longer ones waited for the previous
        # checkpoint's write to the file system to free the buffers.
        storage = run.scenario["job"]["storage"]
        action = (f"Checkpoint {less_often}; or give the writes more bandwidth: the longest stall "
                  f"({duration(stalls.max())}, the copy {duration(stalls.min())}) waited for the "
                  f"previous checkpoint's write (job.storage: {storage['per_node']} per node, "
                  f"{storage['aggregate']} in all here).")
    else:
        action = (f"Checkpoint {less_often}; or copy to host memory faster "
                  f"(job.checkpoint.host_copy, {checkpoint['host_copy']} per GPU here).")
    ranks = budget.rank_steps.loc[budget.rank_steps["checkpoint_ps"] > 0, "rank"].unique()
    return [Finding("input_storage", "checkpoint_stall", lost_per_step, share, ids(ranks),
                    ids(run.layout.node[ranks]), evidence, action)]
