"""Flow completion times as CDFs, the fabric's report card: the median says how fast the network
is, the tail (p99) how unfair, and a log axis shows both on one figure."""

import numpy as np

from lockstep_analysis.fct import nearest_rank_percentile
from lockstep_analysis.flow_paths import flow_paths
from lockstep_analysis.plots.figure import new_figure, styled
from lockstep_analysis.plots.inputs import as_paths, labels_of, require_table, title_of
from lockstep_analysis.plots.scales import decimal_size, plain_log_ticks, time_unit

FABRIC_RUN = "a fabric run with traffic (a scenario with a `traffic` section)"
GROUPINGS = ("size", "hops")


def _groups(path, by):
    """[(group label, FCTs in ps)] of the run's completed flows, split `by` size decade, by hops
    (links crossed: 2 under one switch, 4 through a spine) or not at all (None)."""
    flows = require_table(path, "flows", "fct", FABRIC_RUN)
    if by is None:
        return [("", flows["fct_ps"])]
    if by == "size":
        decade = np.floor(np.log10(flows["bytes"].clip(lower=1))).astype(int)
        return [(f"{decimal_size(10 ** d)} to {decimal_size(10 ** (d + 1))}", group["fct_ps"])
                for d, group in flows.groupby(decade)]
    if by == "hops":
        routed = flow_paths(path)
        return [(f"{hops} hops", group["fct_ps"]) for hops, group in routed.groupby("hops")]
    raise ValueError(f"fct: group by one of {', '.join(GROUPINGS)}, not {by!r}")


@styled
def fct(paths, by=None, labels=None):
    """The CDF of flow completion time (log scale), one line per run in `paths` (a path or a list;
    `labels` for the legend, default the file names) and, with `by` ('size' or 'hops'), per group
    of flows; each legend entry gives its flow count and p99. Returns the Figure."""
    paths = as_paths(paths)
    curves = []
    for path, label in zip(paths, labels_of(paths, labels)):
        for group, fcts in _groups(path, by):
            name = ", ".join(part for part in (label if len(paths) > 1 else "", group) if part)
            curves.append((name or label, np.sort(fcts.to_numpy())))
    unit, ps_per_unit = time_unit(max(int(values[-1]) for _, values in curves))
    figure, ax = new_figure()
    for index, (name, values) in enumerate(curves):
        # From 0 at the fastest flow, so that even a group of one flow draws a line.
        share = np.arange(0, len(values) + 1) / len(values)
        p99 = nearest_rank_percentile(values, 99) / ps_per_unit
        ax.step(np.concatenate([values[:1], values]) / ps_per_unit, share, where="post",
                gid=f"fct-{index}", label=f"{name} ({len(values)} flows, p99 {p99:.3g} {unit})")
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(f"flow completion time ({unit})")
    ax.set_ylabel("share of flows completed within")
    ax.legend(loc="lower right", fontsize=9)
    grouped = f" by {by}" if by else ""
    ax.set_title(title_of(paths, f"flow completion time CDF{grouped}"))
    return figure
