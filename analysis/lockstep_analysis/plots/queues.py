"""Queue depth and link utilization over time for a few ports: where the fabric backed up, and
whether the link behind the queue was busy (congestion) or idle (paused: a queue that does not
drain on a link that carries nothing is PFC's signature, not a hot spot's)."""

from lockstep_analysis.plots.figure import new_figure, styled
from lockstep_analysis.plots.incidents import mark_incidents
from lockstep_analysis.plots.inputs import (PlotInputError, port_labels, require_table,
                                            time_window, title_of)
from lockstep_analysis.plots.pfc import SAMPLED, rdma_class
from lockstep_analysis.plots.scales import byte_unit, time_unit
from lockstep_analysis.port_timeseries import port_timeseries
from lockstep_analysis.run_file import load_table

BUSIEST = 4


def busiest_ports(path, traffic_class, count=BUSIEST):
    """The `count` ports (node, port) whose queue of `traffic_class` got deepest, or at flow level
    (no queues) that sent most."""
    totals = load_table(path, "port_totals")
    totals = totals[totals["traffic_class"] == traffic_class]
    ranked = totals.sort_values(["max_queue_bytes", "bytes_sent", "node", "port"],
                                ascending=[False, False, True, True], kind="stable")
    return list(zip(ranked["node"].head(count), ranked["port"].head(count)))


@styled
def queues(path, ports=None, traffic_class=None, window=None):
    """Two panels over time: queue depth at each port (top) and its link's utilization, the
    share of the cable's rate sent in each sample period (bottom). `ports`: [(node, port), ...]
    (default: the 4 deepest queues); `window`: a time range such as ("19ms", "25ms"). Faults and
    defences are marked. Returns the Figure."""
    require_table(path, "port_samples", "queues", SAMPLED)
    traffic_class = rdma_class(path) if traffic_class is None else traffic_class
    ports = busiest_ports(path, traffic_class) if ports is None else list(ports)
    labels = port_labels(path)
    unknown = [f"{node}:{port}" for node, port in ports if (node, port) not in labels]
    if unknown:
        raise PlotInputError(f"queues: the network has no port {', '.join(unknown)} (node:port, "
                             "as in the 'ports' table)")
    rates = load_table(path, "ports").set_index(["node", "port"])["rate_bps"]
    series = [port_timeseries(path, node, port, traffic_class) for node, port in ports]
    window = time_window(path, window)
    if window is not None:
        series = [s[(s["time_ps"] > window[0]) & (s["time_ps"] <= window[1])] for s in series]

    if all(s.empty for s in series):
        raise PlotInputError("queues: no sample falls in the time window")
    unit, ps_per_unit = time_unit(max(int(s["time_ps"].max()) for s in series if not s.empty))
    size_unit, bytes_per_unit = byte_unit(max(int(s["queue_bytes"].max()) for s in series
                                              if not s.empty))
    figure, (depth, utilization) = new_figure(height=7.0, rows=2, sharex=True)
    for (node, port), samples in zip(ports, series):
        time = samples["time_ps"] / ps_per_unit
        depth.plot(time, samples["queue_bytes"] / bytes_per_unit, label=labels[(node, port)],
                   gid=f"queue-{node}-{port}")
        # The rate is over the period that ends at each sample: a step drawn back to its start.
        utilization.step(time, 100 * samples["sent_bps"] / rates[(node, port)], where="pre",
                         gid=f"utilization-{node}-{port}")
    depth.set_ylabel(f"queue depth ({size_unit})")
    depth.legend(loc="upper right", fontsize=8, title="port (node:port cable)")
    utilization.set_ylabel("link utilization (% of rate)")
    utilization.set_ylim(0, 105)
    utilization.set_xlabel(f"time ({unit})")
    if window is not None:
        utilization.set_xlim(window[0] / ps_per_unit, window[1] / ps_per_unit)
    mark_incidents(depth, path, ps_per_unit)
    mark_incidents(utilization, path, ps_per_unit, labelled=False)
    depth.set_title(title_of([path], f"queue depth and utilization (class {traffic_class})"))
    return figure
