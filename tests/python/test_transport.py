"""The packet fabric's RDMA transport as a user reads it from the run file: resends only when
something was lost or a timeout fired, the retransmission and pause-frame counters, and queue pairs
that fail when their path dies, for traffic and for a training job.

Needs LOCKSTEP_BIN, LOCKSTEP_SOURCE_DIR and analysis/ on PYTHONPATH (tests/CMakeLists.txt).
"""

import os
import subprocess
import tempfile
import unittest
from pathlib import Path

import lockstep_analysis as la

BIN = os.environ["LOCKSTEP_BIN"]
SOURCE = Path(os.environ["LOCKSTEP_SOURCE_DIR"])
# 127 senders of 2,000,000 B to host 0 on a k=8 fat tree at 100 Gb/s (benchmarks.md); 0.4 s.
INCAST_128 = SOURCE / "scenarios" / "bench" / "incast_128_1000B.yaml"
VICTIM = SOURCE / "scenarios" / "fabric" / "victim.yaml"
STORM = SOURCE / "scenarios" / "war-stories" / "6_pfc_storm.yaml"
SHARES = SOURCE / "scenarios" / "fabric" / "incast_shares.yaml"
PAYLOAD = 1000
FLOW_BYTES = 2_000_000
# Incast-128's FCT by sender position in HPCC's ns-3 (DCQCN, same topology and profile), us:
# (min, median, max) of hosts 1-3 (host 0's rack), 4-15 (its pod) and 16-127 (other pods).
NS3_POSITIONS = {"rack": (14805, 15084, 15330), "pod": (16007, 17182, 17596),
                 "far": (9356, 18124, 21090)}


# 4.096 us x 2^timeout, as ibverbs sets a queue pair's local ACK timeout.
def qp_timeout_ps(exponent):
    return 4_096_000 * 2 ** exponent


def run(out, scenario, *overrides):
    args = [BIN, "run", str(scenario), "-o", str(out)]
    for override in overrides:
        args += ["--set", override]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise AssertionError(result.stderr)
    return result


class Incast128(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory()
        cls.default = Path(cls.directory.name) / "default.h5"
        run(cls.default, INCAST_128)
        # 1.05 ms: shorter than the 11 MB queue toward host 0 takes to drain.
        cls.short = Path(cls.directory.name) / "short.h5"
        run(cls.short, INCAST_128, "network.transport.qp_timeout=8")

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    def test_nothing_is_resent_when_nothing_is_lost(self):
        qps = la.load_table(self.default, "queue_pairs")
        ports = la.load_table(self.default, "port_totals")
        self.assertEqual(len(qps), 127)
        self.assertEqual(int(ports["dropped_packets"].sum()), 0)
        self.assertEqual(int(qps["resent_packets"].sum()), 0)
        self.assertEqual(int(qps["timeouts"].sum()), 0)
        self.assertEqual(int(ports["resent_packets"].sum()), 0)
        # The port toward host 0 sends what the flows need and not a packet more.
        to_host0 = ports.merge(la.load_table(self.default, "ports"), on=["node", "port"])
        to_host0 = to_host0[(to_host0["peer"] == 0) & (to_host0["traffic_class"] == 3)]
        self.assertEqual(int(to_host0["packets_sent"].sum()), 127 * FLOW_BYTES // PAYLOAD)
        self.assertEqual(len(la.load_table(self.default, "flows")), 127)

    def test_a_short_timeout_resends_behind_the_queue_and_the_counters_show_it(self):
        qps = la.load_table(self.short, "queue_pairs")
        ports = la.load_table(self.short, "port_totals")
        self.assertEqual(int(ports["dropped_packets"].sum()), 0, "resends without a loss")
        resent = int(qps["resent_packets"].sum())
        self.assertGreater(resent, 0)
        self.assertGreater(int(qps["timeouts"].sum()), 0)
        # Every flow's packets carry a full payload: 2,000,000 B is 2,000 of them.
        self.assertEqual(int(qps["resent_payload_bytes"].sum()), resent * PAYLOAD)
        # Every resend leaves its sender's NIC once; those not still queued when the last flow
        # was acknowledged (the run ends there) reached host 0 through its leaf's port, on top of
        # what the flows need.
        wiring = la.load_table(self.short, "ports")
        ports = ports.merge(wiring, on=["node", "port"])
        nics = ports[ports["node"] < 128]
        self.assertEqual(int(nics["resent_packets"].sum()), resent)
        to_host0 = ports[ports["peer"] == 0]
        arrived = int(to_host0["resent_packets"].sum())
        self.assertGreater(arrived, 0)
        self.assertLessEqual(arrived, resent)
        self.assertEqual(int(to_host0["packets_sent"].sum()), 127 * FLOW_BYTES // PAYLOAD + arrived)
        self.assertEqual(int(to_host0["resent_bytes"].sum()), arrived * (PAYLOAD + 62))
        self.assertEqual(len(la.load_table(self.short, "flows")), 127)

    def test_who_wins_the_incast_matches_ns3_by_position(self):
        """Marking at dequeue, as ns-3's switch does: each position's median FCT within 10% of
        ns-3's, in ns-3's order (rack, then pod, then the rest); marking at enqueue lets the nearby
        senders run away with the first phase (scenarios/fabric/incast_shares.yaml)."""
        def medians(path):
            flows = la.load_table(path, "flows")
            fct_us, source = flows["fct_ps"] / 1e6, flows["source"]
            return {"rack": fct_us[source <= 3].median(),
                    "pod": fct_us[(source >= 4) & (source <= 15)].median(),
                    "far": fct_us[source >= 16].median()}
        default = medians(self.default)
        for position, (_, ns3_median, _) in NS3_POSITIONS.items():
            self.assertLess(abs(default[position] / ns3_median - 1), 0.10, (position, default))
        self.assertLess(default["rack"], default["pod"])
        self.assertLess(default["pod"], default["far"])
        with tempfile.TemporaryDirectory() as directory:
            out = Path(directory) / "enqueue.h5"
            run(out, INCAST_128, "network.switches.ecn.mark_at=enqueue")
            enqueue = medians(out)
        self.assertLess(enqueue["rack"], 0.8 * NS3_POSITIONS["rack"][1])
        self.assertLess(enqueue["pod"], 0.8 * NS3_POSITIONS["pod"][1])

    def test_pause_frames_split_into_pauses_refreshes_and_resumes(self):
        ports = la.load_table(self.default, "port_totals")
        self.assertGreater(int(ports["pauses_sent"].sum()), 0)
        parts = ports["xoff_sent"] + ports["xoff_refreshed"] + ports["xon_sent"]
        self.assertTrue((ports["pauses_sent"] == parts).all())
        # Every pause the switches sent was resumed by the end.
        self.assertTrue((ports["xoff_sent"] == ports["xon_sent"]).all())


class IncastShares(unittest.TestCase):
    """scenarios/fabric/incast_shares.yaml: host 1 on the receiver's leaf, hosts 4-6 behind the
    spine; leaf 0's port to host 0 is the bottleneck, with two ingresses (host 1's, the spine's)."""

    def fcts(self, *overrides):
        with tempfile.TemporaryDirectory() as directory:
            out = Path(directory) / "shares.h5"
            run(out, SHARES, *overrides)
            flows = la.load_table(out, "flows").set_index("source")
            return flows["fct_ps"], int(la.load_table(out, "port_totals")["pauses_sent"].sum())

    def test_pfc_alone_halves_the_bottleneck_per_ingress_and_never_idles_it(self):
        """Sizes in the shares per-ingress PFC gives (host 1 a half, hosts 4-6 a sixth each): the
        remote flows end together, having had about half the bottleneck, and host 1's ends when
        the last of 120,000 packets has crossed the busy bottleneck."""
        fct, pauses = self.fcts(
            "network.transport.congestion_control=none",
            "traffic.flows=[{source: 1, destination: 0, size: 60MB}, "
            "{source: 4, destination: 0, size: 20MB}, {source: 5, destination: 0, size: 20MB}, "
            "{source: 6, destination: 0, size: 20MB}]")
        self.assertGreater(pauses, 0)
        packet_ps = (PAYLOAD + 62) * 8 * 10  # 1062 B at 100 Gb/s: 84,960 ps
        ack_ps = 64 * 8 * 10
        # Host 1's first packet reaches leaf 0 after its NIC's serialization and 1 us; from then
        # the bottleneck sends 120,000 packets back to back; the last one's acknowledgement
        # returns over two 1 us cables.
        first_at_leaf = packet_ps + 1_000_000
        last_delivered = first_at_leaf + 120_000 * packet_ps + 1_000_000
        self.assertEqual(int(fct[1]), last_delivered + 2 * (ack_ps + 1_000_000))
        remote = [int(fct[h]) for h in (4, 5, 6)]
        self.assertLess(max(remote) / min(remote) - 1, 0.001)
        # Half of the bottleneck, and a little more: until the first pause the FIFO serves the
        # spine's ingress three packets in four.
        remote_share = 3 * 20_000 * packet_ps / max(remote)
        self.assertGreater(remote_share, 0.50)
        self.assertLess(remote_share, 0.55)

    def test_dcqcn_shares_it_per_flow_without_a_pause(self):
        fct, pauses = self.fcts()
        self.assertEqual(pauses, 0)
        # A quarter each: no flow ends more than 12% after another.
        self.assertLess(fct.max() / fct.min(), 1.12)


class DeadPath(unittest.TestCase):
    def test_flows_into_a_dead_cable_fail_after_their_retries_and_the_others_complete(self):
        """Host 5's cable fails at 5 us for good: the three flows into it fail at the NIC's time."""
        with tempfile.TemporaryDirectory() as directory:
            out = Path(directory) / "dead.h5"
            result = run(out, VICTIM, "network.transport.qp_timeout=10",
                         "network.transport.retry_count=2",
                         "network.link_events=[{at: 5us, a: host5, b: leaf1, down: true}]")
            self.assertEqual(la.meta(out)["outcome"], "flows_failed")
            self.assertIn("3 flows failed", result.stderr + result.stdout)
            failed = la.load_table(out, "failed_flows")
            self.assertEqual(sorted(failed["flow"]), [0, 1, 2])
            # Acknowledged progress stops once the cable is down, about 5 us in; three timeouts
            # later (two resends, then the failure) the queue pairs give up.
            earliest = 3 * qp_timeout_ps(10)
            for failed_ps in failed["failed_ps"]:
                self.assertGreaterEqual(int(failed_ps), earliest)
                self.assertLess(int(failed_ps), earliest + 10_000_000)
            self.assertEqual(list(la.load_table(out, "flows")["flow"]), [3])
            qps = la.load_table(out, "queue_pairs").set_index("source")
            for source in (0, 1, 2):
                self.assertEqual(int(qps.loc[source, "timeouts"]), 3)
                self.assertEqual(int(qps.loc[source, "failed_messages"]), 1)
            self.assertEqual(int(qps.loc[3, "failed_ps"]), -1)

    def test_a_job_whose_nic_cable_dies_stops_on_the_nccl_error(self):
        """GPU 16's cable fails at 20 ms: its ring's queue pair fails two timeouts on, and the
        watchdog's next poll aborts the job with network_error, naming the queue pair."""
        with tempfile.TemporaryDirectory() as directory:
            out = Path(directory) / "job.h5"
            run(out, STORM, "faults=[{kind: link_down, a: host16, b: leaf1, at: 20ms}]",
                "network.transport.qp_timeout=10", "network.transport.retry_count=1",
                "defences.watchdog.poll=1ms")
            self.assertEqual(la.meta(out)["outcome"], "network_error")
            qps = la.load_table(out, "queue_pairs")
            failed = qps[qps["failed_ps"] >= 0]
            self.assertGreater(len(failed), 0)
            # Two timeouts after the last acknowledgement, which came at most a round trip before
            # the fault (or a little after it, from packets past the cable already).
            first_failure = int(failed["failed_ps"].min())
            fault_ps = 20_000_000_000
            self.assertGreaterEqual(first_failure, fault_ps + 2 * qp_timeout_ps(10) - 20_000_000)
            self.assertLess(first_failure, fault_ps + 2 * qp_timeout_ps(10) + 20_000_000)
            # Every failed queue pair touches GPU 16's NIC.
            self.assertTrue(((failed["source"] == 16) | (failed["destination"] == 16)).all())
            defences = la.load_table(out, "defences")
            watchdog = defences[defences["defence"] == "watchdog"]
            self.assertEqual(len(watchdog), 1)
            poll_ps = 1_000_000_000
            self.assertEqual(int(watchdog["at_ps"].iloc[0]),
                             -(-first_failure // poll_ps) * poll_ps)
            self.assertIn("ran out of retries", watchdog["detail"].iloc[0])
            self.assertIn("GPU 16", watchdog["detail"].iloc[0])
            # The diagnosis finds the NIC from the queue pairs and the ports that dropped, not
            # from the fault, and the fault confirms it.
            diagnosis = subprocess.run([BIN, "diagnose", str(out), "--no-write"],
                                       capture_output=True, text=True, timeout=60)
            self.assertEqual(diagnosis.returncode, 0, diagnosis.stderr)
            first = diagnosis.stdout.split("\n 2. ")[0]
            self.assertIn("1. network_error [reliability] caused by rank 8, server 2", first)
            self.assertIn("cable NIC 16 - leaf1", first)
            self.assertIn("matches injected fault: link_down on cable host16-leaf1", first)


if __name__ == "__main__":
    unittest.main()
