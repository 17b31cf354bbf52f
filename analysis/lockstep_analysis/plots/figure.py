"""One look for every figure, and writing it as PNG and SVG that are the same bytes every time.

Figures are built as `matplotlib.figure.Figure` objects, not through pyplot: no GUI backend is
needed, nothing accumulates in pyplot's registry when a notebook draws dozens, and a notebook shows
a returned figure once (pyplot's inline backend would show it a second time).
"""

import functools
from pathlib import Path

import matplotlib
from matplotlib.figure import Figure

# Text stays text in the SVG (searchable, and the tests can find titles and labels in it); the hash
# salt fixes the ids matplotlib otherwise draws at random, so the same run gives the same SVG.
STYLE = {
    "svg.fonttype": "none",
    "svg.hashsalt": "lockstep",
    "font.size": 10,
    "axes.titlesize": 12,
    "axes.grid": True,
    "grid.alpha": 0.3,
}
DPI = 100


def styled(plot):
    """Run `plot` under STYLE: rcParams are read as artists are made, so the whole body needs it."""
    @functools.wraps(plot)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return plot(*args, **kwargs)
    return wrapper


def new_figure(width=10.0, height=6.0, rows=1, sharex=False):
    """A figure of `width` x `height` inches (DPI pixels each) and its axes (an array of them when rows > 1).

    Constrained layout keeps the size fixed, so a PNG is always width x DPI by height x DPI pixels.
    """
    figure = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    axes = figure.subplots(rows, 1, sharex=sharex, squeeze=True)
    return figure, axes


def save(figure, prefix):
    """Write `figure` as PREFIX.png and PREFIX.svg; returns the two paths.

    No dates or software versions go in, so rendering the same run twice gives identical files.
    """
    prefix = Path(prefix)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    png = prefix.with_name(prefix.name + ".png")
    svg = prefix.with_name(prefix.name + ".svg")
    with matplotlib.rc_context(STYLE):
        figure.savefig(png, dpi=DPI, metadata={"Software": None})
        figure.savefig(svg, metadata={"Date": None, "Creator": None})
    return png, svg
