"""Bus bandwidth against message size for nccl-tests runs: latency-bound at small sizes, the
network's bandwidth at large ones, and where NCCL's algorithm and protocol change in between.

busbw = bytes / time x bus_factor (nccl-tests' definition, analysis/hdf5_schema.md), in GB/s
(10^9 B/s) as nccl-tests prints it, so the figure can be held against a real nccl-tests log.
"""

import numpy as np
from matplotlib.ticker import NullLocator

from lockstep_analysis.plots.figure import new_figure, styled
from lockstep_analysis.plots.inputs import as_paths, labels_of, require_table, title_of
from lockstep_analysis.plots.scales import binary_size
from lockstep_analysis.units import seconds

NCCL_TESTS_RUN = "an nccl-tests run (lockstep nccl-tests OP ...)"
MAX_SIZE_TICKS = 12


def bus_bandwidth(path):
    """The `nccl_tests` table with `busbw_gbps` (GB/s) beside it, less its 0-byte rows.

    A sweep that starts below one element per rank (all-gather of 8 B on 16 ranks) has 0-byte rows,
    as nccl-tests prints them; they have no bandwidth and no place on a log axis.
    """
    results = require_table(path, "nccl_tests", "busbw", NCCL_TESTS_RUN)
    results = results[results["bytes"] > 0]
    return results.assign(
        busbw_gbps=results["bytes"] / seconds(results["time_ps"]) * results["bus_factor"] / 1e9)


@styled
def busbw(paths, labels=None):
    """busbw (GB/s) against size (log scale), one line of markers per run in `paths` (a path or a
    list; `labels` for the legend, default the file names), each point a size of the sweep; where
    the algorithm or protocol that ran changes, the new one is written beside its first point.
    Returns the Figure."""
    paths = as_paths(paths)
    runs = [bus_bandwidth(path) for path in paths]
    figure, ax = new_figure()
    for index, (results, label) in enumerate(zip(runs, labels_of(paths, labels))):
        op, ranks = results["op"].iloc[0], int(results["ranks"].iloc[0])
        line, = ax.plot(results["bytes"], results["busbw_gbps"], marker="o",
                        label=f"{label}: {op}, {ranks} ranks", gid=f"busbw-{index}")
        choices = results["algorithm"] + "/" + results["protocol"]
        changes = choices != choices.shift()
        for size, bandwidth, choice, changed in zip(results["bytes"], results["busbw_gbps"],
                                                     choices, changes):
            if changed:
                ax.annotate(choice, (size, bandwidth), xytext=(-4, 6), textcoords="offset points",
                            ha="right", fontsize=8, color=line.get_color())
    ax.set_xscale("log", base=2)
    sizes = sorted(set(np.concatenate([r["bytes"].to_numpy() for r in runs])))
    ticks = sizes[::-(-len(sizes) // MAX_SIZE_TICKS)]
    ax.set_xticks(ticks, [binary_size(size) for size in ticks])
    ax.xaxis.set_minor_locator(NullLocator())  # a log axis's unlabelled ticks between sizes
    ax.set_ylim(bottom=0)
    ax.set_xlabel("size (bytes, as nccl-tests counts the operation)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.legend(loc="upper left")
    ops = list(dict.fromkeys(r["op"].iloc[0] for r in runs))
    ax.set_title(title_of(paths, f"nccl-tests {', '.join(ops)} bus bandwidth"))
    return figure
