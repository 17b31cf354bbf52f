"""The names people give a fabric's nodes ("leaf1", "rail2", "spine0", "NIC 24"), from the resolved
scenario's topology.

The run file numbers nodes (endpoints first, then switches) but does not name them; the topology
builders do, by the rules written at the top of models/fabric/leaf_spine.hpp, rail_optimized.hpp
and fat_tree.hpp, and an explicit topology by its list of switches. A finding that says "leaf1 port
8" is one an engineer can walk to; "node 49 port 8" is not.
"""


class FabricNames:
    def __init__(self, scenario):
        topology = (scenario.get("network") or {}).get("topology") or {}
        kind = topology.get("kind", "fat_tree")
        self.endpoints, self._switches = _switch_names(kind, topology.get(kind) or {})

    def node(self, node):
        """`leaf1`, `spine0`, or `NIC 24` for an endpoint."""
        return f"NIC {int(node)}" if int(node) < self.endpoints else self.scenario_name(node)

    def scenario_name(self, node):
        """The name a scenario gives the node (a fault's or link event's `a` and `b`): the
        switch's, or `host24` for an endpoint."""
        node = int(node)
        if node < self.endpoints:
            return f"host{node}"
        index = node - self.endpoints
        return self._switches[index] if index < len(self._switches) else f"node {node}"

    def port(self, node, port):
        """`leaf1 port 8`."""
        return f"{self.node(node)} port {int(port)}"

    def port_to(self, node, port, peer):
        """`leaf1 port 8 (to NIC 24)`: a port with where its cable leads."""
        return f"{self.port(node, port)} (to {self.node(peer)})"


def _switch_names(kind, spec):
    """(endpoint count, switch names in node order) of a builder's topology."""
    if kind == "leaf_spine":
        leaves, spines = int(spec.get("leaves", 2)), int(spec.get("spines", 2))
        hosts = leaves * int(spec.get("hosts_per_leaf", 4))
        return hosts, [f"leaf{i}" for i in range(leaves)] + [f"spine{i}" for i in range(spines)]
    if kind == "rail_optimized":
        servers, rails = int(spec.get("servers", 2)), int(spec.get("nics_per_server", 8))
        per_group = int(spec.get("servers_per_rail_group", 0)) or servers
        rail_switches = -(-servers // per_group) * rails
        return servers * rails, ([f"rail{i}" for i in range(rail_switches)]
                                 + [f"spine{i}" for i in range(int(spec.get("spines", 0)))])
    if kind == "explicit":
        return int(spec.get("hosts", 2)), [s["name"] for s in spec.get("switches") or []]
    k = int(spec.get("k", 8))  # fat tree: k pods of k/2 ToRs and k/2 aggs, (k/2)^2 cores
    half = k // 2
    return k**3 // 4, ([f"tor{i}" for i in range(k * half)] + [f"agg{i}" for i in range(k * half)]
                       + [f"core{i}" for i in range(half * half)])
