"""Where each training step's time went, one row per step.

A synchronous job is as slow as its slowest rank, so the questions are: how long was the step, who
held it up, how well did the GPUs do, and where did the ranks' time go. This joins `steps` with the
per-rank `rank_steps` to answer them.
"""

from lockstep_analysis.run_file import load_table
from lockstep_analysis.units import with_seconds

# The parts of a rank's step (rank_steps), averaged over ranks.
PARTS = ["compute_ps", "tp_comm_ps", "cp_comm_ps", "pp_comm_ps", "dp_comm_ps", "bubble_ps",
         "data_wait_ps", "checkpoint_ps", "wait_for_others_ps"]


def step_summary(path):
    """One row per completed step, times in both `_ps` (exact) and `_s` (float) columns.

    A step redone after a restart from a checkpoint has a row per attempt. Steps replayed at a
    priced time (job.reuse_steady_step) have no rank rows: their means are NaN.

    Columns: step, attempt, slowest_rank, step_ps (end - start), mfu, tflops_per_gpu, tokens_per_second, then
    mean_<part>_ps for each part of a rank's step in `rank_steps` (compute, tp_comm, cp_comm,
    pp_comm, dp_comm, bubble, data_wait, checkpoint, wait_for_others), averaged over ranks, and the
    `_s` twin of each `_ps` column. Steps cut off by `--until` are absent: only finished steps have
    rows in `steps`.
    """
    steps = load_table(path, "steps")
    per_rank = load_table(path, "rank_steps")
    means = (
        per_rank.groupby(["step", "attempt"])[PARTS]
        .mean()
        .rename(columns=lambda c: "mean_" + c)
        .reset_index()
    )
    summary = steps.merge(means, on=["step", "attempt"], how="left", validate="one_to_one")
    summary["step_ps"] = summary["end_ps"] - summary["start_ps"]
    columns = ["step", "attempt", "slowest_rank", "step_ps", "mfu", "tflops_per_gpu", "tokens_per_second"]
    return with_seconds(summary[columns + ["mean_" + p for p in PARTS]])
