"""One run file as the diagnosis sees it: each table read once, when a check first asks for it, and
the facts of the resolved scenario that the tables leave out (where ranks run, what switches are
called).
"""

from functools import cached_property

import h5py
import numpy as np
import pandas as pd

from lockstep_analysis.fabric_names import FabricNames
from lockstep_analysis.job_layout import JobLayout, gpus_per_node
from lockstep_analysis.run_file import load_table, meta, scenario, tables

# rank_ops can hold every op of every rank (the default records the first step of all of them):
# tens of millions of rows on a large job. One rank's recorded step is all a diagnosis needs from
# it, so it reads at most this many rows, from the start, where the first recorded step ends.
RANK_OPS_ROWS_READ = 1_000_000


class RunSignals:
    def __init__(self, path):
        self.path = path
        self.tables = set(tables(path))
        self._loaded = {}

    def table(self, name):
        """The table as a DataFrame, or None when this kind of run does not write it."""
        if name not in self.tables:
            return None
        if name not in self._loaded:
            self._loaded[name] = load_table(self.path, name)
        return self._loaded[name]

    def rows(self, name):
        """The table, empty when absent: for checks that only look for rows."""
        table = self.table(name)
        return table if table is not None else pd.DataFrame()

    @cached_property
    def meta(self):
        return meta(self.path)

    @cached_property
    def scenario(self):
        return scenario(self.path)

    @cached_property
    def is_job(self):
        return "steps" in self.tables

    @cached_property
    def layout(self):
        return JobLayout(self.scenario) if self.is_job else None

    @cached_property
    def names(self):
        return FabricNames(self.scenario)

    @cached_property
    def gpus_per_server(self):
        return gpus_per_node(self.scenario)

    def server(self, gpu):
        """The server of a GPU, or of a NIC: GPU i's NIC is fabric endpoint i."""
        return int(gpu) // self.gpus_per_server

    @cached_property
    def _rank_on_gpu(self):
        # Every placement the job had: a restart puts the ranks of a drained server on a spare.
        if "rank_placement" in self.tables:
            placement = self.table("rank_placement")
            return dict(zip(placement["gpu"].tolist(), placement["rank"].tolist()))
        return self.layout.rank_of_gpu() if self.layout is not None else {}

    @cached_property
    def last_gpu_of_rank(self):
        """Each rank's GPU as the job's last attempt placed it (numpy array indexed by rank)."""
        placement = self.table("rank_placement")
        last = placement[placement["attempt"] == placement["attempt"].max()].sort_values("rank")
        return last["gpu"].to_numpy()

    def rank_on(self, gpu):
        """The job rank on a GPU (behind a NIC), or None when the job does not use it."""
        return self._rank_on_gpu.get(int(gpu))

    @cached_property
    def nic_ports(self):
        """The wiring table's rows of the NICs (an endpoint has one port), indexed by NIC; empty
        without a fabric (network.model: analytic)."""
        ports = self.rows("ports")
        if ports.empty:
            return ports
        return ports[ports["node"] < self.names.endpoints].set_index("node")

    def first_recorded_step_ops(self):
        """The ops of one rank's first recorded step (the lowest such rank), or None when no rank's
        whole step lies within the rows read."""
        if "rank_ops" not in self.tables:
            return None
        with h5py.File(self.path, "r") as f:
            dataset = f["rank_ops"]
            rows = dataset[: min(dataset.shape[0], RANK_OPS_ROWS_READ)]
        # Chosen on the raw columns, so that only the chosen rows' text is decoded.
        ends = rows[rows["kind"] == b"marker"]
        if len(ends) == 0:
            return None
        first = ends[np.lexsort((ends["end_ps"], ends["rank"], ends["step"]))[0]]
        # A step redone after a restart is recorded again under the same number, later.
        mine = rows[(rows["rank"] == first["rank"]) & (rows["step"] == first["step"])
                    & (rows["end_ps"] <= first["end_ps"])]
        return pd.DataFrame({name: (np.char.decode(mine[name], "ascii")
                                    if mine.dtype[name].kind == "S" else mine[name])
                             for name in ("rank", "step", "kind", "name", "communicator",
                                          "start_ps", "end_ps")})
