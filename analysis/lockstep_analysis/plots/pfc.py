"""PFC pauses over the fabric's ports and over time: how a pause storm spreads hop by hop.

A port is paused when its peer sends it pause frames; `paused_ps` counts the time. Each row of the
figure is a port that was paused at some point, ordered by when it first was, so a storm reads from
the top: the stuck NIC's leaf port first, then the spine's port towards that leaf, then the other
leaves' uplinks, then the hosts under them.
"""

import numpy as np

from lockstep_analysis.plots.figure import new_figure, styled
from lockstep_analysis.plots.incidents import mark_incidents
from lockstep_analysis.plots.inputs import port_labels, require_table, time_window, title_of
from lockstep_analysis.plots.scales import time_unit
from lockstep_analysis.port_timeseries import sample_period_ps
from lockstep_analysis.run_file import load_table, meta, scenario

SAMPLED = ("port counters sampled over time (a flow- or packet-level run with "
           "network.sample_period)")
MAX_PORTS = 40


def rdma_class(path):
    """The traffic class RDMA data used in the run (network.transport.traffic_class)."""
    return int(scenario(path)["network"]["transport"]["traffic_class"])


def paused_share(path, traffic_class):
    """Per sample period (rows: its end, `time_ps`) and paused port (columns: (node, port)), the
    share of the period the port could not send `traffic_class`, from 0 to 1.
    """
    samples = require_table(path, "port_samples", "pfc", SAMPLED)
    samples = samples[samples["traffic_class"] == traffic_class]
    totals = load_table(path, "port_totals")
    paused_ports = totals[(totals["traffic_class"] == traffic_class) & (totals["paused_ps"] > 0)]
    period = sample_period_ps(path)
    times = np.arange(1, meta(path)["end_ps"] // period + 1, dtype=np.int64) * period
    cumulative = (samples.pivot(index="time_ps", columns=["node", "port"], values="paused_ps")
                  .reindex(index=times,
                           columns=list(zip(paused_ports["node"], paused_ports["port"])))
                  .ffill().fillna(0))
    per_period = cumulative.diff().fillna(cumulative.iloc[:1])
    return per_period / period


@styled
def pfc(path, max_ports=MAX_PORTS, traffic_class=None, window=None):
    """Ports down (only those paused, at most `max_ports`: the longest paused), time across, colour
    = share of each sample period the port was paused. Faults and defences are marked. Ports are
    labelled node:port and by the cable's ends ('49:8 leaf1→spine0'). `window`: a time range such
    as ("19ms", "25ms") to zoom into (default: the whole run). Returns the Figure."""
    traffic_class = rdma_class(path) if traffic_class is None else traffic_class
    share = paused_share(path, traffic_class)
    period = sample_period_ps(path)
    window = time_window(path, window)
    if window is not None:
        share = share[(share.index > window[0]) & (share.index - period < window[1])]
    share = share.loc[:, share.sum() > 0]
    if share.shape[1] > max_ports:
        share = share[share.sum().nlargest(max_ports).index]
    order = sorted(share.columns, key=lambda port: _first_paused(share[port]) + (port,))
    share = share[order]

    figure, ax = new_figure(height=max(6.0, min(14.0, 1.5 + 0.2 * len(order))))
    title = f"PFC pauses per port over time (class {traffic_class})"
    ax.set_title(title_of([path], title))
    if not order:
        nothing = "no port was paused" + ("" if window is None else " in this time window")
        ax.text(0.5, 0.5, nothing, transform=ax.transAxes, ha="center", fontsize=14)
        return figure
    unit, ps_per_unit = time_unit(int(share.index[-1]))
    # Each sample covers the period that ends at its time.
    image = ax.imshow(100 * share.to_numpy().T, aspect="auto", interpolation="nearest",
                      cmap="Reds", vmin=0, vmax=100,
                      extent=((share.index[0] - period) / ps_per_unit,
                              share.index[-1] / ps_per_unit, len(order) - 0.5, -0.5))
    figure.colorbar(image, ax=ax, label="paused (% of each sample period)")
    labels = port_labels(path)
    ax.set_yticks(range(len(order)), [labels[port] for port in order],
                  fontsize=8 if len(order) > 25 else 10)
    ax.grid(False)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("paused port (node:port cable), in order of first pause")
    mark_incidents(ax, path, ps_per_unit)
    return figure


def _first_paused(column):
    """(period, -share) of a port's first pause: within one period, the port paused for more of it
    was paused earlier, which orders a storm that spreads faster than the sample period."""
    paused = column.to_numpy().nonzero()[0]
    return (paused[0], -column.iloc[paused[0]]) if len(paused) else (len(column), 0.0)
