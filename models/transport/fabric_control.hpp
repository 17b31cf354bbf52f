// What can change in a fabric during a run, the same at both network levels: a scenario's link
// events (link_events.hpp) and the faults that break links, slow a host or storm a switch go
// through it.
#pragma once

#include "models/fabric/topology.hpp"
#include "sim/core/bit_rate.hpp"

namespace lockstep {

class FabricControl {
 public:
  virtual ~FabricControl() = default;
  // Both directions of the cable run at `rate` from now on (0 holds their traffic until a rate is
  // set again, as a port paused without end). Throws std::invalid_argument for an unknown cable or
  // a negative rate.
  virtual void set_cable_rate(CableId cable, BitRate rate) = 0;
  // The cable fails: both directions stop, what is on it is lost (at packet level), and every queue
  // pair routed over it moves to another shortest path, stalling if none is left; new queue pairs
  // avoid it. Throws std::invalid_argument for an unknown cable; failing a failed cable does
  // nothing.
  virtual void fail_cable(CableId cable) = 0;
  // The cable works again at the rate it had: new queue pairs may use it, and those that stalled
  // for want of a path move onto one; the others keep theirs (resilient ECMP).
  virtual void restore_cable(CableId cable) = 0;
  // The endpoint's host path (host memory to and from its NIC) carries `rate` each way from now on:
  // a degraded PCIe link, a NIC fallen back to host memory. A path several NICs share (one socket
  // interface per node) changes for all of them; an endpoint without one gets its own. Throws
  // std::invalid_argument for an unknown endpoint or a rate that is not positive.
  virtual void set_host_path_rate(std::int32_t endpoint, BitRate rate) = 0;
  // The endpoint's NIC keeps pausing its switch (a stuck receive pipeline, reference.md section
  // 6), until stopped: at packet level real pause frames on the data class, which back up through
  // the fabric; at flow level the switch's port toward the NIC stops. Throws std::invalid_argument
  // for an unknown endpoint.
  virtual void start_pause_storm(std::int32_t endpoint) = 0;
  virtual void stop_pause_storm(std::int32_t endpoint) = 0;
};

}  // namespace lockstep
