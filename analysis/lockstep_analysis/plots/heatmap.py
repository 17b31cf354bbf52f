"""Every rank at every step, as one picture: the figure that finds a straggler.

In a synchronous job every rank's step ends within a hair of the others' (they wait for each other),
so by step time a slow GPU slows its whole column and hides among its peers; the rank's own work
(kernels, and collectives once its peers had joined: what `steps.slowest_rank` and the straggler
detector count, models/training/training_job.cpp) is what singles it out, and over its pipeline
stage's median (the detector's test) it stands out even where stages differ in work: that is the
default, and `metric` chooses another; the slowest rank of each step is marked either way.
"""

import matplotlib
import numpy as np

from lockstep_analysis.plots.figure import new_figure, styled
from lockstep_analysis.plots.inputs import require_table, title_of
from lockstep_analysis.plots.scales import time_unit
from lockstep_analysis.run_file import load_table

JOB_RUN = "a job run (the scenario has a `job` section)"
# A rank's own work in its rank_steps row: as training_job.cpp counts it for the straggler detector.
OWN_WORK = ["compute_ps", "tp_comm_ps", "cp_comm_ps", "pp_comm_ps"]
# The metrics: what the figure calls each, and the unit its colour bar shows.
METRICS = {
    "step": ("step time", "time"),
    "work": ("own work (compute + TP, CP, PP communication)", "time"),
    "work-vs-stage": ("own work / its pipeline stage's median", "ratio"),
}
# More rows than a figure has pixel rows to give them would be drawn as an arbitrary sample.
MAX_ROWS = 256


@styled
def heatmap(path, metric="work-vs-stage", max_rows=MAX_ROWS):
    """Ranks down, steps across (in the order they ran, an attempt after a restart marked), colour
    = the rank's own work over its stage's median (`metric="work-vs-stage"`), its own work
    (`metric="work"`) or its step time (`metric="step"`: end - start in `rank_steps`). Beyond
    `max_rows` ranks, each row is a block of consecutive ranks showing its largest value, so one
    slow rank among 16,384 still shows. Returns the Figure."""
    label, scale = METRICS[metric]
    per_rank = require_table(path, "rank_steps", "heatmap", JOB_RUN)
    steps = require_table(path, "steps", "heatmap", JOB_RUN)
    value = _metric(path, per_rank, metric)

    ranks = int(per_rank["rank"].max()) + 1
    per_row = -(-ranks // max_rows)
    columns = sorted(set(zip(per_rank["attempt"], per_rank["step"])))
    column_of = {key: index for index, key in enumerate(columns)}
    rows = per_rank["rank"].to_numpy() // per_row
    cols = np.array([column_of[key] for key in zip(per_rank["attempt"], per_rank["step"])])
    grid = np.full((-(-ranks // per_row), len(columns)), np.nan)
    np.fmax.at(grid, (rows, cols), value.to_numpy())

    if scale == "time":
        unit, ps_per_unit = time_unit(np.nanmax(grid))
        grid, colour_label = grid / ps_per_unit, f"{label} ({unit})"
    else:
        colour_label = f"{label} (x)"
    figure, ax = new_figure()
    # Grey: a rank with no row for a step that others finished.
    colours = matplotlib.colormaps["viridis"].with_extremes(bad="lightgrey")
    image = ax.imshow(grid, cmap=colours, aspect="auto", interpolation="nearest", origin="upper",
                      extent=(-0.5, len(columns) - 0.5, grid.shape[0] * per_row - 0.5, -0.5))
    figure.colorbar(image, ax=ax, label=colour_label)
    ax.grid(False)

    marked = [(column_of[key], rank) for key, rank in
              zip(zip(steps["attempt"], steps["step"]), steps["slowest_rank"]) if key in column_of]
    if marked:
        x, y = zip(*marked)
        ax.plot(x, np.array(y) // per_row * per_row + (per_row - 1) / 2, linestyle="none",
                marker="o", markersize=7, markerfacecolor="none", markeredgecolor="red",
                markeredgewidth=1.5, label="slowest rank of the step", gid="slowest-rank")
        ax.legend(loc="upper right", framealpha=0.9)
    _label_steps(ax, columns)
    ax.set_ylabel("rank" if per_row == 1 else f"rank (each row: the largest of {per_row} ranks)")
    ax.set_title(title_of([path], f"{label} per rank and step"))
    return figure


def _metric(path, per_rank, metric):
    """The value of each rank_steps row under `metric`, as a float Series."""
    if metric == "step":
        return (per_rank["end_ps"] - per_rank["start_ps"]).astype(float)
    work = per_rank[OWN_WORK].sum(axis=1).astype(float)
    if metric == "work":
        return work
    stage = per_rank["rank"].map(load_table(path, "rank_memory").set_index("rank")["stage"])
    return work / work.groupby([per_rank["attempt"], per_rank["step"], stage]).transform("median")


def _label_steps(ax, columns):
    """Step numbers under the columns (at most about 20 of them), and a line where a restart
    begins the next attempt: the steps after it are the restored ones run again."""
    stride = max(1, -(-len(columns) // 20))
    ticks = list(range(0, len(columns), stride))
    ax.set_xticks(ticks, [str(columns[i][1]) for i in ticks])
    ax.set_xlabel("step, in the order run")
    for index in range(1, len(columns)):
        if columns[index][0] != columns[index - 1][0]:
            ax.axvline(index - 0.5, color="white", linewidth=2)
            ax.annotate(f"restart: attempt {columns[index][0]}", (index - 0.5, -0.5),
                        xytext=(4, -4), textcoords="offset points", va="top", color="white",
                        fontweight="bold", annotation_clip=False)
