#include "models/collective/nccl_tests.hpp"

#include <cctype>
#include <charconv>
#include <cstdio>

namespace lockstep::nccl_tests {
namespace {

std::string time_text(Duration time) {
  const double us = static_cast<double>(time.ps()) * 1e-6;
  char text[32];
  if (us >= 10000.0) {
    std::snprintf(text, sizeof text, "%7.0f", us);
  } else if (us >= 100.0) {
    std::snprintf(text, sizeof text, "%7.1f", us);
  } else {
    std::snprintf(text, sizeof text, "%7.2f", us);
  }
  return text;
}

// One half of a row: time, algbw, busbw, #wrong ("N/A": the model moves no data to check).
std::string half(Bytes size, Duration time, double factor) {
  const double bandwidth = algbw(size, time);
  char text[64];
  std::snprintf(text, sizeof text, "  %7s  %6.2f  %6.2f %6s", time_text(time).c_str(), bandwidth,
                bandwidth * factor, "N/A");
  return text;
}

}  // namespace

std::optional<Bytes> parse_size(std::string_view text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text.front()))) return {};
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc()) return {};
  const std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
  std::int64_t unit = 1;
  if (suffix == "K" || suffix == "k") {
    unit = std::int64_t{1} << 10;
  } else if (suffix == "M" || suffix == "m") {
    unit = std::int64_t{1} << 20;
  } else if (suffix == "G" || suffix == "g") {
    unit = std::int64_t{1} << 30;
  } else if (!suffix.empty()) {
    return {};
  }
  if (value > (std::int64_t{1} << 62) / unit) return {};
  return Bytes(value * unit);
}

std::vector<Bytes> size_sweep(Bytes min, Bytes max, std::int64_t factor) {
  std::vector<Bytes> sizes;
  for (std::int64_t s = min.count(); s <= max.count(); s *= factor) {
    sizes.push_back(Bytes(s));
    if (s > max.count() / factor) break;
  }
  return sizes;
}

Shape shape(CollectiveOp op, Bytes requested, std::int64_t ranks) {
  switch (op) {
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll: {
      const std::int64_t per_rank = requested.count() / kFloatBytes / ranks;
      return Shape{Bytes(per_rank * kFloatBytes * ranks), per_rank};
    }
    case CollectiveOp::kAllReduce:
    case CollectiveOp::kSendRecv:
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
      break;
  }
  const std::int64_t count = requested.count() / kFloatBytes;
  return Shape{Bytes(count * kFloatBytes), count};
}

int root(CollectiveOp op) {
  return op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce ? 0 : -1;
}

std::string_view redop(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter ||
                 op == CollectiveOp::kReduce
             ? "sum"
             : "none";
}

std::vector<std::string> header_lines() {
  char lines[3][160];
  std::snprintf(lines[0], sizeof lines[0],
                "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place"
                "          ",
                "", "", "", "", "");
  std::snprintf(lines[1], sizeof lines[1],
                "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s", "size",
                "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
                "algbw", "busbw", "#wrong");
  std::snprintf(lines[2], sizeof lines[2],
                "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s", "(B)",
                "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
                "(GB/s)", "");
  return {lines[0], lines[1], lines[2]};
}

std::string row(CollectiveOp op, const Shape& shape, std::int64_t ranks, Duration out_of_place,
                Duration in_place) {
  const double factor = bus_bandwidth_factor(op, ranks);
  char start[96];
  std::snprintf(start, sizeof start, "%12lld  %12lld  %8s  %6s  %6d",
                static_cast<long long>(shape.size.count()), static_cast<long long>(shape.count),
                "float", std::string(redop(op)).c_str(), root(op));
  return start + half(shape.size, out_of_place, factor) + half(shape.size, in_place, factor);
}

double algbw(Bytes size, Duration time) {
  if (time.ps() <= 0) return 0.0;
  return static_cast<double>(size.count()) / (static_cast<double>(time.ps()) * 1e-12) * 1e-9;
}

std::vector<std::string> closing_lines(double average_busbw) {
  char average[64];
  std::snprintf(average, sizeof average, "# Avg bus bandwidth    : %g ", average_busbw);
  return {"# Out of bounds values : 0 OK", average};
}

}  // namespace lockstep::nccl_tests
