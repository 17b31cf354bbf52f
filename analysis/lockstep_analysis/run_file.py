"""Opening a run's HDF5 file: which tables it has, which kind of run wrote it, a table as a DataFrame,
its /meta, and the scenario it ran.

The simulator stores text as fixed-length byte strings (HDF5 has no portable variable-length text that
stays byte-identical across runs); everything here hands back Python `str` instead, so callers compare
`kind == "compute"` rather than `b"compute"`.
"""

import h5py
import numpy as np
import pandas as pd


def tables(path):
    """Names of the tables in the file, sorted.

    A table is a 1-D dataset of a compound type at the root (one field per column); /meta and anything
    else is not a table, so new kinds of objects in the file do not break code that loops over tables.
    """
    with h5py.File(path, "r") as f:
        return sorted(
            name
            for name, obj in f.items()
            if isinstance(obj, h5py.Dataset) and obj.ndim == 1 and obj.dtype.names is not None
        )


def run_kind(path):
    """`"job"`, `"fabric"` or `"nccl-tests"`: which kind of run wrote the file, told by its tables.

    A job run (the scenario has `job`) writes `steps` and its siblings; a fabric run (`network` and
    `traffic`) writes `flows` and the network's tables; `lockstep nccl-tests` writes `nccl_tests`
    (analysis/hdf5_schema.md, "Kinds of run"). A job with background traffic (war story 6) writes
    both, and is a job run: its steps are what the run is about, the traffic what disturbs them.
    Raises ValueError for a file with none of them.
    """
    names = set(tables(path))
    if "steps" in names:
        return "job"
    if "flows" in names:
        return "fabric"
    if "nccl_tests" in names:
        return "nccl-tests"
    raise ValueError(f"{path}: not a job run (no 'steps'), a fabric run (no 'flows') or an "
                     "nccl-tests run (no 'nccl_tests')")


def load_table(path, name):
    """The table `name` as a DataFrame, one column per field, in the file's column order.

    Integer columns keep their exact int64 values (picoseconds do not fit a float without rounding);
    use `with_seconds` for float seconds. Byte-string columns become `str`.
    Raises KeyError naming the tables that do exist when `name` is not one of them.
    """
    with h5py.File(path, "r") as f:
        obj = f.get(name)
        if not isinstance(obj, h5py.Dataset) or obj.ndim != 1 or obj.dtype.names is None:
            raise KeyError(f"{path}: no table '{name}' (tables: {', '.join(tables(path))})")
        rows = obj[()]
    return pd.DataFrame({column: _decoded(rows[column]) for column in rows.dtype.names})


def meta(path):
    """The datasets of /meta as a dict: text as `str`, integers as `int`, reals as `float`.

    Plain Python values, so the result can be printed, compared or dumped to JSON without numpy types
    leaking out.
    """
    with h5py.File(path, "r") as f:
        return {name: _scalar(dataset[()]) for name, dataset in sorted(f["meta"].items())}


def _decoded(column):
    # The simulator writes ASCII only; decoding strictly makes anything else fail loudly.
    if column.dtype.kind == "S":
        return np.char.decode(column, "ascii")
    return column


def _scalar(value):
    if isinstance(value, bytes):
        return value.decode("ascii")
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    raise TypeError(f"unexpected /meta value of type {type(value).__name__}")


def scenario(path):
    """The run's resolved scenario (/meta/scenario) as nested dicts and lists.

    Every key is present at its effective value; dimensioned values stay text as written there
    ("10us", "100Gbps"): read durations with `duration_ps`. Needs PyYAML (Debian: python3-yaml).
    """
    import yaml  # here, so that reading tables never needs it

    return yaml.safe_load(meta(path)["scenario"])
