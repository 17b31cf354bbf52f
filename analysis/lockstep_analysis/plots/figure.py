"""One look for every figure, and writing it as PNG, SVG or PDF that are the same bytes every time.

Figures are built as `matplotlib.figure.Figure` objects, not through pyplot: no GUI backend is
needed, nothing accumulates in pyplot's registry when a notebook draws dozens, and a notebook shows
a returned figure once (pyplot's inline backend would show it a second time).
"""

import functools
import os
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


# What each format's writer would otherwise stamp into the file (dates, versions), left out so that
# the same run gives the same bytes.
FORMATS = {
    ".png": {"Software": None},
    ".svg": {"Date": None, "Creator": None},
    ".pdf": {"CreationDate": None, "Creator": None, "Producer": None},
}
# A path without a suffix names a figure for both the page (SVG) and a quick look (PNG).
BOTH = (".png", ".svg")


def both(stem: Path | str) -> list[Path]:
    """STEM.png and STEM.svg, whatever dots STEM holds (a default name made from a run's)."""
    stem = Path(stem)
    return [stem.with_name(stem.name + suffix) for suffix in BOTH]


def output_paths(path: Path | str) -> list[Path]:
    """The files a path given by a user names: itself when its suffix names a format, PATH.png and
    PATH.svg when it has none. Raises ValueError for a suffix that names no format."""
    path = Path(path)
    if path.suffix == "":
        return both(path)
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"'{path.name}' ends in '{path.suffix}', which names no format this "
                         f"writes: use {', '.join(FORMATS)}, or no suffix for .png and .svg")
    return [path]


def save(figure: Figure, path: Path | str) -> list[Path]:
    """Write `figure` to the files output_paths(path) names; returns them."""
    paths = output_paths(path)
    write(figure, paths)
    return paths


def write(figure: Figure, paths: list[Path]) -> None:
    """Write `figure` to each of `paths`, in the format its suffix names.

    Each is written under a temporary name beside it and renamed once complete, so an interrupted
    or failed write leaves no half-written figure. No dates or software versions go in, so
    rendering the same run twice gives identical files.
    """
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context(STYLE):
        for target in paths:
            suffix = target.suffix.lower()
            partial = target.with_name(f".{target.name}.partial{suffix}")
            try:
                figure.savefig(partial, dpi=DPI, format=suffix[1:], metadata=FORMATS[suffix])
                os.replace(partial, target)
            finally:
                partial.unlink(missing_ok=True)
