// The steady state of N DCQCN flows sharing one bottleneck, from the fluid model of Zhu, Ghobadi,
// Misra and Padhye, "ECN or Delay: Lessons Learnt from Analysis of DCQCN and TIMELY", CoNEXT'16,
// section 3 (reference.md section 5). At the fixed point every flow sends C/N, and the RED marking
// probability that holds them there is, to leading order in p,
//   p* = [ R_AI / (tau' R*^2) x (1/B + 1/(T R*))^2 ]^(1/3),   R* = C/N,
// which the switch's RED curve turns into a queue q* = Kmin + (p*/Pmax)(Kmax - Kmin).
//
// Units: the model marks packets, so p is a per-packet probability and every count is in packets:
// R* and R_AI in packets/s (bits/s over 8 x packet size), B in packets (bytes over packet size),
// T R* in packets per rate-timer period, tau' and T in seconds. The bracket is then a count per
// packet cubed, and p* a probability per packet; that is why the answer depends on the packet
// size (the size the switch sees, headers included), and why counting bytes or bits instead would
// change p* by that factor.
//
// Left out, as in the closed form: hyper increase, the minimum interval between cuts, min_rate,
// the factors (1-p)^(F B) and (1-p)^(F T R*) that hold additive increase back until fast recovery
// ends, and alpha = 1 - (1-p)^(tau' R*) taken as tau' R* p. So the values are the paper's small-p
// estimate, to be compared with simulation as an order of magnitude and a trend (p* grows like
// N^(4/3) while the timer term dominates, like N^(2/3) when the byte counter does), not to the
// byte. A byte counter switched off (B = 0) contributes nothing.
#pragma once

#include "models/cc/dcqcn_params.hpp"
#include "sim/core/bit_rate.hpp"
#include "sim/core/bytes.hpp"

namespace lockstep {

// p* for `flows` >= 1 flows of `packet_size` packets on a bottleneck of `capacity`. Uses
// additive_increase, alpha_update_period, rate_increase_period and rate_increase_bytes.
[[nodiscard]] double dcqcn_equilibrium_marking_probability(int flows, BitRate capacity,
                                                           const DcqcnParams& params,
                                                           Bytes packet_size);

// q*, rounded to the nearest byte. RED marks every packet above Kmax, so the queue cannot settle
// above it: when p* >= Pmax the answer is Kmax.
[[nodiscard]] Bytes dcqcn_equilibrium_queue(int flows, BitRate capacity, const DcqcnParams& params,
                                            Bytes packet_size, Bytes kmin, Bytes kmax, double pmax);

}  // namespace lockstep
