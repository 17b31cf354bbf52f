"""Unit conversion, in this one place.

The file stores times as integer picoseconds (columns ending in `_ps`) because the simulator's clock is
an integer count of picoseconds and integers keep results exact and byte-reproducible. People read
seconds, so analysis converts here and nowhere else: one constant, one rule for naming the result.
"""

PS_PER_SECOND = 10**12


def with_seconds(df):
    """A copy of `df` with a float seconds column beside every picosecond column.

    For each column `<name>_ps` it adds `<name>_s` = value / 1e12 (e.g. `start_ps` -> `start_s`), so
    the unit stays in the column name. The `_ps` columns stay because they are exact; float64 seconds
    keep picosecond resolution only up to about 2.5 hours of simulated time (nanoseconds up to about
    100 days). `df` itself is not changed.
    """
    out = df.copy()
    for column in df.columns:
        if isinstance(column, str) and column.endswith("_ps"):
            out[column[: -len("_ps")] + "_s"] = df[column] / PS_PER_SECOND
    return out
