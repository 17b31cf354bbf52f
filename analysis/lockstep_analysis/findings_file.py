"""Adding the `findings` table to a run's file without ever leaving it half-written.

The file keeps the guarantee `lockstep run` gives it (analysis/hdf5_schema.md, "Guarantees"): a
file named OUT.h5 is always complete. The table is written into a copy, OUT.h5.partial.PID beside
it, which is renamed over the original only once closed; any failure or interruption removes the
copy. The table follows the file's conventions: a 1-D compound dataset at the root, fixed-length
NUL-padded ASCII text, int64 and float64, chunked by 1024 rows, shuffled and gzip-compressed, no
attributes and no timestamps (so the same findings give the same bytes).
"""

import os
import shutil
from pathlib import Path

import h5py
import numpy as np

from lockstep_analysis.findings import COLUMNS

TABLE = "findings"
PARTIAL = ".partial."
GZIP_LEVEL = 4  # what the simulator's writer uses


def records(findings):
    """The DataFrame of `diagnose` as the table's rows: text columns as byte strings as long as the
    longest value (at least 1: HDF5 has no empty fixed-length string)."""
    fields = []
    for column, kind in COLUMNS.items():
        if kind is str:
            width = max([1, *(len(text) for text in findings[column])])
            fields.append((column, f"S{width}"))
        else:
            fields.append((column, np.dtype(kind).newbyteorder("<")))
    rows = np.zeros(len(findings), dtype=fields)
    for column, kind in COLUMNS.items():
        values = findings[column]
        rows[column] = ([text.encode("ascii") for text in values] if kind is str
                        else values.to_numpy())
    return rows


def write_findings(path, findings):
    """Replaces the `findings` table of the run file `path` by `findings`, atomically."""
    path = Path(path)
    _remove_stale_partials(path)
    partial = path.with_name(f"{path.name}{PARTIAL}{os.getpid()}")
    try:
        shutil.copyfile(path, partial)
        shutil.copymode(path, partial)
        with h5py.File(partial, "r+") as f:
            if TABLE in f:
                del f[TABLE]
            f.create_dataset(TABLE, data=records(findings), chunks=(1024,), maxshape=(None,),
                             compression="gzip", compression_opts=GZIP_LEVEL, shuffle=True,
                             track_times=False)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def _remove_stale_partials(path):
    """Copies that a diagnosis or run killed outright left beside `path` (their process is gone)."""
    for candidate in path.parent.glob(f"{path.name}{PARTIAL}*"):
        pid = candidate.name[len(path.name) + len(PARTIAL):]
        if not pid.isdigit() or not candidate.is_file():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            candidate.unlink(missing_ok=True)
        except PermissionError:
            pass  # another user's live process
