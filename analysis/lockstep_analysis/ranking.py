"""The order a diagnosis's findings are read in, in tiers: what stopped or interrupted the run, then
the incidents, then what the plan costs.

An interruption is what a reader must know first (the job stopped, or a restart cost it a hundred
steps' worth), and it is usually the consequence of an incident: so interruptions come first, each
naming the servers that caused it and the incident finding that says what was wrong there
(diagnosis.py), then the incidents by the time they cost the run, then the plan's costs by share
of the step. One figure for all would rank a pipeline bubble that every step pays by design above
the failing GPU someone is replaying the run to find.
"""

from lockstep_analysis.findings import CHECKPOINT_BEYOND_PLAN

INTERRUPTION, INCIDENT, PLAN, VERDICT = range(4)

HEADINGS = {
    INTERRUPTION: "What stopped or interrupted the run",
    INCIDENT: "Incidents: anomalies against peers or the run's other steps, by time lost",
    PLAN: "What the plan costs, by share of the step",
}

_INTERRUPTIONS = {"hang", "collective_timeout", "network_error", "node_drained", "no_spare_nodes",
                  "stalled", "out_of_memory", "restarts"}
_PLAN = {"tp_across_nodes", "cp_across_nodes", "overlap_off", "dp_not_hidden", "pipeline_bubble"}
_VERDICTS = {"healthy", "no_steps"}


def tier(finding, share_of_step, found):
    """The tier of `finding` (a finding identifier, its share of the step) among the identifiers
    `found` in one run.

    A checkpoint stall is what the cadence costs, unless it takes more of the step than any cadence
    is planned to, or the file system also starves the data loader: then the storage misbehaves."""
    if finding in _INTERRUPTIONS:
        return INTERRUPTION
    if finding == "checkpoint_stall":
        abnormal = share_of_step >= CHECKPOINT_BEYOND_PLAN or "storage_wait" in found
        return INCIDENT if abnormal else PLAN
    if finding in _PLAN:
        return PLAN
    if finding in _VERDICTS:
        return VERDICT
    return INCIDENT


def ranked(findings):
    """`findings` (Finding objects with lost_ps filled) in reading order. The sort is stable, so
    findings of equal weight (a fabric run's, with no time to weigh) keep the checks' order."""
    found = {f.finding for f in findings}

    def order(f):
        level = tier(f.finding, f.share_of_step, found)
        if level == INTERRUPTION:
            # One that ended the job before the restarts, which the job survived.
            return level, (f.finding == "restarts", -f.lost_ps)
        if level == PLAN:
            return level, (-f.share_of_step,)
        return level, (-f.lost_ps,)
    return sorted(findings, key=order)
