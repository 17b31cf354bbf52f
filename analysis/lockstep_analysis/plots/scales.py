"""Axis units people read: a time axis in s, ms or us as its span calls for, sizes in KiB or KB.

The runs keep exact picoseconds and bytes (lockstep_analysis.units); these only choose how a figure
prints them.
"""

from matplotlib.ticker import FuncFormatter, NullFormatter

from lockstep_analysis.units import PS_PER_SECOND

_TIME_UNITS = [("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)]


def time_unit(largest_ps):
    """(unit, picoseconds per unit) for an axis reaching `largest_ps`: the largest unit in which it
    is at least 1, so that ticks read 0-300 ms rather than 0-0.3 s."""
    for unit, seconds in _TIME_UNITS:
        if largest_ps >= seconds * PS_PER_SECOND:
            return unit, seconds * PS_PER_SECOND
    return _TIME_UNITS[-1][0], _TIME_UNITS[-1][1] * PS_PER_SECOND


def byte_unit(largest_bytes):
    """(unit, bytes per unit) in powers of 1000 for an axis reaching `largest_bytes` (queues)."""
    for unit, size in [("GB", 1e9), ("MB", 1e6), ("KB", 1e3)]:
        if largest_bytes >= size:
            return unit, size
    return "B", 1.0


def binary_size(value):
    """'4 KiB', '1 GiB', '8 B': a size as nccl-tests sweeps them (powers of two), for a tick."""
    for unit, size in [("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)]:
        if value >= size:
            return f"{value / size:g} {unit}"
    return f"{value:g} B"


def decimal_size(value):
    """'10 KB', '1 MB': a size in powers of 1000, as scenarios write flow sizes."""
    for unit, size in [("GB", 1e9), ("MB", 1e6), ("KB", 1e3)]:
        if value >= size:
            return f"{value / size:g} {unit}"
    return f"{value:g} B"


def plain_log_ticks(axis):
    """Label a log axis 3, 5, 300 rather than 3x10^0: at the powers of ten, and where the axis
    spans less than a factor of ten at the minor ticks too, else no tick would have a label."""
    axis.axes.autoscale_view()
    low, high = sorted(axis.get_view_interval())
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    axis.set_major_formatter(plain)
    axis.set_minor_formatter(plain if high < 10 * low else NullFormatter())
