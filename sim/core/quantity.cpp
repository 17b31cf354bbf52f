#include "sim/core/quantity.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <span>
#include <tuple>

namespace lockstep {
namespace {

__extension__ using Wide = unsigned __int128;

struct Unit {
  std::string_view symbol;
  std::int64_t base_per_unit;  // how many base units (ps, bytes or bit/s) one unit holds
  bool prefer_whole = false;   // printed only when the value is a whole multiple
};

// Where one base unit is bigger than the written one (bits in a byte size), the scale is negative:
// the value is divided, and must divide exactly.
constexpr std::array kDurationUnits = {
    Unit{"ps", 1},
    Unit{"ns", 1'000},
    Unit{"us", 1'000'000},
    Unit{"ms", 1'000'000'000},
    Unit{"s", 1'000'000'000'000},
    Unit{"min", 60'000'000'000'000, true},
    Unit{"h", 3'600'000'000'000'000, true},
};

constexpr std::int64_t kKi = 1024;
constexpr std::array kByteUnits = {
    Unit{"B", 1},
    Unit{"KB", 1'000},
    Unit{"MB", 1'000'000},
    Unit{"GB", 1'000'000'000},
    Unit{"TB", 1'000'000'000'000},
    Unit{"KiB", kKi},
    Unit{"MiB", kKi* kKi},
    Unit{"GiB", kKi* kKi* kKi},
    Unit{"TiB", kKi* kKi* kKi* kKi},
};

// Sizes written in bits: the value is divided by 8 and must come out whole.
constexpr std::array kBitSizeUnits = {
    Unit{"b", 1},
    Unit{"Kb", 1'000},
    Unit{"Mb", 1'000'000},
    Unit{"Gb", 1'000'000'000},
};

constexpr std::array kRateUnits = {
    Unit{"bps", 1},
    Unit{"Kbps", 1'000},
    Unit{"Mbps", 1'000'000},
    Unit{"Gbps", 1'000'000'000},
    Unit{"Tbps", 1'000'000'000'000},
    Unit{"b/s", 1},
    Unit{"Kb/s", 1'000},
    Unit{"Mb/s", 1'000'000},
    Unit{"Gb/s", 1'000'000'000},
    Unit{"Tb/s", 1'000'000'000'000},
    Unit{"B/s", 8},
    Unit{"KB/s", 8'000},
    Unit{"MB/s", 8'000'000},
    Unit{"GB/s", 8'000'000'000},
    Unit{"TB/s", 8'000'000'000'000},
    Unit{"KiB/s", 8 * kKi},
    Unit{"MiB/s", 8 * kKi* kKi},
    Unit{"GiB/s", 8 * kKi* kKi* kKi},
};
// Rates print in bits, as link rates are quoted.
constexpr std::span<const Unit> kRatePrintUnits{kRateUnits.data(), 5};

struct Decimal {
  Wide digits = 0;  // all digits of the number without the point
  int fraction_digits = 0;
  std::string_view unit;  // what follows the number, spaces skipped
};

// Splits "1.5us" into 15, 1 fraction digit and "us". Empty optional when there is no number.
std::optional<Decimal> split_number(std::string_view text) {
  Decimal d;
  std::size_t i = 0;
  bool any_digit = false;
  bool seen_point = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      any_digit = true;
      if (d.digits > (std::numeric_limits<std::uint64_t>::max() / 10)) return std::nullopt;
      d.digits = d.digits * 10 + static_cast<unsigned>(c - '0');
      if (seen_point) ++d.fraction_digits;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!any_digit) return std::nullopt;
  while (i < text.size() && text[i] == ' ') ++i;
  d.unit = text.substr(i);
  return d;
}

std::string unit_list(std::span<const Unit> units) {
  std::string out;
  for (const Unit& u : units) {
    if (!out.empty()) out += ", ";
    out += u.symbol;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// More decimal places than any whole number of a base unit needs: 10^30 times the largest unit
// scale still fits the 128-bit denominator, which 10^128 would wrap to 0.
constexpr int kMostDecimalPlaces = 30;

// value = digits * scale_num / (10^fraction_digits * scale_den), which must be a whole number that
// fits in int64.
Parsed<std::int64_t> exact_value(std::string_view text, const Decimal& d, Wide scale_num,
                                 Wide scale_den, std::string_view base_name) {
  if (d.fraction_digits > kMostDecimalPlaces) {
    return {std::nullopt, "'" + std::string(text) + "' has too many decimal places (at most " +
                              std::to_string(kMostDecimalPlaces) + ")"};
  }
  Wide denominator = scale_den;
  for (int i = 0; i < d.fraction_digits; ++i) denominator *= 10;
  const Wide numerator = d.digits * scale_num;
  if (scale_num != 0 && numerator / scale_num != d.digits) {
    return {std::nullopt, "'" + std::string(text) + "' is too large"};
  }
  if (numerator % denominator != 0) {
    return {std::nullopt,
            "'" + std::string(text) + "' is not a whole number of " + std::string(base_name)};
  }
  const Wide value = numerator / denominator;
  if (value > static_cast<Wide>(std::numeric_limits<std::int64_t>::max())) {
    return {std::nullopt, "'" + std::string(text) + "' is too large"};
  }
  return {static_cast<std::int64_t>(value), {}};
}

const Unit* find_unit(std::span<const Unit> units, std::string_view symbol) {
  for (const Unit& u : units) {
    if (u.symbol == symbol) return &u;
  }
  return nullptr;
}

// Common front half of every parser: a non-negative decimal followed by a unit symbol.
Parsed<Decimal> split_quantity(std::string_view raw, std::string_view what,
                               std::string_view example) {
  const std::string_view text = trim(raw);
  if (text.empty()) return {std::nullopt, "empty " + std::string(what)};
  if (text.front() == '-') {
    return {std::nullopt,
            "'" + std::string(text) + "': a " + std::string(what) + " cannot be negative"};
  }
  const std::optional<Decimal> d = split_number(text);
  if (!d) {
    return {std::nullopt, "'" + std::string(text) + "' is not a " + std::string(what) +
                              " (write a number and a unit, e.g. " + std::string(example) + ")"};
  }
  if (d->unit.empty()) {
    return {std::nullopt,
            "'" + std::string(text) + "' needs a unit (e.g. " + std::string(example) + ")"};
  }
  return {*d, {}};
}

std::string unknown_unit(std::string_view text, std::string_view unit, std::string_view what,
                         std::span<const Unit> units) {
  return "'" + std::string(trim(text)) + "': unknown " + std::string(what) + " unit '" +
         std::string(unit) + "' (use one of " + unit_list(units) + ")";
}

// Exact decimal text of value / divisor, e.g. 1536 / 1024 -> "1.5".
std::string exact_ratio(std::int64_t value, std::int64_t divisor) {
  std::string out = std::to_string(value / divisor);
  std::int64_t rest = value % divisor;
  if (rest == 0) return out;
  out += '.';
  while (rest != 0) {
    const Wide scaled = static_cast<Wide>(rest) * 10;
    out += static_cast<char>('0' + static_cast<int>(scaled / static_cast<Wide>(divisor)));
    rest = static_cast<std::int64_t>(scaled % static_cast<Wide>(divisor));
  }
  return out;
}

// The spelling a person reads most easily: few decimals (at most three), then a number between 1
// and 999 in its unit, then the shortest text; ties go to the larger unit. Always exact.
std::string readable(std::int64_t value, std::span<const Unit> units) {
  const bool negative = value < 0;
  const std::int64_t magnitude = negative ? -value : value;
  std::string best;
  std::tuple<bool, bool, std::size_t> best_rank{true, true, 0};
  for (const Unit& u : units) {
    if (magnitude < u.base_per_unit && !(magnitude == 0 && u.base_per_unit == 1)) continue;
    if (u.prefer_whole && magnitude % u.base_per_unit != 0) continue;
    const std::string number = exact_ratio(magnitude, u.base_per_unit);
    const std::size_t point = number.find('.');
    const std::size_t decimals = point == std::string::npos ? 0 : number.size() - point - 1;
    const std::size_t whole_digits = point == std::string::npos ? number.size() : point;
    std::string candidate = number + std::string(u.symbol);
    const std::tuple<bool, bool, std::size_t> rank{decimals > 3, whole_digits > 3,
                                                   candidate.size()};
    if (best.empty() || rank <= best_rank) {
      best = std::move(candidate);
      best_rank = rank;
    }
  }
  return negative ? "-" + best : best;
}

}  // namespace

Parsed<Duration> parse_duration(std::string_view text) {
  const Parsed<Decimal> q = split_quantity(text, "duration", "600ns, 1.5us, 10min");
  if (!q) return {std::nullopt, q.error};
  const Unit* unit = find_unit(kDurationUnits, q.value->unit);
  if (unit == nullptr) {
    return {std::nullopt, unknown_unit(text, q.value->unit, "duration", kDurationUnits)};
  }
  const Parsed<std::int64_t> ps =
      exact_value(trim(text), *q.value, static_cast<Wide>(unit->base_per_unit), 1, "picoseconds");
  if (!ps) return {std::nullopt, ps.error};
  return {Duration::ps(*ps.value), {}};
}

Parsed<Bytes> parse_bytes(std::string_view text) {
  const Parsed<Decimal> q = split_quantity(text, "size", "4KiB, 5KB, 1.5GB");
  if (!q) return {std::nullopt, q.error};
  Parsed<std::int64_t> count;
  if (const Unit* unit = find_unit(kByteUnits, q.value->unit)) {
    count = exact_value(trim(text), *q.value, static_cast<Wide>(unit->base_per_unit), 1, "bytes");
  } else if (const Unit* bit_unit = find_unit(kBitSizeUnits, q.value->unit)) {
    count =
        exact_value(trim(text), *q.value, static_cast<Wide>(bit_unit->base_per_unit), 8, "bytes");
  } else {
    return {std::nullopt, unknown_unit(text, q.value->unit, "size", kByteUnits)};
  }
  if (!count) return {std::nullopt, count.error};
  return {Bytes(*count.value), {}};
}

Parsed<BitRate> parse_bit_rate(std::string_view text) {
  const Parsed<Decimal> q = split_quantity(text, "rate", "400Gbps, 900GB/s");
  if (!q) return {std::nullopt, q.error};
  const Unit* unit = find_unit(kRateUnits, q.value->unit);
  if (unit == nullptr) return {std::nullopt, unknown_unit(text, q.value->unit, "rate", kRateUnits)};
  const Parsed<std::int64_t> bps = exact_value(
      trim(text), *q.value, static_cast<Wide>(unit->base_per_unit), 1, "bits per second");
  if (!bps) return {std::nullopt, bps.error};
  return {BitRate::bps(*bps.value), {}};
}

std::string format(Duration d) { return readable(d.ps(), kDurationUnits); }
std::string format(Time t) { return format(t.since_start()); }
std::string format(Bytes b) { return readable(b.count(), kByteUnits); }
std::string format(BitRate r) { return readable(r.bps(), kRatePrintUnits); }

std::string format_rounded(Duration d) {
  const std::int64_t magnitude = d.ps() < 0 ? -d.ps() : d.ps();
  const Unit* unit = &kDurationUnits[0];
  for (const Unit& u : std::span(kDurationUnits).first(5)) {  // ps to s; minutes read worse
    if (magnitude >= u.base_per_unit) unit = &u;
  }
  const double value = static_cast<double>(d.ps()) / static_cast<double>(unit->base_per_unit);
  char text[48];
  std::snprintf(text, sizeof text, value < 1000 && value > -1000 ? "%.4g%s" : "%.0f%s", value,
                std::string(unit->symbol).c_str());
  return text;
}

}  // namespace lockstep
