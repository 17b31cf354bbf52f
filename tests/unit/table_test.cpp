#include <doctest/doctest.h>

#include "memory_backend.hpp"
#include "sim/core/discarding_backend.hpp"
#include "sim/core/table.hpp"

namespace lockstep {
namespace {

struct Row {
  std::int64_t id;
  double value;
  FixedText<8> label;
  std::uint64_t flags;
};

TableLayout row_layout() {
  return layout<Row>("rows", {column("id", &Row::id), column("value", &Row::value),
                              column("label", &Row::label), column("flags", &Row::flags)});
}

TEST_CASE("column descriptions follow the row struct") {
  const TableLayout l = row_layout();
  REQUIRE(l.columns.size() == 4);
  CHECK(l.row_size == sizeof(Row));
  CHECK(l.columns[0].offset == offsetof(Row, id));
  CHECK(l.columns[1].type == ColumnType::kFloat64);
  CHECK(l.columns[2].type == ColumnType::kText);
  CHECK(l.columns[2].size == 8);
  CHECK(l.columns[2].offset == offsetof(Row, label));
  CHECK(l.columns[3].type == ColumnType::kUInt64);
}

TEST_CASE("rows reach the sink a chunk at a time, and all of them after a flush") {
  testing::MemoryBackend backend;
  Table<Row> table(backend, row_layout());
  const std::size_t n = Table<Row>::kChunkRows * 2 + 5;
  for (std::size_t i = 0; i < n; ++i) {
    table.append(Row{static_cast<std::int64_t>(i), 0.5 * static_cast<double>(i), "abc", i});
  }
  CHECK(backend.stored("rows").rows == Table<Row>::kChunkRows * 2);
  CHECK(backend.stored("rows").writes == 2);
  CHECK(table.rows() == n);
  table.flush();
  const auto rows = backend.rows<Row>("rows");
  REQUIRE(rows.size() == n);
  CHECK(rows[n - 1].id == static_cast<std::int64_t>(n - 1));
  CHECK(rows[7].value == 3.5);
  CHECK(rows[7].label.view() == "abc");
}

// A backend that gives no sink (nobody reads the table) still has every row counted, past the
// point where a buffered table would hand a full chunk to its sink.
TEST_CASE("a table nobody reads counts its rows and drops them") {
  DiscardingBackend backend;
  Table<Row> table(backend, row_layout());
  const std::size_t n = Table<Row>::kChunkRows + 3;
  for (std::size_t i = 0; i < n; ++i) table.append(Row{0, 0.0, "x", 0});
  table.flush();
  CHECK(table.rows() == n);
}

TEST_CASE("fixed text keeps short strings whole and cuts long ones at its width") {
  const FixedText<4> short_text("ab");
  const FixedText<4> long_text("abcdefgh");
  CHECK(short_text.view() == "ab");
  CHECK(long_text.view() == "abcd");
}

}  // namespace
}  // namespace lockstep
