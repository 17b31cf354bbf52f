// A RecordBackend that keeps rows in memory, so tests can read back exactly what a model recorded.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/table.hpp"

namespace lockstep::testing {

class MemoryBackend final : public RecordBackend {
 public:
  struct Stored {
    TableLayout layout;
    std::vector<std::byte> bytes;
    std::size_t rows = 0;
    std::size_t writes = 0;
  };

  std::unique_ptr<TableSink> open_table(const TableLayout& layout) override {
    tables_[layout.name].layout = layout;
    return std::make_unique<Sink>(tables_[layout.name]);
  }

  template <class Row>
  [[nodiscard]] std::vector<Row> rows(const std::string& table) const {
    const Stored& s = tables_.at(table);
    std::vector<Row> out(s.rows);
    if (s.rows != 0) std::memcpy(out.data(), s.bytes.data(), s.bytes.size());
    return out;
  }

  [[nodiscard]] const Stored& stored(const std::string& table) const { return tables_.at(table); }

 private:
  class Sink final : public TableSink {
   public:
    explicit Sink(Stored& stored) : stored_(stored) {}
    void write_rows(const std::byte* rows, std::size_t count) override {
      stored_.bytes.insert(stored_.bytes.end(), rows, rows + count * stored_.layout.row_size);
      stored_.rows += count;
      ++stored_.writes;
    }

   private:
    Stored& stored_;
  };

  std::map<std::string, Stored> tables_;
};

}  // namespace lockstep::testing
