#include "sim/scenario/network_schema.hpp"

#include <stdexcept>

#include "models/transport/link_events.hpp"

namespace lockstep {
namespace {

Schema<FatTreeConfig> fat_tree_schema() {
  Schema<FatTreeConfig> s;
  s.value("k", &FatTreeConfig::k, "8",
          "switch radix: k^3/4 hosts, k^2/4 core switches (three tiers, no oversubscription)",
          at_least<std::int64_t>(2));
  return s;
}

Schema<LeafSpineConfig> leaf_spine_schema() {
  Schema<LeafSpineConfig> s;
  s.value("leaves", &LeafSpineConfig::leaves, "2", "leaf switches", at_least<std::int64_t>(1))
      .value("spines", &LeafSpineConfig::spines, "2", "spine switches", at_least<std::int64_t>(1))
      .value("hosts_per_leaf", &LeafSpineConfig::hosts_per_leaf, "4", "endpoints on each leaf",
             at_least<std::int64_t>(1))
      .value("uplinks_per_leaf", &LeafSpineConfig::uplinks_per_leaf, "2",
             "leaf-to-spine links per leaf, spread round robin (oversubscription is a choice)",
             at_least<std::int64_t>(1))
      .value("uplink_rate", &LeafSpineConfig::uplink_rate, std::nullopt,
             "rate of leaf-spine links (default: link_rate)");
  return s;
}

Schema<RailOptimizedConfig> rail_optimized_schema() {
  Schema<RailOptimizedConfig> s;
  s.value("servers", &RailOptimizedConfig::servers, "2", "servers (nodes)",
          at_least<std::int64_t>(1))
      .value("nics_per_server", &RailOptimizedConfig::nics_per_server, "8",
             "NICs per server: NIC i of every server is on rail switch i",
             at_least<std::int64_t>(1))
      .value("servers_per_rail_group", &RailOptimizedConfig::servers_per_rail_group, "0",
             "servers per rail group (0: one group of all servers)", at_least<std::int64_t>(0))
      .value("spines", &RailOptimizedConfig::spines, "0", "spines joining the rail switches",
             at_least<std::int64_t>(0))
      .value("uplinks_per_rail_switch", &RailOptimizedConfig::uplinks_per_rail_switch, "0",
             "links from each rail switch to the spines", at_least<std::int64_t>(0))
      .value("uplink_rate", &RailOptimizedConfig::uplink_rate, std::nullopt,
             "rate of rail-spine links (default: link_rate)");
  return s;
}

Schema<ExplicitSwitchConfig> explicit_switch_schema() {
  Schema<ExplicitSwitchConfig> s;
  s.value("name", &ExplicitSwitchConfig::name, std::nullopt, "switch name, unique")
      .value("buffer", &ExplicitSwitchConfig::buffer, std::nullopt,
             "shared buffer (default: switch_buffer)");
  return s;
}

Schema<ExplicitLinkConfig> explicit_link_schema() {
  Schema<ExplicitLinkConfig> s;
  s.value("a", &ExplicitLinkConfig::a, std::nullopt, "one end: a switch name or host<i>")
      .value("b", &ExplicitLinkConfig::b, std::nullopt, "the other end")
      .value("rate", &ExplicitLinkConfig::rate, std::nullopt, "link rate (default: link_rate)")
      .value("delay", &ExplicitLinkConfig::delay, std::nullopt,
             "propagation delay (default: link_delay)");
  return s;
}

Schema<ExplicitTopologyConfig> explicit_schema() {
  Schema<ExplicitTopologyConfig> s;
  s.value("hosts", &ExplicitTopologyConfig::hosts, "2", "endpoints, named host0, host1, ...",
          at_least<std::int64_t>(1))
      .list("switches", &ExplicitTopologyConfig::switches, explicit_switch_schema(), "switches")
      .list("links", &ExplicitTopologyConfig::links, explicit_link_schema(),
            "full-duplex links; every host has exactly one");
  return s;
}

Schema<TopologyConfig> topology_schema() {
  Schema<TopologyConfig> s;
  s.choice("kind", &TopologyConfig::kind,
           {{"fat_tree", TopologyKind::kFatTree},
            {"leaf_spine", TopologyKind::kLeafSpine},
            {"rail_optimized", TopologyKind::kRailOptimized},
            {"explicit", TopologyKind::kExplicit}},
           "fat_tree", "which builder; only its section below is used")
      .value("link_rate", &TopologyConfig::link_rate, "100Gbps", "rate of every link",
             above(BitRate::bps(0)))
      .value("link_delay", &TopologyConfig::link_delay, "1us",
             "one-way propagation of every link (5ns per metre of cable)")
      .value("switch_buffer", &TopologyConfig::switch_buffer, "32MB",
             "shared packet buffer of every switch", above(Bytes()))
      .section("fat_tree", &TopologyConfig::fat_tree, fat_tree_schema(),
               "three-tier k-ary fat tree")
      .section("leaf_spine", &TopologyConfig::leaf_spine, leaf_spine_schema(),
               "two-tier leaf-spine")
      .section("rail_optimized", &TopologyConfig::rail_optimized, rail_optimized_schema(),
               "rail-optimized: NIC i of every server on rail switch i")
      .section("explicit", &TopologyConfig::explicit_topology, explicit_schema(),
               "switches and links listed one by one");
  return s;
}

Schema<PfcConfig> pfc_schema() {
  Schema<PfcConfig> s;
  s.index_set("lossless_classes", &PfcConfig::lossless, "[3]",
              "traffic classes PFC protects; the others drop when the buffer is full ([] turns PFC "
              "off)")
      .value("alpha", &PfcConfig::alpha, "12.5%",
             "dynamic threshold: a class may use this share of the free shared buffer before XOFF",
             above(0.0))
      .value("headroom", &PfcConfig::headroom, std::nullopt,
             "buffer kept per ingress port and class for data in flight after XOFF (default: "
             "derived from rate, delay and MTU)")
      .value("xon_gap", &PfcConfig::xon_gap, "2124B",
             "XON once the class is this far below its threshold (two 1062-byte frames)");
  return s;
}

Schema<EcnConfig> ecn_schema() {
  Schema<EcnConfig> s;
  s.value("enabled", &EcnConfig::enabled, "true", "RED marking of ECN-capable packets at egress")
      .value("kmin", &EcnConfig::kmin, "400KB", "queue below which nothing is marked")
      .value("kmax", &EcnConfig::kmax, "1600KB", "queue above which everything is marked")
      .value("pmax", &EcnConfig::pmax, "20%", "marking probability at kmax", at_least(0.0))
      .choice("mark_at", &EcnConfig::mark_at,
              {{"dequeue", EcnMarkPoint::kDequeue}, {"enqueue", EcnMarkPoint::kEnqueue}}, "dequeue",
              "when a packet is marked: as it leaves, by the queue behind it (HPCC's ns-3, htsim), "
              "or as it joins, by the queue ahead of it")
      .check([](const EcnConfig& ecn, const Schema<EcnConfig>::Checker& report) {
        if (ecn.kmax <= ecn.kmin) report.error("kmax", "must be larger than kmin");
        if (ecn.pmax > 1.0) report.error("pmax", "a probability cannot exceed 100%");
      });
  return s;
}

Schema<SwitchConfig> switch_schema() {
  Schema<SwitchConfig> s;
  s.section("pfc", &SwitchConfig::pfc, pfc_schema(), "priority flow control (IEEE 802.1Qbb)")
      .section("ecn", &SwitchConfig::ecn, ecn_schema(), "ECN marking (DCQCN's congestion point)")
      .value("lossy_alpha", &SwitchConfig::lossy_alpha, "12.5%",
             "dynamic threshold of lossy classes: an egress queue may hold this share of the free "
             "shared buffer, and drops beyond it",
             above(0.0));
  return s;
}

Schema<TransportScenarioConfig> transport_schema() {
  using T = TransportScenarioConfig;
  Schema<T> s;
  s.value("payload", &T::payload_per_packet, "1000B", "data bytes per packet (the MTU's payload)",
          [](const Bytes& b) -> std::optional<std::string> {
            // A packet counts its bytes in 32 bits; Ethernet's jumbo frames carry 9 KB.
            if (b <= Bytes()) return "must be more than 0B";
            if (b > Bytes(64 * 1024)) return "must be at most 64KiB (a jumbo frame carries 9KB)";
            return std::nullopt;
          })
      .value("header", &T::header, "62B", "bytes of headers per packet (RoCEv2: 62)")
      .value("traffic_class", &T::traffic_class, "3", "class of RDMA data packets (0-7)",
             at_least<std::int64_t>(0))
      .value("qp_timeout", &T::qp_timeout, "20",
             "queue pairs' local ACK timeout as ibverbs and NCCL_IB_TIMEOUT give it: go-back-N "
             "resends when nothing was acknowledged for 4.096us x 2^qp_timeout (20: 4.3s; 0: "
             "never)",
             at_least<std::int64_t>(0))
      .value("retry_count", &T::retry_count, "7",
             "timeouts in a row a queue pair resends on before it fails and its user gets an "
             "error (NCCL_IB_RETRY_CNT)",
             at_least<std::int64_t>(0))
      .choice("congestion_control", &T::congestion_control,
              {{"dcqcn", CongestionControl::kDcqcn}, {"none", CongestionControl::kNone}}, "dcqcn",
              "sender rate control")
      .choice("dcqcn_profile", &T::dcqcn_profile,
              {{"paper", DcqcnProfile::kPaper},
               {"nic_firmware", DcqcnProfile::kNicFirmware},
               {"hpcc_reference", DcqcnProfile::kHpccReference}},
              "hpcc_reference",
              "DCQCN parameters: SIGCOMM'15 or ConnectX defaults (CNP frames), or HPCC's ns-3 (a "
              "CNP for every mark, on its ACK or NACK)")
      .check([](const T& t, const Schema<T>::Checker& report) {
        if (t.traffic_class > 7) report.error("traffic_class", "must lie between 0 and 7");
        // ibverbs' fields are 5 and 3 bits wide.
        if (t.qp_timeout > 31) report.error("qp_timeout", "must lie between 0 and 31");
        if (t.retry_count > 7) report.error("retry_count", "must lie between 0 and 7");
      });
  return s;
}

Schema<LinkEventConfig> link_event_schema() {
  Schema<LinkEventConfig> s;
  s.value("at", &LinkEventConfig::at, std::nullopt, "when, from the start of the run")
      .value("a", &LinkEventConfig::a, std::nullopt, "one end: a switch name or host<i>")
      .value("b", &LinkEventConfig::b, std::nullopt, "the other end (the first cable joining them)")
      .value("rate", &LinkEventConfig::rate, std::nullopt,
             "the cable's new rate both ways (0bps stops it unnoticed by routing)")
      .value("down", &LinkEventConfig::down, "false",
             "the cable fails: both ways stop, what is on it is lost (packet level) and flows move "
             "to other shortest paths")
      .value("up", &LinkEventConfig::up, "false",
             "a failed cable works again at its rate; flows that had no path take one");
  return s;
}

}  // namespace

Schema<NetworkConfig> network_schema() {
  Schema<NetworkConfig> s;
  s.choice("model", &NetworkConfig::model,
           {{"packet", NetworkModel::kPacket},
            {"flow", NetworkModel::kFlow},
            {"analytic", NetworkModel::kAnalytic}},
           "packet",
           "packet: every packet, switch queue, PFC and DCQCN; flow: max-min fair fluid flows on "
           "the same paths, for scale (switches and congestion_control are then unused); "
           "analytic: a training job's collectives priced by formula, without contention")
      .section("topology", &NetworkConfig::topology, topology_schema(), "the wiring")
      .section("switches", &NetworkConfig::switches, switch_schema(), "every switch's behaviour")
      .section("transport", &NetworkConfig::transport, transport_schema(), "the endpoints' RDMA")
      .value("sample_period", &NetworkConfig::sample_period, std::nullopt,
             "record port and flow counters this often, at least 100ns: finer than a packet's "
             "time on the wire shows nothing more, and every sample writes a row per busy port "
             "(default: totals only)",
             at_least(Duration::ns(100)))
      .list("link_events", &NetworkConfig::link_events, link_event_schema(),
            "cable rate changes, failures and repairs during the run");
  return s;
}

}  // namespace lockstep
