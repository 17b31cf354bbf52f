"""Read the HDF5 files that `lockstep run` writes into pandas.

The file layout is documented in analysis/hdf5_schema.md; this package is the one reader of it, so
notebooks and scripts never repeat h5py details or unit arithmetic.

    from lockstep_analysis import load_table, meta, tables, with_seconds
"""

from lockstep_analysis.run_file import load_table, meta, tables
from lockstep_analysis.step_summary import step_summary
from lockstep_analysis.units import PS_PER_SECOND, with_seconds

__all__ = ["PS_PER_SECOND", "load_table", "meta", "step_summary", "tables", "with_seconds"]
