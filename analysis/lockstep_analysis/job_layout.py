"""Where a job's ranks run: their parallel coordinates, their GPU and their server, from the
resolved scenario (/meta/scenario).

The run file names ranks, GPUs (blocked_ranks) and fabric endpoints (messages, ports), but not the
map between them: the simulator derives it from `job.parallelism` and `job.placement`, and so does
this, with the rules of models/training/rank_layout.hpp. A diagnosis needs it to turn "rank 21 is
late" into "GPU 21's NIC on server 2", and to see a tensor-parallel group that spans servers.
This is the placement the job started with; a restart onto spare servers moves ranks, as the
file's `rank_placement` table records.
"""

import numpy as np

# Megatron's spelling in `job.parallelism.order`, and the key of each size in `job.parallelism`.
_DIMENSIONS = {"tp": "tensor", "cp": "context", "ep": "expert", "dp": "data", "pp": "pipeline"}


class JobLayout:
    """Ranks 0..world-1 of a job with, per rank (numpy arrays indexed by rank): `gpu`, `node` (the
    server) and, per parallel dimension ("tp", "cp", "ep", "dp", "pp"), the coordinate and the
    group (an id shared by the ranks that differ only in that coordinate)."""

    def __init__(self, scenario):
        job = scenario["job"]
        parallelism = job["parallelism"]
        self.sizes = {dim: int(parallelism.get(key, 1)) for dim, key in _DIMENSIONS.items()}
        self.world = int(np.prod(list(self.sizes.values())))
        self.gpus_per_node = gpus_per_node(scenario)
        self.gpu = _placement(job.get("placement", "packed"), self.world, self.gpus_per_node)
        self.node = self.gpu // self.gpus_per_node
        ranks = np.arange(self.world)
        self._coordinate, self._group = {}, {}
        for dim, stride in _strides(parallelism.get("order", "tp-cp-ep-dp-pp"), self.sizes).items():
            coordinate = ranks // stride % self.sizes[dim]
            self._coordinate[dim] = coordinate
            # Ranks that differ only in this coordinate share everything else: the rank with the
            # coordinate set to 0 names the group.
            self._group[dim] = ranks - coordinate * stride

    def coordinate(self, dim):
        return self._coordinate[dim]

    def group(self, dim):
        return self._group[dim]

    def groups_spanning_nodes(self, dim):
        """Group ids of `dim` whose ranks sit on more than one server."""
        group_of_each_pair = np.unique(np.stack([self._group[dim], self.node]), axis=1)[0]
        ids, counts = np.unique(group_of_each_pair, return_counts=True)
        return ids[counts > 1]

    def rank_of_gpu(self):
        """{gpu: rank} for the GPUs the job uses."""
        return dict(zip(self.gpu.tolist(), range(self.world)))


def gpus_per_node(scenario):
    """GPUs (each with its NIC, one fabric endpoint) per server; 1 without a `servers` section,
    where every endpoint is a rank of its own."""
    servers = scenario.get("servers")
    if not servers:
        return 1
    return int(servers["gpus"])  # the resolved scenario writes out the preset's


def _strides(order, sizes):
    """{dim: rank distance between neighbours}: dimensions listed fastest-varying first, those of
    size 1 that the order leaves out appended (where they change nothing)."""
    listed = order.split("-")
    dims = listed + [dim for dim in _DIMENSIONS if dim not in listed]
    strides, stride = {}, 1
    for dim in dims:
        strides[dim] = stride
        stride *= sizes[dim]
    return strides


def _placement(placement, world, per_node):
    ranks = np.arange(world)
    if isinstance(placement, list):
        return np.asarray(placement, dtype=np.int64)
    if placement == "scattered":  # Slurm's cyclic distribution over the job's nodes
        nodes = -(-world // per_node)
        return ranks % nodes * per_node + ranks // nodes
    return ranks
