"""What a diagnosis finding is: the `findings` table's columns, and the few helpers every check uses
to fill them the same way.

A finding says where time went (one of the six places of the bottleneck taxonomy, or `reliability`
for a job that stopped or restarted), what the cause is (a short identifier), what it cost per step
and over the whole run, which ranks and servers it concerns, the figures behind it, and what to
change. Times are integer picoseconds, like every time in the run's file.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from lockstep_analysis.units import PS_PER_SECOND

# The taxonomy's six places, then what is not a place of a step's time.
PLACES = ("compute", "memory", "intra_node_communication", "inter_node_communication",
          "input_storage", "scheduling_placement", "reliability", "none")

# The `findings` table, in column order (analysis/hdf5_schema.md); text columns are `str`.
COLUMNS = {"rank": np.int64, "place": str, "finding": str, "lost_per_step_ps": np.int64,
           "share_of_step": np.float64, "lost_ps": np.int64, "ranks": str, "nodes": str,
           "fabric": str, "evidence": str, "action": str}
# An int64 picosecond column's "not known": the integer columns have no NaN.
UNKNOWN_PS = -1

# Thresholds of what is worth telling. A loss measured against peers or against an idle GPU (a
# straggler, a stall, a congested port) is reported from 2% of the step: below that it hides in
# step-to-step noise on a real cluster. A cost that is a design trade-off (a pipeline bubble,
# gradient reduction left exposed, tensor parallelism over the fabric) is reported from a tenth of
# the step: below that, re-planning the job rarely pays for itself.
WORTH_REPORTING = 0.02
WORTH_REPLANNING = 0.10
# A checkpoint cadence is planned to cost a few percent of the steps. Stalls that take half of them
# (longer stalled than training between checkpoints) are no plan: the file system writes slower
# than the plan assumed.
CHECKPOINT_BEYOND_PLAN = 0.5


@dataclass
class Finding:
    place: str
    finding: str
    lost_per_step_ps: int  # UNKNOWN_PS when the cost is not per step (a hang, a fabric run)
    share_of_step: float  # NaN with it
    ranks: str
    nodes: str
    evidence: str
    action: str
    fabric: str = ""  # switch ports or cables by name: "leaf1 port 8", "NIC 10 - rail2"
    # Over the whole run; None for a cost per step, which the diagnosis multiplies by the steps run.
    lost_ps: int | None = None
    # What the finding points at ("gpu 77", "nic 21", "node 9", "cable host10-rail2"), to say which
    # injected fault it matches; never used to find the cause.
    targets: frozenset = field(default_factory=frozenset)

    def __post_init__(self):
        if self.place not in PLACES:
            raise ValueError(f"unknown place {self.place!r}")
        if not all(text.isascii() for text in (self.evidence, self.action, self.ranks, self.nodes,
                                            self.fabric)):
            raise ValueError(f"{self.finding}: the file's strings are ASCII")


def cost(lost_ps_per_step, step_ps):
    """(picoseconds per step, share of the step) of a loss per step, (UNKNOWN_PS, NaN) when either
    is unknown."""
    if step_ps is None or not step_ps or math.isnan(lost_ps_per_step):
        return UNKNOWN_PS, float("nan")
    return round(lost_ps_per_step), float(lost_ps_per_step) / float(step_ps)


def ids(values):
    """Sorted distinct integers as text, runs written as ranges: `0-7 16-23 30`."""
    values = sorted({int(v) for v in values})
    parts, start = [], None
    for i, value in enumerate(values):
        if start is None:
            start = value
        if i + 1 == len(values) or values[i + 1] != value + 1:
            parts.append(str(start) if start == value else f"{start}-{value}")
            start = None
    return " ".join(parts)


def listed(noun, values, plural=None):
    """`NIC 21`, `NICs 20-21`: a noun with the values it names, plural when there are several."""
    values = sorted({int(v) for v in values})
    return f"{noun if len(values) == 1 else plural or noun + 's'} {ids(values)}"


def duration(ps):
    """Picoseconds as text in the unit that reads best: `0.3 s`, `75.6 ms`, `61.4 us`."""
    for unit, per in (("s", PS_PER_SECOND), ("ms", 10**9), ("us", 10**6), ("ns", 10**3)):
        if abs(ps) >= per:
            value = float(ps) / per
            return f"{value:.3g} {unit}" if value < 1000 else f"{value:.0f} {unit}"
    return f"{int(ps)} ps"


def percent(share):
    return f"{100 * share:.0f}%" if share >= 0.1 else f"{100 * share:.1f}%"
