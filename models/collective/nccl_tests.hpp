// nccl-tests' conventions, so that `lockstep nccl-tests` reads and prints what its users know
// (NVIDIA/nccl-tests; definitions in reference.md section 2): sizes given as bytes with an optional
// K, M or G suffix (powers of 1024), a sweep from -b to -e multiplying by -f, element counts of
// 4-byte floats, and the table with its '#' comment lines, fixed-width columns and closing lines,
// which users parse with awk and grep.
//
// Columns of a row: size (B) and count (elements) in 12 characters, type in 8, redop and root in 6;
// then for out-of-place and again for in-place: time (us) in 7 (2 decimals below 100 us, 1 below
// 10,000 us, none above), algbw and busbw (GB/s, 2 decimals) in 6, and #wrong in 6 after a single
// space. Every line of the table is 116 characters wide.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/collective/collective_op.hpp"
#include "sim/core/bytes.hpp"
#include "sim/core/time.hpp"

namespace lockstep::nccl_tests {

inline constexpr std::int64_t kFloatBytes = 4;

// "8", "128K", "1M", "8G" (nccl-tests: K = 1024 B). Empty for anything else or a negative size.
[[nodiscard]] std::optional<Bytes> parse_size(std::string_view text);

// min, min f, min f^2, ... up to max (nccl-tests' -b, -e, -f). min >= 1, factor >= 2; a single
// size when min == max.
[[nodiscard]] std::vector<Bytes> size_sweep(Bytes min, Bytes max, std::int64_t factor);

// What one row measures: the operation's size S in bytes (rounded down to whole floats, and for
// reduce-scatter, all-gather and all-to-all to a whole number per rank) and the count column
// (elements per rank for those three, elements of the buffer otherwise).
struct Shape {
  Bytes size;
  std::int64_t count = 0;
};
[[nodiscard]] Shape shape(CollectiveOp op, Bytes requested, std::int64_t ranks);

// "sum" for the reductions, "none" otherwise.
[[nodiscard]] std::string_view redop(CollectiveOp op);
// The root column: rank 0 for broadcast and reduce (nccl-tests' default -r 0), -1 otherwise.
[[nodiscard]] int root(CollectiveOp op);

[[nodiscard]] std::vector<std::string> header_lines();
// One row; the same time in both halves when in-place and out-of-place move the same bytes.
[[nodiscard]] std::string row(CollectiveOp op, const Shape& shape, std::int64_t ranks,
                              Duration out_of_place, Duration in_place);
// algbw = S / t in GB/s (10^9 B/s); busbw = algbw x bus_bandwidth_factor.
[[nodiscard]] double algbw(Bytes size, Duration time);
[[nodiscard]] std::vector<std::string> closing_lines(double average_busbw);

}  // namespace lockstep::nccl_tests
