"""Unit conversion, in this one place.

The file stores times as integer picoseconds (columns ending in `_ps`) because the simulator's clock is
an integer count of picoseconds and integers keep results exact and byte-reproducible. People read
seconds, so analysis converts here and nowhere else: one constant, one rule for naming the result.
The scenario text in /meta spells durations with units ("10us"); `duration_ps` reads them exactly.
"""

import re
from decimal import Decimal

PS_PER_SECOND = 10**12

# The duration units of scenarios (scenarios/README.md), in picoseconds.
_PS_PER_UNIT = {"ps": 1, "ns": 10**3, "us": 10**6, "ms": 10**9, "s": 10**12,
                "min": 60 * 10**12, "h": 3600 * 10**12}


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
            out[column[: -len("_ps")] + "_s"] = seconds(df[column])
    return out


def seconds(ps):
    """Picoseconds (an int, or a column of them) as float seconds."""
    return ps / PS_PER_SECOND


def duration_ps(text):
    """A scenario duration ("10us", "1.5ms", "0ps") as an exact int of picoseconds.

    The same rules as the simulator: a unit is required, and a decimal fraction is fine only if the
    result is a whole number of picoseconds. Raises ValueError otherwise.
    """
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*", str(text))
    if not match or match.group(2) not in _PS_PER_UNIT:
        raise ValueError(f"'{text}' is not a duration with a unit (ps ns us ms s min h)")
    value = Decimal(match.group(1)) * _PS_PER_UNIT[match.group(2)]
    if value != value.to_integral_value():
        raise ValueError(f"'{text}' is not a whole number of picoseconds")
    return int(value)
