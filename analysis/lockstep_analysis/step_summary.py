"""Where each training step's time went, one row per step.

A synchronous job is as slow as its slowest rank, so the questions are: how long was the step, who
held it up, how long did the others wait, and how much was communication. This joins `steps` with the
per-rank `rank_steps` to answer them.
"""

from lockstep_analysis.run_file import load_table
from lockstep_analysis.units import with_seconds


def step_summary(path):
    """One row per completed step, times in both `_ps` (exact) and `_s` (float) columns.

    Columns: step, slowest_rank, step_ps (end - start), mean_compute_ps and mean_wait_for_slowest_ps
    (averaged over ranks), comm_ps (the step's all-reduce), and the `_s` twin of each `_ps` column.
    Steps cut off by `--until` are absent: only finished steps have rows in `steps`.
    """
    steps = load_table(path, "steps")
    per_rank = load_table(path, "rank_steps")
    means = (
        per_rank.groupby("step")[["compute_ps", "wait_for_slowest_ps"]]
        .mean()
        .rename(columns=lambda c: "mean_" + c)
        .reset_index()
    )
    summary = steps.merge(means, on="step", how="left", validate="one_to_one")
    summary["step_ps"] = summary["end_ps"] - summary["start_ps"]
    summary = summary.rename(columns={"all_reduce_ps": "comm_ps"})
    columns = ["step", "slowest_rank", "step_ps", "mean_compute_ps", "mean_wait_for_slowest_ps",
               "comm_ps"]
    return with_seconds(summary[columns])
