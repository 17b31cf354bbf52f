#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "models/cc/dcqcn_fixed_point.hpp"

namespace lockstep {
namespace {

const Bytes k1000B(1000);

// Paper parameters, 2 flows on 40 Gb/s, 1000 B packets (8000 bits). In packets:
//   R* = 20 Gb/s / 8000 = 2.5e6 /s, R_AI = 40 Mb/s / 8000 = 5000 /s, B = 10 MB / 1000 = 1e4,
//   T R* = 55 us x 2.5e6 = 137.5, tau' = 55e-6 s.
//   1/B + 1/(T R*) = 1e-4 + 7.2727e-3 = 7.37273e-3, squared 5.43571e-5;
//   R_AI / (tau' R*^2) = 5000 / (55e-6 x 6.25e12) = 1.45455e-5;
//   p* = (1.45455e-5 x 5.43571e-5)^(1/3) = (7.90649e-10)^(1/3) = 9.24687e-4.
// RED Kmin 5 KB, Kmax 200 KB, Pmax 1%: q* = 5000 + (9.24687e-4 / 0.01) x 195000 = 23031 B.
TEST_CASE("DCQCN fixed point of two paper flows on 40 Gb/s matches the hand computation") {
  const DcqcnParams params = DcqcnParams::paper(BitRate::gbps(40));
  const double p = dcqcn_equilibrium_marking_probability(2, BitRate::gbps(40), params, k1000B);
  CHECK(p == doctest::Approx(9.24687e-4).epsilon(1e-5));
  CHECK(dcqcn_equilibrium_queue(2, BitRate::gbps(40), params, k1000B, Bytes(5'000), Bytes(200'000),
                                0.01) == Bytes(23'031));
}

// HPCC's profile, 2 flows on 100 Gb/s, 1000 B, no byte counter: R* = 6.25e6 /s, R_AI = 2500 /s,
// tau' = 1e-6 s, T R* = 300e-6 x 6.25e6 = 1875. R_AI / (tau' R*^2) = 6.4e-5, (1/1875)^2
// = 2.84444e-7, p* = (1.82044e-11)^(1/3) = 2.63063e-4. RED 400 KB / 1600 KB / 0.2: q* = 400000 +
// (2.63063e-4 / 0.2) x 1.2e6 = 401578 B.
TEST_CASE("DCQCN fixed point of the HPCC profile leaves the byte counter out") {
  const DcqcnParams params = DcqcnParams::hpcc_reference(BitRate::gbps(100));
  const double p = dcqcn_equilibrium_marking_probability(2, BitRate::gbps(100), params, k1000B);
  CHECK(p == doctest::Approx(2.63063e-4).epsilon(1e-5));
  CHECK(dcqcn_equilibrium_queue(2, BitRate::gbps(100), params, k1000B, Bytes(400'000),
                                Bytes(1'600'000), 0.2) == Bytes(401'578));
}

// Timer term only (B off): p*^3 = R_AI/(tau' R*^2) (1/(T R*))^2 with every rate in packets/s, so
// p* scales with the packet size s (R_AI/s over (R*/s)^4) and with N^(4/3) (R* = C/N).
TEST_CASE("the DCQCN fixed point is per packet: p* scales with packet size and N^(4/3)") {
  const DcqcnParams params = DcqcnParams::hpcc_reference(BitRate::gbps(100));
  const BitRate c = BitRate::gbps(100);
  const double base = dcqcn_equilibrium_marking_probability(2, c, params, k1000B);
  CHECK(dcqcn_equilibrium_marking_probability(2, c, params, Bytes(2000)) ==
        doctest::Approx(2.0 * base).epsilon(1e-12));
  CHECK(dcqcn_equilibrium_marking_probability(4, c, params, k1000B) ==
        doctest::Approx(std::pow(2.0, 4.0 / 3.0) * base).epsilon(1e-12));
}

// 100 paper flows on 40 Gb/s: R* = 5e4 /s, T R* = 2.75, 1/B + 1/(T R*) = 0.36374,
// R_AI/(tau' R*^2) = 0.036364, p* = (0.036364 x 0.13231)^(1/3) = 0.1688 > Pmax = 1%: above Kmax RED
// marks everything, so the queue settles at Kmax.
TEST_CASE("a DCQCN fixed point beyond Pmax puts the queue at Kmax") {
  const DcqcnParams params = DcqcnParams::paper(BitRate::gbps(40));
  const double p = dcqcn_equilibrium_marking_probability(100, BitRate::gbps(40), params, k1000B);
  CHECK(p == doctest::Approx(0.1688).epsilon(1e-3));
  CHECK(dcqcn_equilibrium_queue(100, BitRate::gbps(40), params, k1000B, Bytes(5'000),
                                Bytes(200'000), 0.01) == Bytes(200'000));
  CHECK_THROWS_AS((void)dcqcn_equilibrium_queue(0, BitRate::gbps(40), params, k1000B, Bytes(5'000),
                                                Bytes(200'000), 0.01),
                  std::invalid_argument);
}

}  // namespace
}  // namespace lockstep
