"""One training step across a few ranks, op by op: where each rank's compute and communication
streams were busy, and the gaps where they waited.

`rank_ops` has no attempt column, so a step redone after a restart has the ops of every attempt
under one step number; the rank's window for the chosen attempt in `rank_steps` (from the end of its
previous step to the end of this one) tells them apart.
"""

from matplotlib.patches import Patch

from lockstep_analysis.plots.figure import new_figure, styled
from lockstep_analysis.plots.inputs import PlotInputError, require_table, title_of
from lockstep_analysis.plots.rank_ranges import format_ranks
from lockstep_analysis.plots.scales import time_unit
from lockstep_analysis.run_file import load_table

JOB_RUN = "a job run with recorded ops (job.record_ops)"
DEFAULT_RANKS = 16
# Colour by what the op is for, in legend order: a few categories read at a glance where 40 kernel
# names would not. Fixed colours, so the same category looks the same in every figure.
CATEGORIES = {
    "forward kernels": "tab:blue",
    "backward kernels": "tab:cyan",
    "optimizer": "tab:purple",
    "TP collectives": "tab:orange",
    "CP collectives": "tab:brown",
    "PP send/recv": "tab:green",
    "DP collectives": "tab:red",
    "other": "tab:gray",
}
_BACKWARD_SUFFIXES = ("_backward", "_backwar", "_dgrad", "_wgrad")  # names are cut at 24 bytes


def category(kind, name, communicator):
    """The legend entry an op of rank_ops belongs to (`kind`, `name`, `communicator` as there)."""
    if kind == "kernel":
        if name == "optimizer":
            return "optimizer"
        return "backward kernels" if name.endswith(_BACKWARD_SUFFIXES) else "forward kernels"
    if kind in ("send", "recv"):
        return "PP send/recv"
    return f"{communicator.upper()} collectives" if communicator in ("tp", "cp", "dp") else "other"


@styled
def gantt(path, step=0, ranks=None, attempt=None):
    """The ops of `step` on `ranks` (default: the first 16 ranks recorded), two lanes per rank
    (compute, communication), coloured by category; time from when the first of these ranks began
    the step. `attempt`: which run of a step redone after a restart (default: the first that
    finished). Returns the Figure."""
    ops = require_table(path, "rank_ops", "gantt", JOB_RUN)
    ops = ops[(ops["step"] == step) & (ops["kind"] != "marker")]
    recorded = sorted(ops["rank"].unique())
    if not recorded:
        raise PlotInputError(f"gantt: no ops of step {step} were recorded (job.record_ops.steps "
                             "says how many first steps are)")
    ranks = recorded[:DEFAULT_RANKS] if ranks is None else list(ranks)
    missing = sorted(set(ranks) - set(recorded))
    if missing:
        raise PlotInputError(f"gantt: ranks {format_ranks(missing)} have no ops recorded for step "
                             f"{step}; recorded: {format_ranks(recorded)} (job.record_ops.ranks)")
    ops, attempt = _in_attempt(path, ops[ops["rank"].isin(ranks)], step, attempt)
    if ops.empty:
        raise PlotInputError(f"gantt: no ops of step {step} fall in attempt {attempt}'s steps")

    start = int(ops["start_ps"].min())
    unit, ps_per_unit = time_unit(int(ops["end_ps"].max()) - start)
    lanes = [(rank, stream) for rank in ranks for stream in ("compute", "communication")]
    figure, ax = new_figure(height=min(12.0, 2.0 + 0.3 * len(lanes)))
    for lane, (rank, stream) in enumerate(lanes):
        mine = ops[(ops["rank"] == rank) & (ops["stream"] == stream)]
        for name, group in mine.groupby(mine["category"], sort=False):
            spans = list(zip((group["start_ps"] - start) / ps_per_unit,
                             (group["end_ps"] - group["start_ps"]) / ps_per_unit))
            # The edge keeps a sub-pixel op (a 0.2 ms optimizer in a 300 ms step) visible.
            ax.broken_barh(spans, (lane - 0.4, 0.8), facecolors=CATEGORIES[name],
                           edgecolors=CATEGORIES[name], linewidth=0.4,
                           gid=f"ops-{rank}-{stream}-{name.replace(' ', '_').replace('/', '_')}")
    shown = [name for name in CATEGORIES if name in set(ops["category"])]
    handles = [Patch(color=CATEGORIES[name], label=name) for name in shown]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), title="ops")
    ax.set_yticks(range(len(lanes)), [f"rank {rank} {stream[:4]}." if stream == "communication"
                                      else f"rank {rank} {stream}" for rank, stream in lanes])
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    ax.set_xlabel(f"time from the start of step {step} ({unit})")
    ax.grid(axis="y", visible=False)
    again = f", attempt {attempt}" if attempt else ""
    ax.set_title(title_of([path], f"step {step}{again} on ranks {format_ranks(ranks)}"))
    return figure


def _in_attempt(path, ops, step, attempt):
    """The ops of the chosen attempt of `step`, with their category; and the attempt.

    A step that no rank finished has no window: all its ops are kept.
    """
    windows = load_table(path, "rank_steps")
    windows = windows[windows["step"] == step]
    if attempt is None and not windows.empty:
        attempt = int(windows["attempt"].min())
    if attempt is not None:
        windows = windows[windows["attempt"] == attempt]
        if windows.empty:
            raise PlotInputError(f"gantt: step {step} did not finish in attempt {attempt}")
        ops = ops.merge(windows[["rank", "start_ps", "end_ps"]], on="rank",
                        suffixes=("", "_window"))
        ops = ops[(ops["start_ps"] >= ops["start_ps_window"])
                  & (ops["end_ps"] <= ops["end_ps_window"])]
    ops = ops.assign(category=[category(k, n, c) for k, n, c in
                               zip(ops["kind"], ops["name"], ops["communicator"])])
    return ops, attempt
