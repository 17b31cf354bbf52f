// Traffic for fabric studies: a list of flows, each a message from one endpoint to another that
// starts at a given time or when another flow of the list completes. Chains of such dependencies
// express patterns like a ring all-reduce before collectives exist, and pure network what-ifs
// afterwards. This file holds the flow description and its checks; traffic_generators.hpp builds
// common lists, traffic_pairs_file.hpp reads them from files, and traffic_driver.hpp plays them on
// a Network. Left out: compute between transfers, flows that wait on several others (a join), and
// repeated or open-ended (Poisson) arrivals. Units: Bytes for sizes, picosecond Duration for times;
// endpoints are the Network's endpoint ids.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep {

// One flow: `size` bytes sent as one message from `source` to `destination` over their queue pair
// `queue_pair` (messages on one queue pair are delivered in order, one after another).
//
// When it starts:
// - without `after`, `start` after the traffic starts (the call to TrafficDriver::start, which is
//   time zero when the traffic is started with the run, so that `start` then reads as an absolute
//   time; starting the driver later shifts the whole pattern, e.g. past a warm-up);
// - with `after = j`, `start` after flow j of the same list is fully acknowledged. A delay of zero
//   starts it at the very picosecond its predecessor completes, as a ring step does; a positive
//   delay stands for work between the two (a reduction kernel, say).
// So `start` is always an offset from the flow's trigger, never negative. `after` may name any
// other flow of the list, earlier or later, as long as the dependencies form no cycle.
struct FlowSpec {
  std::int32_t source = 0;
  std::int32_t destination = 0;
  Bytes size;
  Duration start;
  std::optional<std::int64_t> after;
  std::uint32_t queue_pair = 0;
};

// Every problem of a flow list for a network of `endpoint_count` endpoints, one sentence each,
// keyed by the flow's position ("flows[3].destination: ..."), in flow order with cycles last; empty
// when the list can be played. Checked: endpoints exist, a flow does not send to itself, its size
// is positive, its start is not negative, `after` names another flow of the list, and no chain of
// `after` loops back on itself (those flows would never start).
[[nodiscard]] std::vector<std::string> flow_list_problems(const std::vector<FlowSpec>& flows,
                                                          std::int32_t endpoint_count);

}  // namespace lockstep
