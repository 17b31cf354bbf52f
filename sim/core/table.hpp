// Append-only typed tables: the one way models record results. A table is a plain row struct plus
// the layout of its columns; rows are buffered a chunk at a time and handed to a sink (the HDF5
// file in a run, memory in tests), so memory stays flat however long the run. Column names carry
// their unit
// (`start_ps`, `bytes`, `rate_bps`) so that a DataFrame needs no side table to be read right.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace lockstep {

// Fixed-width, zero-padded text (an HDF5 fixed-length string). Longer text is cut, never
// overflowed.
template <std::size_t N>
struct FixedText {
  std::array<char, N> chars{};

  FixedText() = default;
  FixedText(std::string_view text) {  // NOLINT(google-explicit-constructor): rows read naturally
    std::copy_n(text.begin(), std::min(text.size(), N), chars.begin());
  }
  FixedText(const char* text) : FixedText(std::string_view(text)) {}  // NOLINT: as above
  [[nodiscard]] std::string_view view() const {
    return {chars.data(),
            static_cast<std::size_t>(std::find(chars.begin(), chars.end(), '\0') - chars.begin())};
  }
};

enum class ColumnType { kInt64, kUInt64, kFloat64, kText };

struct Column {
  std::string name;
  ColumnType type;
  std::size_t offset;  // within the row struct
  std::size_t size;    // bytes in the row struct
};

struct TableLayout {
  std::string name;
  std::size_t row_size = 0;
  std::vector<Column> columns;
};

namespace detail {
template <class T>
struct ColumnTypeOf;
template <>
struct ColumnTypeOf<std::int64_t> {
  static constexpr ColumnType value = ColumnType::kInt64;
};
template <>
struct ColumnTypeOf<std::uint64_t> {
  static constexpr ColumnType value = ColumnType::kUInt64;
};
template <>
struct ColumnTypeOf<double> {
  static constexpr ColumnType value = ColumnType::kFloat64;
};
template <std::size_t N>
struct ColumnTypeOf<FixedText<N>> {
  static constexpr ColumnType value = ColumnType::kText;
};
}  // namespace detail

template <class Row, class Field>
[[nodiscard]] Column column(std::string name, Field Row::*member) {
  const Row probe{};
  const auto* base = reinterpret_cast<const std::byte*>(&probe);
  const auto* field = reinterpret_cast<const std::byte*>(&(probe.*member));
  return Column{std::move(name), detail::ColumnTypeOf<Field>::value,
                static_cast<std::size_t>(field - base), sizeof(Field)};
}

template <class Row>
[[nodiscard]] TableLayout layout(std::string name, std::vector<Column> columns) {
  static_assert(std::is_trivially_copyable_v<Row> && std::is_standard_layout_v<Row>);
  return TableLayout{std::move(name), sizeof(Row), std::move(columns)};
}

// Where full chunks of rows go. Rows arrive in the row struct's memory layout.
class TableSink {
 public:
  virtual ~TableSink() = default;
  virtual void write_rows(const std::byte* rows, std::size_t count) = 0;
};

// Makes one sink per table; the output file is one. No sink (nullptr): nobody reads the table, so
// its rows are counted and dropped without being buffered.
class RecordBackend {
 public:
  virtual ~RecordBackend() = default;
  [[nodiscard]] virtual std::unique_ptr<TableSink> open_table(const TableLayout& layout) = 0;
};

template <class Row>
class Table {
 public:
  static constexpr std::size_t kChunkRows = 8192;

  Table(RecordBackend& backend, const TableLayout& layout) : sink_(backend.open_table(layout)) {}

  void append(const Row& row) {
    if (!sink_) {
      ++rows_written_;
      return;
    }
    buffer_.push_back(row);
    if (buffer_.size() == kChunkRows) flush();
  }

  void flush() {
    if (buffer_.empty()) return;
    sink_->write_rows(reinterpret_cast<const std::byte*>(buffer_.data()), buffer_.size());
    rows_written_ += buffer_.size();
    buffer_.clear();
  }

  [[nodiscard]] std::size_t rows() const { return rows_written_ + buffer_.size(); }

 private:
  std::unique_ptr<TableSink> sink_;
  std::vector<Row> buffer_;
  std::size_t rows_written_ = 0;
};

}  // namespace lockstep
