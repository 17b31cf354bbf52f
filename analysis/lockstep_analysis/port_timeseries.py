"""One port's counters over time, at every sample of the run, from `port_samples`.

The file keeps a sample row only for ports whose counters moved or whose queue was not empty
(analysis/hdf5_schema.md), which keeps it small but leaves gaps that make naive rates wrong: a rate
taken between two rows that are three periods apart is a third of the truth if the port was idle for
two of them. This puts the gaps back (an empty queue, the counters of the row before) so that every
row is one sample period and differences between rows are rates.
"""

import numpy as np
import pandas as pd

from lockstep_analysis.run_file import load_table, meta, scenario
from lockstep_analysis.units import duration_ps, seconds, with_seconds

_COUNTERS = ["bytes_sent", "ecn_marked", "pauses_sent", "pauses_received", "paused_ps",
             "dropped_packets"]


def sample_period_ps(path):
    """`network.sample_period` of the run, in picoseconds; ValueError if the run did not sample."""
    period = (scenario(path).get("network") or {}).get("sample_period")
    if period is None:
        raise ValueError(f"{path}: the run did not sample counters (no network.sample_period)")
    return duration_ps(period)


def port_timeseries(path, node, port, traffic_class=3):
    """The counters of one port and traffic class at every sample time, as a DataFrame.

    One row per multiple of `network.sample_period` up to the end of the run (the network samples at
    one period, two periods, ...), gaps filled: `queue_bytes` 0 and the cumulative counters of the
    previous sample (0 before the first). Columns: `time_ps`, `queue_bytes`, the cumulative
    `bytes_sent`, `ecn_marked`, `pauses_sent`, `pauses_received`, `paused_ps`, `dropped_packets` as in
    the file; and for the period that ends at each row, `sent_bps` (bits sent per second) and
    `paused_fraction` (share of the period the port was paused, 0 to 1); plus `time_s` and
    `paused_s`. A port that never moved gives zeros. `traffic_class` defaults to 3, the class of RDMA
    data unless the scenario changed `network.transport.traffic_class`. Raises ValueError if the run
    did not sample, or if the network has no such port (the `ports` table lists them).
    """
    period = sample_period_ps(path)
    ports = load_table(path, "ports")
    if not ((ports["node"] == node) & (ports["port"] == port)).any():
        raise ValueError(f"{path}: the network has no port {port} on node {node}")
    end = meta(path)["end_ps"]
    times = np.arange(1, end // period + 1, dtype=np.int64) * period
    samples = load_table(path, "port_samples")
    mine = samples[(samples["node"] == node) & (samples["port"] == port)
                   & (samples["traffic_class"] == traffic_class)]
    series = pd.DataFrame({"time_ps": times}).merge(
        mine[["time_ps", "queue_bytes", *_COUNTERS]], on="time_ps", how="left",
        validate="one_to_one")
    series["queue_bytes"] = series["queue_bytes"].fillna(0)
    series[_COUNTERS] = series[_COUNTERS].ffill().fillna(0)
    series = series.astype({column: np.int64 for column in ["queue_bytes", *_COUNTERS]})
    # Differences over each period; the counters are 0 at time 0, before the first sample.
    interval_ps = series["time_ps"].diff().fillna(series["time_ps"])
    sent = series["bytes_sent"].diff().fillna(series["bytes_sent"])
    paused = series["paused_ps"].diff().fillna(series["paused_ps"])
    series["sent_bps"] = sent * 8 / seconds(interval_ps)
    series["paused_fraction"] = paused / interval_ps
    return with_seconds(series)
