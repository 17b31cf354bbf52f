// The run's output file. Tables become chunked, compressed HDF5 datasets of a compound type (one
// field per column, so h5py hands pandas a structured array); /meta holds what reproduces the run.
// The file is written under a temporary name and renamed only by commit(), so an interrupted or
// failed run never leaves a file that looks complete; without commit() the temporary file is
// removed. Objects are created without timestamps so that one scenario and seed give byte-identical
// files.
#pragma once

#include <H5Cpp.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string_view>

#include "sim/core/table.hpp"

namespace lockstep {

class Hdf5Output final : public RecordBackend {
 public:
  // Creates the temporary file beside `final_path`. Throws std::runtime_error if it cannot.
  explicit Hdf5Output(std::filesystem::path final_path);
  ~Hdf5Output() override;
  Hdf5Output(const Hdf5Output&) = delete;
  Hdf5Output& operator=(const Hdf5Output&) = delete;

  [[nodiscard]] std::unique_ptr<TableSink> open_table(const TableLayout& layout) override;

  void write_meta_text(std::string_view name, std::string_view text);
  void write_meta_integer(std::string_view name, std::int64_t value);

  // Every table must have been flushed and destroyed before this; then the file is closed and moved
  // to its final name.
  void commit();

  [[nodiscard]] const std::filesystem::path& final_path() const { return final_path_; }
  [[nodiscard]] const std::filesystem::path& temporary_path() const { return temporary_path_; }

 private:
  std::filesystem::path final_path_;
  std::filesystem::path temporary_path_;
  H5::H5File file_;
  H5::Group meta_;
  bool committed_ = false;
};

}  // namespace lockstep
