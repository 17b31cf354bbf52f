"""Each completed flow with the path the network gave it.

The traffic's `flows` table says when a flow ran; the network's `messages` table says which way it
went. They join on `message` (one message per flow). The join also brings the network's queue-pair
id, which `flow_samples` uses and which is not `flows.flow` (analysis/hdf5_schema.md).
"""

from lockstep_analysis.run_file import load_table


def flow_paths(path):
    """The `flows` table plus, per flow, `network_flow` (the queue-pair id of `messages.flow` and
    `flow_samples.flow`), `hops` (links crossed) and `path` (node ids joined by '>').

    One row per completed flow, in the order of `flows` (completion order).
    """
    flows = load_table(path, "flows")
    messages = load_table(path, "messages")[["message", "flow", "hops", "path"]]
    messages = messages.rename(columns={"flow": "network_flow"})
    return flows.merge(messages, on="message", how="left", validate="one_to_one")
