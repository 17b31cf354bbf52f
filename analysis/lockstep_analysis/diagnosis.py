"""Where a run's time went and why: ranked findings from what the run measured.

    from lockstep_analysis.diagnosis import diagnose
    print(diagnose("job.h5")[["rank", "place", "finding", "lost_ps", "evidence"]])

The checks (lockstep_analysis/checks/) follow the bottleneck taxonomy's six places and its
cross-layer rules, and the low-MFU flowchart: plan costs (TP over the fabric, exposed gradient
reduction, pipeline bubble), stalls (data, checkpoints), stragglers (a slow GPU, a slow NIC), the
fabric (host-capped transfers, stalled cables, PFC pauses), and reliability (hangs, timeouts,
drains, restarts, out of memory). Findings are ranked in tiers (lockstep_analysis/ranking.py):
what stopped or interrupted the run, the incidents by time lost, the plan's costs by share of the
step. A run with no finding is reported healthy, with the largest share of its step.
"""

import pandas as pd

from lockstep_analysis.checks import flows, pauses, plan, reliability, stalls, stragglers, transfers
from lockstep_analysis.fault_match import annotate
from lockstep_analysis.findings import COLUMNS, UNKNOWN_PS, Finding, duration, ids, percent
from lockstep_analysis.ranking import INCIDENT, INTERRUPTION, ranked, tier
from lockstep_analysis.run_signals import RunSignals
from lockstep_analysis.step_budget import StepBudget

# A symptom the cause explains: gradient reduction left exposed because every transfer is capped
# at the host is the cap's cost, not the plan's.
EXPLAINED_BY = {"dp_not_hidden": {"nccl_socket", "gpudirect_off"}}

PART_NAMES = {"compute_ps": "compute", "tp_comm_ps": "TP communication",
              "cp_comm_ps": "CP communication", "pp_comm_ps": "PP communication",
              "dp_comm_ps": "DP communication", "bubble_ps": "pipeline bubble",
              "data_wait_ps": "data wait", "checkpoint_ps": "checkpoint stalls",
              "wait_for_others_ps": "waiting for other ranks", "other_ps": "idle between ops"}


class NothingToDiagnose(ValueError):
    """The file is a run of a kind the diagnosis has nothing to say about."""


def diagnose(path):
    """The run's findings as a DataFrame with the `findings` table's columns, best first.

    Raises NothingToDiagnose for an nccl-tests run, and whatever reading the file raises (OSError,
    KeyError for a file that is not a lockstep run).
    """
    run = RunSignals(path)
    if "nccl_tests" in run.tables:
        raise NothingToDiagnose(
            f"{path}: an nccl-tests run has no job or traffic to diagnose; analysis/summarize.py "
            "prints its sweep and the slowest rank of each size")
    if not run.is_job and "flows" not in run.tables:
        raise NothingToDiagnose(f"{path}: neither a job run (no 'steps') nor a fabric run (no "
                                "'flows')")
    found = ranked(_findings(run))
    _point_to_incidents(found)
    annotate(found, run.table("faults"))
    rows = [{"rank": i, **{c: getattr(f, c) for c in COLUMNS if c != "rank"}}
            for i, f in enumerate(found, start=1)]
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype(
        {c: t for c, t in COLUMNS.items() if t is not str})


def _findings(run):
    budget = StepBudget(run) if run.is_job else None
    if budget is not None and budget.n_steps == 0:
        budget = None
    found = reliability.check(run) if run.is_job else []
    if budget is not None:
        nics_recorded = not run.rows("messages").empty
        found += plan.check(run, budget)
        found += stalls.check(run, budget)
        found += stragglers.check(run, budget, nics_recorded)
    found += transfers.check(run, budget)
    found += pauses.check(run, budget)
    if not run.is_job:
        found += flows.check(run)
    causes = {f.finding for f in found}
    found = [f for f in found if not EXPLAINED_BY.get(f.finding, set()) & causes]
    steps_run = len(run.rows("steps"))
    for f in found:
        if f.lost_ps is None:
            f.lost_ps = (f.lost_per_step_ps * steps_run if f.lost_per_step_ps != UNKNOWN_PS
                         else UNKNOWN_PS)
    return found or [_healthy(run, budget)]


def _point_to_incidents(found):
    """An interruption names the servers it took out; when an incident below names one of them
    too, says so, so that a reader of the first finding learns what went wrong there."""
    names = {f.finding for f in found}
    incidents = [(number, f) for number, f in enumerate(found, start=1)
                 if tier(f.finding, f.share_of_step, names) == INCIDENT]
    for f in found:
        if tier(f.finding, f.share_of_step, names) != INTERRUPTION:
            continue
        servers = {t for t in f.targets if t.startswith("node ")}
        for number, incident in incidents:
            shared = sorted(servers & incident.targets)
            if shared:
                server = shared[0].replace("node", "server")
                f.evidence += (f"; finding {number} ({incident.finding}) says what was wrong on "
                               f"{server}")
                break


def _healthy(run, budget):
    if not run.is_job:
        return _healthy_fabric(run)
    if budget is None:
        return Finding("none", "no_steps", UNKNOWN_PS, float("nan"), "", "",
                       f"the run ended ({run.meta['outcome']}) before any step finished: no step "
                       "to measure", "Run longer (simulation.until) so that steps finish.",
                       lost_ps=UNKNOWN_PS)
    shares = budget.breakdown()
    largest, share = next(iter(shares.items()))
    layout = run.layout
    named = ", ".join(f"{_part_name(run, part)} {percent(s)}" for part, s in shares.items()
                      if s >= 0.01)
    mfu = float(budget.steps["mfu"].mean())
    evidence = (f"nothing stands out: a step takes {duration(budget.mean_step_ps)} at MFU "
                f"{percent(mfu)}, of which {named}")
    # Nothing is lost: the per-step figures are the largest part's, what to work on next.
    return Finding("none", "healthy", round(budget.mean(largest)), share,
                   ids(range(layout.world)), ids(layout.node), evidence,
                   f"Nothing to fix; the largest share is {_part_name(run, largest)}.",
                   lost_ps=UNKNOWN_PS)


def _part_name(run, part):
    name = PART_NAMES[part]
    dim = part.split("_")[0]
    if dim in ("tp", "cp", "pp", "dp"):
        across = len(run.layout.groups_spanning_nodes(dim)) > 0
        name += " across servers" if across else " within servers"
    return name


def _healthy_fabric(run):
    paths = flows.slowdowns(run)
    spread = ("" if paths is None else
              f"; flows took a median {paths['slowdown'].median():.2f}x and at most "
              f"{paths['slowdown'].max():.2f}x their time alone on an idle path")
    return Finding("none", "healthy", UNKNOWN_PS, float("nan"), "", "",
                   "no PFC pause, stalled transfer or slow NIC" + spread, "Nothing to fix.",
                   lost_ps=UNKNOWN_PS)
