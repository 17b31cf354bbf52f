"""Read the HDF5 files that `lockstep run` writes into pandas.

The file layout is documented in analysis/hdf5_schema.md; this package is the one reader of it, so
notebooks and scripts never repeat h5py details or unit arithmetic.

    from lockstep_analysis import load_table, meta, tables, with_seconds
"""

from lockstep_analysis.fct import flow_completion_summary, nearest_rank_percentile
from lockstep_analysis.flow_paths import flow_paths
from lockstep_analysis.port_timeseries import port_timeseries, sample_period_ps
from lockstep_analysis.run_file import load_table, meta, run_kind, scenario, tables
from lockstep_analysis.step_summary import step_summary
from lockstep_analysis.units import PS_PER_SECOND, duration_ps, seconds, with_seconds

__all__ = ["PS_PER_SECOND", "duration_ps", "flow_completion_summary", "flow_paths", "load_table",
           "meta", "nearest_rank_percentile", "port_timeseries", "run_kind", "sample_period_ps",
           "scenario", "seconds", "step_summary", "tables", "with_seconds"]
