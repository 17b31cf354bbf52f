#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "sim/core/quantity.hpp"

namespace lockstep {
namespace {

Duration duration(std::string_view text) { return *parse_duration(text).value; }
Bytes bytes(std::string_view text) { return *parse_bytes(text).value; }
BitRate rate(std::string_view text) { return *parse_bit_rate(text).value; }

TEST_CASE("durations parse to exact picoseconds in every unit") {
  CHECK(duration("7ps").ps() == 7);
  CHECK(duration("600ns").ps() == 600'000);
  CHECK(duration("1.5us").ps() == 1'500'000);
  CHECK(duration("2ms").ps() == 2'000'000'000);
  CHECK(duration("0.25s").ps() == 250'000'000'000);
  CHECK(duration("10min").ps() == 600'000'000'000'000);
  CHECK(duration("1h").ps() == 3'600'000'000'000'000);
  CHECK(duration("1.000001ms").ps() == 1'000'001'000);
  CHECK(duration(" 5 us ").ps() == 5'000'000);
}

TEST_CASE("sizes distinguish decimal from binary prefixes and bits from bytes") {
  CHECK(bytes("5KB").count() == 5'000);
  CHECK(bytes("4KiB").count() == 4'096);
  CHECK(bytes("1.5GB").count() == 1'500'000'000);
  CHECK(bytes("2MiB").count() == 2 * 1024 * 1024);
  CHECK(bytes("1TiB").count() == 1024LL * 1024 * 1024 * 1024);
  CHECK(bytes("64b").count() == 8);
  CHECK(bytes("1Kb").count() == 125);
}

TEST_CASE("rates accept bit and byte spellings") {
  CHECK(rate("400Gbps").bps() == 400'000'000'000);
  CHECK(rate("400Gb/s").bps() == 400'000'000'000);
  CHECK(rate("900GB/s").bps() == 7'200'000'000'000);
  CHECK(rate("3.2Tbps").bps() == 3'200'000'000'000);
  CHECK(rate("1KiB/s").bps() == 8'192);
  CHECK(rate("25Mbps").bps() == 25'000'000);
}

TEST_CASE("formatting picks an exact spelling with few decimals in the largest fitting unit") {
  CHECK(format(Duration::ps(1'500'000)) == "1.5us");
  CHECK(format(Duration::ns(600)) == "600ns");
  CHECK(format(Duration::s(3600)) == "1h");
  CHECK(format(Duration::s(600)) == "600s");
  CHECK(format(Duration::ps(123)) == "123ps");
  CHECK(format(Duration()) == "0ps");
  CHECK(format(Duration::ps(-1'500'000)) == "-1.5us");
  CHECK(format(Bytes(4096)) == "4KiB");
  CHECK(format(Bytes(5000)) == "5KB");
  CHECK(format(Bytes(1536)) == "1.5KiB");
  CHECK(format(Bytes(1500)) == "1.5KB");
  CHECK(format(Bytes(1)) == "1B");
  CHECK(format(Bytes(2'600'000'000)) == "2.6GB");
  CHECK(format(Bytes(1 << 20)) == "1MiB");
  CHECK(format(Duration::ps(12'345'678'000)) == "12345678ns");
  CHECK(format(BitRate::gbps(400)) == "400Gbps");
  CHECK(format(rate("900GB/s")) == "7.2Tbps");
}

TEST_CASE("rounded formatting gives four significant digits for people") {
  CHECK(format_rounded(Duration::ps(10'737'651'617'082)) == "10.74s");
  CHECK(format_rounded(Duration::us(103'635)) == "103.6ms");
  CHECK(format_rounded(Duration::ps(999)) == "999ps");
  CHECK(format_rounded(Duration::s(7200)) == "7200s");
}

TEST_CASE("every spelling parses back to the value it was formatted from") {
  for (const char* text :
       {"1ps", "999ps", "1.5us", "600ns", "12.345678ms", "3s", "10min", "2h", "1.000000000001s"}) {
    const Duration d = duration(text);
    CAPTURE(text);
    CHECK(duration(format(d)) == d);
  }
  for (const char* text : {"1B", "4KiB", "5KB", "1.5GB", "1000001B", "7MiB", "3TB"}) {
    const Bytes b = bytes(text);
    CAPTURE(text);
    CHECK(bytes(format(b)) == b);
  }
  for (const char* text : {"1bps", "56Gbps", "900GB/s", "100Mbps", "1.25Tbps", "3KiB/s"}) {
    const BitRate r = rate(text);
    CAPTURE(text);
    CHECK(rate(format(r)) == r);
  }
}

TEST_CASE("quantities without a unit, with an unknown unit or below resolution are rejected") {
  CHECK(parse_duration("400").error == "'400' needs a unit (e.g. 600ns, 1.5us, 10min)");
  CHECK(parse_bytes("4096").error == "'4096' needs a unit (e.g. 4KiB, 5KB, 1.5GB)");
  CHECK(parse_bit_rate("400").error == "'400' needs a unit (e.g. 400Gbps, 900GB/s)");
  CHECK(parse_duration("5sec").error ==
        "'5sec': unknown duration unit 'sec' (use one of ps, ns, us, ms, s, min, h)");
  CHECK(parse_bit_rate("400gbps").error ==
        "'400gbps': unknown rate unit 'gbps' (use one of bps, Kbps, Mbps, Gbps, Tbps, b/s, Kb/s, "
        "Mb/s, Gb/s, Tb/s, B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s)");
  CHECK(parse_duration("1.5ps").error == "'1.5ps' is not a whole number of picoseconds");
  CHECK(parse_bytes("1.5B").error == "'1.5B' is not a whole number of bytes");
  CHECK(parse_bytes("12b").error == "'12b' is not a whole number of bytes");
  CHECK(parse_duration("-5ns").error == "'-5ns': a duration cannot be negative");
  CHECK(parse_duration("fast").error ==
        "'fast' is not a duration (write a number and a unit, e.g. 600ns, 1.5us, 10min)");
  CHECK(parse_duration("").error == "empty duration");
  CHECK(parse_duration("200000h").error == "'200000h' is too large");
  CHECK_FALSE(parse_duration("1.2.3us"));
}

TEST_CASE("where a byte takes whole picoseconds, tx_time is that many per byte, and only there") {
  CHECK(whole_ps_per_byte(BitRate::gbps(100)) == 80);
  CHECK(whole_ps_per_byte(BitRate::gbps(400)) == 20);
  CHECK(whole_ps_per_byte(rate("3.2Tbps")) == 0);  // 2.5 ps
  CHECK(whole_ps_per_byte(BitRate::gbps(56)) == 0);
  for (const BitRate r : {BitRate::gbps(25), BitRate::gbps(100), BitRate::gbps(800)}) {
    for (std::int64_t bytes = 0; bytes <= 9'000; bytes += 7) {
      CHECK(tx_time(Bytes(bytes), r).ps() == bytes * whole_ps_per_byte(r));
    }
  }
}

// 4 KiB = 32768 bits. At 56 Gb/s: 32768 / 56e9 s = 585142.857... ps, rounded up to 585143 ps.
// At 3.2 Tb/s: 32768 / 3.2e12 s = 10240 ps exactly.
TEST_CASE("tx_time is exact and rounds up to the next picosecond") {
  CHECK(tx_time(Bytes(4096), BitRate::gbps(56)).ps() == 585'143);
  CHECK(tx_time(Bytes(4096), rate("3.2Tbps")).ps() == 10'240);
  CHECK(tx_time(Bytes(1), BitRate::gbps(800)).ps() == 10);
  CHECK(tx_time(Bytes(0), BitRate::gbps(100)).ps() == 0);
  // 10 GB at 100 Gb/s = 0.8 s; a per-byte constant of 80 ps happens to be exact here, but at
  // 56 Gb/s one byte is 142.857 ps: 10 GB must take 1.428571428571... s, not 10^10 x 143 ps.
  CHECK(tx_time(Bytes(10'000'000'000), BitRate::gbps(100)).ps() == 800'000'000'000);
  CHECK(tx_time(Bytes(10'000'000'000), BitRate::gbps(56)).ps() == 1'428'571'428'572);
}

// Up to 2 MiB tx_time divides in 64 bits, above it in 128; both sides of the seam must give the
// exact quotient rounded up. 2 MiB = 16,777,216 bits: at 7 Gb/s, 2,396,745,142.857 ps -> ...143.
// One byte more at 3 Gb/s: 16,777,224 bits / 3e9 = 5,592,408,000 ps exactly. At the largest rate
// (2^63 - 1 b/s), 2 MiB takes 1.82 ps -> 2, without overflowing the 64-bit product.
TEST_CASE("tx_time is exact on both sides of its 64-bit fast path") {
  CHECK(tx_time(Bytes(std::int64_t{2} << 20), BitRate::gbps(7)).ps() == 2'396'745'143);
  CHECK(tx_time(Bytes((std::int64_t{2} << 20) + 1), BitRate::gbps(3)).ps() == 5'592'408'000);
  CHECK(
      tx_time(Bytes(std::int64_t{2} << 20), BitRate::bps(std::numeric_limits<std::int64_t>::max()))
          .ps() == 2);
}

// 10^128 is 0 modulo 2^128: a denominator of that many decimal places once divided by zero. Up
// to 30 places are read exactly; more are refused for every kind of quantity.
TEST_CASE("a value with more decimal places than any unit needs is refused, not divided by 0") {
  const std::string zeros(128, '0');
  for (const std::string unit : {"s", "B", "Gbps"}) {
    CAPTURE(unit);
    const std::string text = "0." + zeros + unit;
    const std::string error = unit == "s"   ? parse_duration(text).error
                              : unit == "B" ? parse_bytes(text).error
                                            : parse_bit_rate(text).error;
    CHECK(error == "'" + text + "' has too many decimal places (at most 30)");
  }
  CHECK(parse_duration("0." + std::string(29, '0') + "1s").error ==
        "'0." + std::string(29, '0') + "1s' is not a whole number of picoseconds");
}

// 2^63 ps is about 106 days: a sum, difference or product of clock values past it, or a
// transmission that long (1 MB at 1 b/s is 92 days; 2 MB, 185), is an error, never a wrapped
// negative time that the event queue would take for the past.
TEST_CASE("clock arithmetic past 2^63 ps throws ClockOverflow instead of wrapping") {
  const Duration most = Duration::max();
  CHECK_THROWS_AS((void)(most + Duration::ps(1)), ClockOverflow);
  CHECK_THROWS_AS((void)(Duration::ps(std::numeric_limits<std::int64_t>::min()) - Duration::ps(1)),
                  ClockOverflow);
  CHECK_THROWS_AS((void)(Duration::s(1) * 10'000'000), ClockOverflow);
  CHECK((Duration::s(1) * 9'000'000).ps() == 9'000'000'000'000'000'000);
  CHECK_THROWS_AS((void)(Time::max() + Duration::ps(1)), ClockOverflow);
  Duration sum = most - Duration::ps(1);
  sum += Duration::ps(1);
  CHECK(sum == most);
  CHECK_THROWS_AS(sum += Duration::ps(1), ClockOverflow);
  CHECK(tx_time(Bytes(1'000'000), BitRate::bps(1)).ps() == 8'000'000'000'000'000'000);
  CHECK_THROWS_AS((void)tx_time(Bytes(2'000'000), BitRate::bps(1)), ClockOverflow);
  CHECK_THROWS_AS((void)tx_time(Bytes(1'000'000'000'000), BitRate::bps(1)), ClockOverflow);
  CHECK_THROWS_AS((void)Duration::ps_from_wide(1e19), ClockOverflow);
  CHECK(Duration::ps_from_wide(1e18).ps() == 1'000'000'000'000'000'000);
}

}  // namespace
}  // namespace lockstep
