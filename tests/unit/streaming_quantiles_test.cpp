// Quantiles in fixed memory: exact below 32 and for the largest sample, within 2.2% above.
#include "sim/core/streaming_quantiles.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace lockstep {
namespace {

TEST_CASE("streaming quantiles are exact for small values and the maximum, within 2.2% otherwise") {
  StreamingQuantiles empty;
  CHECK(empty.quantile(0.5) == 0.0);
  CHECK(empty.count() == 0);

  StreamingQuantiles small;
  for (const std::int64_t v : {7, 3, 9, 1, 5}) small.add(v);
  CHECK(small.quantile(0.0) == 1.0);
  CHECK(small.quantile(0.5) == 5.0);
  CHECK(small.quantile(1.0) == 9.0);

  // A skewed stream: a million samples 1000 + i^2 / 1000, as a sorted copy gives them.
  StreamingQuantiles skewed;
  std::vector<std::int64_t> sorted;
  for (std::int64_t i = 0; i < 1'000'000; ++i) {
    const std::int64_t v = 1000 + i * i / 1000;
    skewed.add(v);
    sorted.push_back(v);
  }
  std::sort(sorted.begin(), sorted.end());
  CHECK(skewed.count() == 1'000'000);
  for (const double q : {0.01, 0.5, 0.9, 0.99, 0.999}) {
    CAPTURE(q);
    const auto exact = static_cast<double>(sorted[static_cast<std::size_t>(q * 999'999)]);
    CHECK(skewed.quantile(q) == doctest::Approx(exact).epsilon(0.022));
  }
  CHECK(skewed.quantile(1.0) == static_cast<double>(sorted.back()));
  CHECK(skewed.max() == sorted.back());
}

}  // namespace
}  // namespace lockstep
