// What a network costs before its first event, from its topology alone, so that a scenario too
// big for the machine is refused at validation and a heavy one announced before a long set-up.
// Memory per port (each end of a cable), as measured on fat trees of k = 32, 48 and 64 (8,192 to
// 65,536 hosts; peak RSS over the program's own 11 MB, release build): 1.27 KB at packet level
// (queues, buffers, counters), 0.47 KB at flow level. Set-up time is the ECMP routing's, which
// visits every switch for every endpoint: about 9 ns a pair, plus 1 us a port (k = 64: 2.3 s;
// k = 128, 524,288 hosts: 105 s). The job's and the traffic's own state come on top
// (traffic_problems counts the flows').
#pragma once

#include "models/fabric/topology.hpp"
#include "models/transport/network_config.hpp"
#include "sim/core/bytes.hpp"

namespace lockstep {

struct NetworkFootprint {
  std::int64_t ports = 0;
  Bytes memory;
  double setup_seconds = 0;  // wall time on the machines here
};

[[nodiscard]] NetworkFootprint network_footprint(const Topology& topology, NetworkModel model);

}  // namespace lockstep
