#include "sim/sweep/sweep_index.hpp"

#include <H5Cpp.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <variant>
#include <vector>

#include "sim/output/hdf5_output.hpp"
#include "sim/sweep/point_headline.hpp"

namespace lockstep {
namespace {

using Cell = std::variant<std::int64_t, double, std::string>;

// A table whose columns are known only at run time (one per varied key): rows are laid out by
// hand in the form the output's sinks take.
class IndexTable {
 public:
  void add_column(std::string name, std::function<Cell(std::size_t)> cell) {
    columns_.push_back({std::move(name), std::move(cell)});
  }

  void write(Hdf5Output& file, std::size_t rows) const {
    TableLayout layout{"points", 0, {}};
    for (const auto& [name, cell] : columns_) {
      const Cell probe = rows > 0 ? cell(0) : Cell{std::string()};
      std::size_t size = sizeof(std::int64_t);
      ColumnType type = ColumnType::kInt64;
      if (std::holds_alternative<double>(probe)) type = ColumnType::kFloat64;
      if (std::holds_alternative<std::string>(probe)) {
        type = ColumnType::kText;
        size = 1;
        for (std::size_t row = 0; row < rows; ++row)
          size = std::max(size, std::get<std::string>(cell(row)).size());
      }
      layout.columns.push_back(Column{name, type, layout.row_size, size});
      layout.row_size += size;
    }
    std::vector<std::byte> bytes(layout.row_size * rows);
    for (std::size_t row = 0; row < rows; ++row) {
      std::byte* base = bytes.data() + row * layout.row_size;
      for (std::size_t c = 0; c < columns_.size(); ++c) {
        const Cell value = columns_[c].cell(row);
        std::byte* at = base + layout.columns[c].offset;
        if (const auto* integer = std::get_if<std::int64_t>(&value)) {
          std::memcpy(at, integer, sizeof *integer);
        } else if (const auto* real = std::get_if<double>(&value)) {
          std::memcpy(at, real, sizeof *real);
        } else {
          const auto& text = std::get<std::string>(value);
          std::memcpy(at, text.data(), text.size());
        }
      }
    }
    std::unique_ptr<TableSink> sink = file.open_table(layout);
    if (rows > 0) sink->write_rows(bytes.data(), rows);
  }

 private:
  struct IndexColumn {
    std::string name;
    std::function<Cell(std::size_t)> cell;
  };
  std::vector<IndexColumn> columns_;
};

struct PointRow {
  std::string status;
  std::string message;
  PointHeadline headline;
};

PointRow read_row(const SweepDirectory& directory, std::size_t index) {
  PointRow row;
  if (directory.state(index) == PointState::kFailed) {
    row.status = "failed";
    row.message = directory.failure_message(index);
    while (!row.message.empty() && row.message.back() == '\n') row.message.pop_back();
    return row;
  }
  try {
    row.headline = read_point_headline(directory.point_file(index));
    row.status = "done";
  } catch (const H5::Exception& e) {
    row.status = "failed";
    row.message = "its file cannot be read: " + e.getDetailMsg();
  }
  return row;
}

}  // namespace

void write_sweep_index(const SweepPlan& plan, const SweepDirectory& directory,
                       const std::filesystem::path& sweep_file) {
  H5::Exception::dontPrint();
  std::vector<PointRow> rows;
  for (const SweepPoint& point : plan.points) rows.push_back(read_row(directory, point.index));
  const auto headline = [&](std::size_t row) -> const PointHeadline& { return rows[row].headline; };

  IndexTable table;
  table.add_column("point",
                   [&](std::size_t r) { return Cell{std::int64_t(plan.points[r].index)}; });
  for (const std::string& parameter : plan.parameters) {
    table.add_column(parameter, [&](std::size_t r) {
      return Cell{SweepPlan::value_of(plan.points[r], parameter)};
    });
  }
  if (plan.seeded) {
    table.add_column("seed", [&](std::size_t r) {
      return Cell{static_cast<std::int64_t>(plan.points[r].seed.value_or(0))};
    });
  }
  table.add_column("status", [&](std::size_t r) { return Cell{rows[r].status}; });
  table.add_column("message", [&](std::size_t r) { return Cell{rows[r].message}; });
  table.add_column("file", [&](std::size_t r) {
    return Cell{
        std::filesystem::relative(directory.point_file(plan.points[r].index), directory.root())
            .string()};
  });
  table.add_column("kind", [&](std::size_t r) { return Cell{headline(r).kind}; });
  table.add_column("outcome", [&](std::size_t r) { return Cell{headline(r).outcome}; });
  table.add_column("end_ps", [&](std::size_t r) { return Cell{headline(r).end_ps}; });
  table.add_column("steps", [&](std::size_t r) { return Cell{headline(r).steps}; });
  table.add_column("step_time_ps", [&](std::size_t r) { return Cell{headline(r).step_time_ps}; });
  table.add_column("mfu", [&](std::size_t r) { return Cell{headline(r).mfu}; });
  table.add_column("tflops_per_gpu",
                   [&](std::size_t r) { return Cell{headline(r).tflops_per_gpu}; });
  table.add_column("tokens_per_second",
                   [&](std::size_t r) { return Cell{headline(r).tokens_per_second}; });
  table.add_column("goodput", [&](std::size_t r) { return Cell{headline(r).goodput}; });
  table.add_column("flows", [&](std::size_t r) { return Cell{headline(r).flows}; });
  table.add_column("fct_p99_ps", [&](std::size_t r) { return Cell{headline(r).fct_p99_ps}; });
  table.add_column("pauses_sent", [&](std::size_t r) { return Cell{headline(r).pauses_sent}; });
  table.add_column("ecn_marked", [&](std::size_t r) { return Cell{headline(r).ecn_marked}; });
  table.add_column("dropped_packets",
                   [&](std::size_t r) { return Cell{headline(r).dropped_packets}; });

  Hdf5Output file(directory.index_file());
  table.write(file, rows.size());
  file.write_meta_text("kind", "sweep");
  file.write_meta_text("sweep_file", sweep_file.string());
  file.write_meta_text("base", plan.base.string());
  file.write_meta_text("version", LOCKSTEP_VERSION);
  file.commit();
}

}  // namespace lockstep
