"""Flow completion times of a fabric run in a few numbers: count, min, median, p99, max.

The same numbers `lockstep run` prints ("flow completion: min ..., median ..."), computed the same
way (models/traffic/traffic_statistics.hpp): exactly, on the integer picoseconds, with nearest-rank
percentiles, so a percentile is always one of the flows' values and never an interpolation.
"""

from lockstep_analysis.run_file import load_table
from lockstep_analysis.units import seconds


def nearest_rank_percentile(values, percent):
    """The nearest-rank `percent`-th percentile of `values`: the value of rank ceil(percent n / 100)
    (ranks from 1) in ascending order.

    `percent` is an int, 0 < percent <= 100. So the median of an even count is the lower of the two
    middle values, and p99 of fewer than 100 values is the largest. Raises ValueError for an empty
    `values` or a bad `percent`.
    """
    if not isinstance(percent, int) or not 0 < percent <= 100:
        raise ValueError(f"percent must be an int in 1..100, not {percent!r}")
    ordered = sorted(int(v) for v in values)
    if not ordered:
        raise ValueError("no values")
    rank = -(-percent * len(ordered) // 100)  # ceil, in integers
    return ordered[rank - 1]


def flow_completion_summary(path):
    """FCT statistics over the completed flows of a fabric run, as a dict of plain numbers.

    Keys: `count`; `min_ps`, `median_ps`, `p99_ps`, `max_ps` (exact ints); and their `_s` twins (float
    seconds). With no completed flow, `count` is 0 and the others are None. Flows cut off by
    `--until` have no row in `flows` and are not counted.
    """
    fcts = [int(v) for v in load_table(path, "flows")["fct_ps"]]
    values = {"min": None, "median": None, "p99": None, "max": None}
    if fcts:
        values = {"min": min(fcts), "median": nearest_rank_percentile(fcts, 50),
                  "p99": nearest_rank_percentile(fcts, 99), "max": max(fcts)}
    summary = {"count": len(fcts)}
    summary.update({f"{name}_ps": value for name, value in values.items()})
    summary.update({f"{name}_s": None if value is None else seconds(value)
                    for name, value in values.items()})
    return summary
