// The run's output file. Tables become chunked, compressed HDF5 datasets of a compound type (one
// field per column, so h5py hands pandas a structured array); /meta holds what reproduces the run.
// The file is written under a temporary name (OUT.h5.partial.PID, created afresh, never over an
// existing file) and renamed only by commit(), so an interrupted or failed run never leaves a file
// that looks complete; without commit() the temporary file is removed, and one that a killed run
// left is removed by the next run writing the same output. Objects are created without timestamps
// so that one scenario and seed give byte-identical files.
#pragma once

#include <H5Cpp.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "sim/core/table.hpp"

namespace lockstep {

// Writing the output failed: the message names the file and what the system said. The file is
// removed as its Hdf5Output goes, but HDF5, whose file could not be closed, would crash closing it
// again when the program exits: a program that catches this should leave with std::_Exit.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Hdf5Output final : public RecordBackend {
 public:
  // Creates the temporary file beside `final_path`. Throws OutputError if it cannot; so do writes
  // and commit() that fail (a full disk, a file size limit), naming the file and the reason.
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
  // One scalar dataset of /meta, written and closed; a dataset whose write or close fails is let
  // go rather than closed again, and complained about, by its destructor.
  void write_meta_scalar(std::string_view name, const H5::DataType& file_type,
                         const H5::DataType& memory_type, const void* value);

  std::filesystem::path final_path_;
  std::filesystem::path temporary_path_;
  // Held by pointer so that a file whose closing failed (a full disk) is let go rather than closed
  // a second time by its destructor, which HDF5 does not survive.
  std::unique_ptr<H5::H5File> file_;
  std::unique_ptr<H5::Group> meta_;
  bool committed_ = false;
};

}  // namespace lockstep
