"""Figures of a run, each returned as a matplotlib Figure: `lockstep plot KIND` draws them from the
command line (analysis/plot.py), notebooks call them directly and get them shown inline.

    from lockstep_analysis.plots import heatmap, save
    save(heatmap("job.h5"), "job-heatmap")      # job-heatmap.png and job-heatmap.svg
    save(heatmap("job.h5"), "job-heatmap.pdf")  # that file alone

    heatmap(path, metric)      job run: each rank's work per step over its stage's median
    gantt(path, step, ranks)   job run's recorded ops: one step's compute and communication streams
    pfc(path, window)          sampled port counters: PFC pauses per port over time
    queues(path, ports)        sampled port counters: queue depth and utilization of a few ports
    busbw(paths)               nccl-tests runs: bus bandwidth against size
    fct(paths, by)             fabric runs with traffic: CDFs of flow completion time

A run that lacks what a figure needs raises `PlotInputError` saying what it needs. Kept apart from
`lockstep_analysis` itself so that reading tables never needs matplotlib.
"""

from lockstep_analysis.plots.busbw import busbw
from lockstep_analysis.plots.fct import fct
from lockstep_analysis.plots.figure import save
from lockstep_analysis.plots.gantt import gantt
from lockstep_analysis.plots.heatmap import heatmap
from lockstep_analysis.plots.inputs import PlotInputError
from lockstep_analysis.plots.pfc import pfc
from lockstep_analysis.plots.queues import queues

__all__ = ["PlotInputError", "busbw", "fct", "gantt", "heatmap", "pfc", "queues", "save"]
