// What can change in a fabric during a run, the same at both network levels: a scenario's link
// events (link_events.hpp) and the faults that break links go through it.
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
};

}  // namespace lockstep
