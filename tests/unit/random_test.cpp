#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "sim/core/random.hpp"

namespace lockstep {
namespace {

std::vector<std::uint64_t> draws(RandomStream& s, int n) {
  std::vector<std::uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(s.next_u64());
  return out;
}

TEST_CASE("a stream is a pure function of (master seed, name, component id)") {
  RandomStream a(42, "job.compute", 3);
  RandomStream b(42, "job.compute", 3);
  CHECK(draws(a, 100) == draws(b, 100));
}

TEST_CASE("streams differ by seed, by name and by component id") {
  RandomStream base(42, "job.compute", 3);
  RandomStream other_seed(43, "job.compute", 3);
  RandomStream other_name(42, "job.compute2", 3);
  RandomStream other_id(42, "job.compute", 4);
  const auto reference = draws(base, 8);
  CHECK(draws(other_seed, 8) != reference);
  CHECK(draws(other_name, 8) != reference);
  CHECK(draws(other_id, 8) != reference);
}

TEST_CASE("adding a stream or drawing from another does not change a stream's draws") {
  RandomStream alone(5, "fault.ecc", 0);
  const auto reference = draws(alone, 50);

  RandomStream first(5, "fabric.ecmp", 0);
  RandomStream target(5, "fault.ecc", 0);
  RandomStream added(5, "fault.xid", 0);
  std::vector<std::uint64_t> interleaved;
  for (int i = 0; i < 50; ++i) {
    (void)first.next_u64();
    (void)added.uniform();
    interleaved.push_back(target.next_u64());
  }
  CHECK(interleaved == reference);
}

TEST_CASE("uniform draws lie from 0 up to but excluding 1, with the right mean and variance") {
  RandomStream s(1);
  const int n = 200'000;
  double sum = 0;
  double sum_sq = 0;
  for (int i = 0; i < n; ++i) {
    const double u = s.uniform();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    sum += u;
    sum_sq += u * u;
  }
  const double mean = sum / n;
  // Standard error of the mean is sqrt(1/12 / n) = 0.00065; 5 sigma is 0.0033.
  CHECK(mean == doctest::Approx(0.5).epsilon(0.0066));
  CHECK(sum_sq / n - mean * mean == doctest::Approx(1.0 / 12).epsilon(0.02));
}

TEST_CASE("below is unbiased and stays under its bound") {
  RandomStream s(2);
  std::vector<int> counts(6, 0);
  const int n = 600'000;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t v = s.below(6);
    REQUIRE(v < 6);
    ++counts[v];
  }
  // Each count is Binomial(n, 1/6): mean 100000, sd 289; allow 5 sd.
  for (int c : counts) CHECK(std::abs(c - 100'000) < 1'450);
  CHECK(s.below(1) == 0);
}

TEST_CASE("exponential, normal and log-normal draws have their stated moments") {
  RandomStream s(3);
  const int n = 200'000;
  double exp_sum = 0;
  double normal_sum = 0;
  double normal_sq = 0;
  double logn_sum = 0;
  double logn_sq = 0;
  for (int i = 0; i < n; ++i) {
    exp_sum += s.exponential(2.5);
    const double z = s.normal();
    normal_sum += z;
    normal_sq += z * z;
    const double x = s.lognormal_mean_cv(400.0, 0.05);
    logn_sum += x;
    logn_sq += x * x;
  }
  CHECK(exp_sum / n == doctest::Approx(2.5).epsilon(0.02));
  CHECK(normal_sum / n == doctest::Approx(0.0).scale(1.0).epsilon(0.012));
  CHECK(normal_sq / n == doctest::Approx(1.0).epsilon(0.02));
  const double mean = logn_sum / n;
  const double cv = std::sqrt(logn_sq / n - mean * mean) / mean;
  CHECK(mean == doctest::Approx(400.0).epsilon(0.001));
  CHECK(cv == doctest::Approx(0.05).epsilon(0.03));
  CHECK(s.lognormal_mean_cv(123.0, 0.0) == 123.0);
}

}  // namespace
}  // namespace lockstep
