#include "sim/sweep/point_headline.hpp"

#include <H5Cpp.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace lockstep {
namespace {

bool has(const H5::H5File& file, const char* name) {
  return H5Lexists(file.getId(), name, H5P_DEFAULT) > 0;
}

std::string meta_text(const H5::H5File& file, const std::string& name) {
  const H5::DataSet dataset = file.openDataSet("/meta/" + name);
  std::string text;
  dataset.read(text, dataset.getStrType());
  return text;
}

std::int64_t meta_integer(const H5::H5File& file, const std::string& name) {
  std::int64_t value = 0;
  file.openDataSet("/meta/" + name).read(&value, H5::PredType::NATIVE_INT64);
  return value;
}

// One column of a table, by name: HDF5 converts the compound rows to just that member.
template <class T>
std::vector<T> column(const H5::H5File& file, const char* table, const char* name,
                      const H5::PredType& type) {
  if (!has(file, table)) return {};
  const H5::DataSet dataset = file.openDataSet(table);
  hsize_t rows = 0;
  dataset.getSpace().getSimpleExtentDims(&rows);
  std::vector<T> values(rows);
  if (rows == 0) return values;
  H5::CompType member(sizeof(T));
  member.insertMember(name, 0, type);
  dataset.read(values.data(), member);
  return values;
}

std::vector<std::int64_t> integers(const H5::H5File& file, const char* table, const char* name) {
  return column<std::int64_t>(file, table, name, H5::PredType::NATIVE_INT64);
}

std::vector<double> reals(const H5::H5File& file, const char* table, const char* name) {
  return column<double>(file, table, name, H5::PredType::NATIVE_DOUBLE);
}

// Nearest rank, so that the figure is one the run produced; the lower middle for an even count.
template <class T>
T quantile(std::vector<T> values, double q, T none) {
  if (values.empty()) return none;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::max<std::size_t>(rank, 1) - 1];
}

std::int64_t sum(const std::vector<std::int64_t>& values) {
  return std::accumulate(values.begin(), values.end(), std::int64_t{0});
}

}  // namespace

PointHeadline read_point_headline(const std::filesystem::path& run_file) {
  const H5::H5File file(run_file.string(), H5F_ACC_RDONLY);
  PointHeadline headline;
  headline.kind = meta_text(file, "kind");
  headline.outcome = meta_text(file, "outcome");
  headline.end_ps = meta_integer(file, "end_ps");

  const std::vector<std::int64_t> starts = integers(file, "steps", "start_ps");
  const std::vector<std::int64_t> ends = integers(file, "steps", "end_ps");
  std::vector<std::int64_t> durations(starts.size());
  std::transform(ends.begin(), ends.end(), starts.begin(), durations.begin(), std::minus<>());
  headline.steps = static_cast<std::int64_t>(durations.size());
  headline.step_time_ps = quantile(durations, 0.5, std::int64_t{-1});
  headline.mfu = quantile(reals(file, "steps", "mfu"), 0.5, PointHeadline::kNone);
  headline.tflops_per_gpu =
      quantile(reals(file, "steps", "tflops_per_gpu"), 0.5, PointHeadline::kNone);
  headline.tokens_per_second =
      quantile(reals(file, "steps", "tokens_per_second"), 0.5, PointHeadline::kNone);
  const std::vector<double> goodput = reals(file, "goodput", "goodput");
  if (!goodput.empty()) headline.goodput = goodput.front();

  const std::vector<std::int64_t> fcts = integers(file, "flows", "fct_ps");
  headline.flows = static_cast<std::int64_t>(fcts.size());
  headline.fct_p99_ps = quantile(fcts, 0.99, std::int64_t{-1});
  headline.pauses_sent = sum(integers(file, "port_totals", "pauses_sent"));
  headline.ecn_marked = sum(integers(file, "port_totals", "ecn_marked"));
  headline.dropped_packets = sum(integers(file, "port_totals", "dropped_packets"));
  return headline;
}

}  // namespace lockstep
