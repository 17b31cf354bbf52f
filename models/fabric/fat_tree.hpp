// The three-tier k-ary fat tree of Al-Fares, Loukissas and Vahdat ("A Scalable, Commodity Data
// Center Network Architecture", SIGCOMM 2008, section 3), without oversubscription: k pods, each of
// k/2 ToR (edge) and k/2 aggregation switches, (k/2)^2 core switches, k/2 hosts per ToR, so k^3/4
// hosts. Every cable has the same rate and delay, as in the shared benchmarks; it leaves out
// oversubscribed and multi-plane variants. Units as topology.hpp.
//
// Numbering, exactly as benchmarks.md so that scenarios match the peer simulators' runs (h = k/2):
//   host x (endpoint x) is on ToR floor(x / h); ToR t is in pod floor(t / h);
//   pod p has aggs p*h .. p*h + h-1, each linked to every ToR of its pod;
//   agg a is linked to cores (a mod h) + h*l for l = 0 .. h-1.
//   Switch ids: ToR t is node H + t, agg a is H + k*h + a, core c is H + 2*k*h + c (H = k^3/4);
//   names "tor<t>", "agg<a>", "core<c>".
// Cable and port order: host cables (host order), then ToR-agg cables (ToR t, then its pod's aggs
// in order), then agg-core cables (agg a, then l = 0 .. h-1). Hence:
//   ToR t:  ports 0..h-1 its hosts in order, ports h..k-1 its pod's aggs in order;
//   agg a:  ports 0..h-1 its pod's ToRs in order, port h+l core (a mod h) + h*l;
//   core c: port p the agg of pod p, i.e. agg p*h + (c mod h).
#pragma once

#include <cstdint>

#include "models/fabric/topology.hpp"
#include "sim/core/bytes.hpp"

namespace lockstep {

// `k` even and >= 2. Throws std::invalid_argument for a bad k, link or buffer.
[[nodiscard]] Topology build_fat_tree(std::int32_t k, LinkSpec link, Bytes switch_buffer);

}  // namespace lockstep
