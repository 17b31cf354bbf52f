"""What a figure needs from a run file, and the words that name a run, its ports and its time window
in titles, labels and errors."""

import os
from pathlib import Path

from lockstep_analysis.fabric_names import FabricNames
from lockstep_analysis.run_file import load_table, meta, scenario, tables
from lockstep_analysis.units import duration_ps


class PlotInputError(ValueError):
    """The run cannot give this figure: the wrong kind of run, or a table without the rows needed.
    `lockstep plot` exits 2 on it, as for any bad input."""


# /meta/kind as a phrase for messages ("FILE is a fabric run").
_KIND_PHRASES = {"job": "a job run", "traffic": "a fabric run",
                 "job with traffic": "a job run with traffic", "nccl-tests": "an nccl-tests run"}


def describe_run(path):
    """'victim.h5 is a fabric run': what `path` holds, for error messages."""
    kind = meta(path).get("kind", "")
    return f"{Path(path).name} is {_KIND_PHRASES.get(kind, f'a {kind!r} run')}"


def require_table(path, table, figure, needs):
    """`table` as a DataFrame, or PlotInputError saying which run the `figure` `needs` instead.

    A table that exists but is empty counts as missing: an analytic job run writes `port_samples`
    with no rows, and a message about sampling helps more than an empty figure.
    """
    if table not in tables(path):
        raise PlotInputError(f"{figure} needs {needs}; {describe_run(path)} (it has no '{table}' "
                             "table)")
    rows = load_table(path, table)
    if rows.empty:
        raise PlotInputError(f"{figure} needs {needs}; the '{table}' table of {Path(path).name} "
                             "has no rows")
    return rows


def scenario_name(path):
    """The run's scenario by name: the scenario file's stem ('6_pfc_storm'), or for
    `lockstep nccl-tests --nodes` the options that made its scenario ('--nodes 2 --preset ...')."""
    source = meta(path)["scenario_file"]
    return source if source.startswith("-") else Path(source).stem


def title_of(paths, what):
    """'6_pfc_storm: PFC pauses per port': the runs' scenario names, then what the figure shows."""
    names = list(dict.fromkeys(scenario_name(p) for p in paths))
    return f"{' vs '.join(names)}: {what}"


def port_labels(path):
    """{(node, port): '49:8 leaf1→NIC 24'} for every port of the run's network: node:port as the
    file numbers them, then the cable's two ends by the names engineers use."""
    names = FabricNames(scenario(path))
    ports = load_table(path, "ports")
    return {(node, port): f"{node}:{port} {names.node(node)}→{names.node(peer)}"
            for node, port, peer in zip(ports["node"], ports["port"], ports["peer"])}


def as_paths(paths):
    """A list of run files from one path or several: the figures that compare runs take either."""
    return [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)


def labels_of(paths, labels):
    """Legend labels for several runs: those given, else the files' stems (runs of one scenario with
    different --set overrides share a scenario name but not a file name)."""
    if labels is None:
        return [Path(p).stem for p in paths]
    if len(labels) != len(paths):
        raise PlotInputError(f"{len(labels)} label(s) for {len(paths)} run(s)")
    return list(labels)


def time_window(path, window):
    """(start_ps, end_ps) from a pair of durations as scenarios write them ('19ms', '25ms') or
    picoseconds, either None for the start or the end of the run; None for no window at all.
    PlotInputError for an empty or reversed window."""
    if window is None:
        return None
    start, end = (None if value is None else value if isinstance(value, int) else duration_ps(value)
                  for value in window)
    start = 0 if start is None else start
    end = meta(path)["end_ps"] if end is None else end
    if not start < end:
        raise PlotInputError(f"the time window from {window[0] or 0} to {window[1] or 'the end'} "
                             "is empty")
    return start, end
