"""Where a job's measured steps went, rank by rank: the `rank_steps` parts with each rank's pipeline
stage, and the step times they add up to. Checks compare a rank with its peers (the ranks of its
stage do the same work) and turn a loss per step into a share of the step.

Steps replayed at a priced time (job.reuse_steady_step) have no rank rows and are left out, so that
shares are of the steps that were measured.
"""

from functools import cached_property

import pandas as pd

from lockstep_analysis.findings import UNKNOWN_PS, cost
from lockstep_analysis.step_summary import PARTS

KEY = ["step", "attempt"]
# What a rank's step is made of, by communicator: the time it spent in its own communication once
# its peers were in (waiting for them is wait_for_others_ps, or bubble_ps for a pipeline receive).
COMMUNICATION = ["tp_comm_ps", "cp_comm_ps", "pp_comm_ps", "dp_comm_ps"]


class StepBudget:
    def __init__(self, run):
        table = run.table("rank_steps")
        columns = {name: table[name].to_numpy() for name in table.columns}
        columns["step_ps"] = columns["end_ps"] - columns["start_ps"]
        columns["stage"] = run.layout.coordinate("pp")[columns["rank"]]
        columns["communication_ps"] = sum(columns[part] for part in COMMUNICATION)
        # Built at once from columns, so that pandas makes one block of them rather than merging
        # blocks column by column (seconds on a 16,384-rank run).
        self.rank_steps = pd.DataFrame(columns)
        steps = run.table("steps").copy()
        steps["step_ps"] = steps["end_ps"] - steps["start_ps"]
        measured = self.rank_steps[KEY].drop_duplicates()
        self.steps = steps.merge(measured, on=KEY).sort_values(["start_ps", *KEY],
                                                               ignore_index=True)

    @property
    def n_steps(self):
        return len(self.steps)

    @cached_property
    def mean_step_ps(self):
        return float(self.steps["step_ps"].mean()) if self.n_steps else None

    def mean(self, part):
        """A part's mean over every rank and measured step, in ps."""
        return float(self.rank_steps[part].mean())

    def typical(self, part, ranks=None):
        """A part's mean over ranks (or over `ranks`) in the median step, in ps: what the plan costs
        every step, unmoved by an episode that slowed a few of them."""
        rows = self.rank_steps
        if ranks is not None:
            rows = rows[rows["rank"].isin(ranks)]
        return float(rows.groupby(KEY)[part].mean().median())

    def share(self, part):
        """A part's share of the ranks' steps."""
        return self.mean(part) / float(self.rank_steps["step_ps"].mean())

    def worst_rank_per_step(self, part):
        """The largest value of a part over the ranks, per measured step: what a stall on the
        critical path (every rank waits for the slowest to be fed or checkpointed) costs."""
        return self.rank_steps.groupby(KEY)[part].max()

    def versus_stage(self, part):
        """Each rank-step's part over the median of its stage in that step, as (value, median)."""
        median = self.rank_steps.groupby([*KEY, "stage"])[part].transform("median")
        return self.rank_steps[part], median

    def excess_over_stage(self, part, ranks):
        """What `ranks` spent in `part` beyond their stage's median, the largest of them per step,
        per measured step: what the others waited for them."""
        value, median = self.versus_stage(part)
        mine = self.rank_steps["rank"].isin(ranks)
        beyond = (value - median)[mine].clip(lower=0)
        return float(beyond.groupby([self.rank_steps.loc[mine, k] for k in KEY]).max().sum()
                     / self.n_steps)

    def inter_node_communication(self, layout, ranks=None):
        """The ranks' (or `ranks'`) mean time per step in communication over the fabric: the parts
        of the communicators whose groups span servers."""
        parts = [f"{dim}_comm_ps" for dim in ("tp", "cp", "pp", "dp")
                 if len(layout.groups_spanning_nodes(dim))]
        rows = self.rank_steps
        if ranks is not None:
            rows = rows[rows["rank"].isin(ranks)]
        return float(rows[parts].sum(axis=1).mean()) if parts else 0.0

    def excess_of_steps(self, overlapping):
        """Step time beyond the median step, summed over the steps `overlapping` selects (a boolean
        mask over `steps`), per measured step: what an episode that slowed those steps cost."""
        beyond = (self.steps["step_ps"] - self.steps["step_ps"].median()).clip(lower=0)
        return float(beyond[overlapping].sum()) / self.n_steps

    def steps_overlapping(self, start_ps, end_ps):
        return (self.steps["start_ps"] < end_ps) & (self.steps["end_ps"] > start_ps)

    def cost(self, lost_ps_per_step):
        return cost(lost_ps_per_step, self.mean_step_ps)

    def breakdown(self):
        """{part: share of the ranks' steps}, largest first, parts that took time only."""
        shares = {part: self.share(part) for part in [*PARTS, "other_ps"]}
        return dict(sorted(((p, s) for p, s in shares.items() if s > 0), key=lambda item: -item[1]))


def cost_per_step(budget, lost_ps_per_step):
    """(ps per step, share of the step), unknown for a run without measured steps (a fabric run)."""
    return budget.cost(lost_ps_per_step) if budget is not None else (UNKNOWN_PS, float("nan"))
