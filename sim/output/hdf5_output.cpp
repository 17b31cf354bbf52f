#include "sim/output/hdf5_output.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace lockstep {
namespace {

// Small chunks: a table's last chunk is filled out and compressed whole, which for the many short
// tables of a run cost more than all its rows.
constexpr hsize_t kChunkRows = 1024;
constexpr int kDeflateLevel = 4;

H5::DataType file_type_of(const Column& c) {
  switch (c.type) {
    case ColumnType::kInt64:
      return H5::PredType::STD_I64LE;
    case ColumnType::kUInt64:
      return H5::PredType::STD_U64LE;
    case ColumnType::kFloat64:
      return H5::PredType::IEEE_F64LE;
    case ColumnType::kText: {
      H5::StrType text(H5::PredType::C_S1, c.size);
      text.setStrpad(H5T_STR_NULLPAD);
      return text;
    }
  }
  throw std::logic_error("unknown column type");
}

H5::DataType memory_type_of(const Column& c) {
  switch (c.type) {
    case ColumnType::kInt64:
      return H5::PredType::NATIVE_INT64;
    case ColumnType::kUInt64:
      return H5::PredType::NATIVE_UINT64;
    case ColumnType::kFloat64:
      return H5::PredType::NATIVE_DOUBLE;
    case ColumnType::kText:
      return file_type_of(c);
  }
  throw std::logic_error("unknown column type");
}

// Object headers otherwise record creation and modification times, which would make two identical
// runs differ byte for byte.
H5::DSetCreatPropList untimed_chunked_dataset(hsize_t chunk_rows) {
  H5::DSetCreatPropList properties;
  properties.setChunk(1, &chunk_rows);
  properties.setShuffle();
  properties.setDeflate(kDeflateLevel);
  properties.setFillTime(H5D_FILL_TIME_NEVER);  // every row is written; nothing to pre-fill
  H5Pset_obj_track_times(properties.getId(), 0);
  return properties;
}

// What failed and why, while errno still says why: HDF5's own message does not.
[[noreturn]] void fail_writing(const std::filesystem::path& path,
                               std::string_view doing = "write") {
  const int reason = errno;
  throw OutputError("cannot " + std::string(doing) + " '" + path.string() +
                    "': " + (reason != 0 ? std::strerror(reason) : "HDF5 refused the write"));
}

class Hdf5TableSink final : public TableSink {
 public:
  Hdf5TableSink(H5::H5File& file, const TableLayout& layout, std::filesystem::path path)
      : memory_type_(layout.row_size), path_(std::move(path)) {
    std::size_t packed_size = 0;
    for (const Column& c : layout.columns) packed_size += c.size;
    H5::CompType file_type(packed_size);
    std::size_t packed_offset = 0;
    for (const Column& c : layout.columns) {
      memory_type_.insertMember(c.name, c.offset, memory_type_of(c));
      file_type.insertMember(c.name, packed_offset, file_type_of(c));
      packed_offset += c.size;
    }
    const hsize_t initial = 0;
    const hsize_t unlimited = H5S_UNLIMITED;
    const H5::DataSpace space(1, &initial, &unlimited);
    errno = 0;
    try {
      dataset_ = std::make_unique<H5::DataSet>(
          file.createDataSet(layout.name, file_type, space, untimed_chunked_dataset(kChunkRows)));
    } catch (const H5::Exception&) {
      fail_writing(path_);
    }
  }
  Hdf5TableSink(const Hdf5TableSink&) = delete;
  Hdf5TableSink& operator=(const Hdf5TableSink&) = delete;

  ~Hdf5TableSink() override {
    try {
      dataset_->close();
    } catch (const H5::Exception&) {
      // The write that failed has been reported; a dataset that cannot close is let go rather
      // than closed again (and complained about) by its destructor.
      (void)dataset_.release();
    }
  }

  void write_rows(const std::byte* rows, std::size_t count) override {
    const hsize_t added = count;
    const hsize_t total = rows_ + added;
    errno = 0;
    try {
      dataset_->extend(&total);
      H5::DataSpace file_space = dataset_->getSpace();
      file_space.selectHyperslab(H5S_SELECT_SET, &added, &rows_);
      const H5::DataSpace memory_space(1, &added);
      dataset_->write(rows, memory_type_, memory_space, file_space);
    } catch (const H5::Exception&) {
      fail_writing(path_);
    }
    rows_ = total;
  }

 private:
  H5::CompType memory_type_;
  std::filesystem::path path_;
  std::unique_ptr<H5::DataSet> dataset_;
  hsize_t rows_ = 0;
};

// `path`, named as `shown` in messages; never over a file that exists.
std::unique_ptr<H5::H5File> create_untimed_file(const std::filesystem::path& path,
                                                const std::filesystem::path& shown) {
  H5::Exception::dontPrint();
  errno = 0;
  try {
    return std::make_unique<H5::H5File>(path.string(), H5F_ACC_EXCL);
  } catch (const H5::Exception&) {
    fail_writing(shown, "create");
  }
}

std::unique_ptr<H5::Group> create_untimed_group(H5::H5File& file, const std::string& name) {
  const hid_t group_properties = H5Pcreate(H5P_GROUP_CREATE);
  H5Pset_obj_track_times(group_properties, 0);
  const hid_t id =
      H5Gcreate2(file.getId(), name.c_str(), H5P_DEFAULT, group_properties, H5P_DEFAULT);
  H5Pclose(group_properties);
  if (id < 0) throw std::runtime_error("cannot create group " + name);
  // The C++ object takes a reference of its own, so the creation's is let go: otherwise closing
  // the group would leave it open, and the file with it, until the library shut down at exit,
  // after commit() had already given the file its final name.
  auto group = std::make_unique<H5::Group>(id);
  H5Idec_ref(id);
  return group;
}

H5::DSetCreatPropList untimed_scalar_dataset() {
  H5::DSetCreatPropList properties;
  H5Pset_obj_track_times(properties.getId(), 0);
  return properties;
}

constexpr std::string_view kPartial = ".partial.";

// The temporary name of `final_path` for process `pid`: lockstep's by its form, so that one left by
// a run that was killed is known for what it is.
std::filesystem::path temporary_for(const std::filesystem::path& final_path, pid_t pid) {
  return final_path.string() + std::string(kPartial) + std::to_string(pid);
}

// Removes the temporaries of `final_path` that runs which no longer exist left (killed outright);
// those of a run still going, and every other file, are left alone.
void remove_stale_temporaries(const std::filesystem::path& final_path) {
  const std::filesystem::path directory =
      final_path.parent_path().empty() ? "." : final_path.parent_path();
  const std::string prefix = final_path.filename().string() + std::string(kPartial);
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !entry.is_regular_file(error)) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const auto pid = static_cast<pid_t>(std::stol(digits));
    if (kill(pid, 0) != 0 && errno == ESRCH) std::filesystem::remove(entry.path(), error);
  }
}

// This process's temporary name for `final_path`, once the stale ones are gone.
std::filesystem::path fresh_temporary(const std::filesystem::path& final_path) {
  remove_stale_temporaries(final_path);
  return temporary_for(final_path, getpid());
}

}  // namespace

Hdf5Output::Hdf5Output(std::filesystem::path final_path)
    : final_path_(std::move(final_path)),
      temporary_path_(fresh_temporary(final_path_)),
      file_(create_untimed_file(temporary_path_, final_path_)),
      meta_(create_untimed_group(*file_, "/meta")) {}

Hdf5Output::~Hdf5Output() {
  if (committed_) return;
  try {
    meta_->close();
    file_->close();
  } catch (const H5::Exception&) {
    // The file is being discarded; one whose closing failed must not be closed again.
    (void)meta_.release();
    (void)file_.release();
  }
  std::error_code ignored;
  std::filesystem::remove(temporary_path_, ignored);
}

std::unique_ptr<TableSink> Hdf5Output::open_table(const TableLayout& layout) {
  return std::make_unique<Hdf5TableSink>(*file_, layout, final_path_);
}

void Hdf5Output::write_meta_text(std::string_view name, std::string_view text) {
  // An empty fixed-length string type is invalid in HDF5, so empty text is stored as one NUL.
  H5::StrType type(H5::PredType::C_S1, text.empty() ? 1 : text.size());
  type.setStrpad(H5T_STR_NULLPAD);
  const std::string padded = text.empty() ? std::string(1, '\0') : std::string(text);
  write_meta_scalar(name, type, type, padded.data());
}

void Hdf5Output::write_meta_integer(std::string_view name, std::int64_t value) {
  write_meta_scalar(name, H5::PredType::STD_I64LE, H5::PredType::NATIVE_INT64, &value);
}

void Hdf5Output::write_meta_scalar(std::string_view name, const H5::DataType& file_type,
                                   const H5::DataType& memory_type, const void* value) {
  errno = 0;
  std::unique_ptr<H5::DataSet> dataset;
  try {
    dataset = std::make_unique<H5::DataSet>(meta_->createDataSet(
        std::string(name), file_type, H5::DataSpace(), untimed_scalar_dataset()));
    dataset->write(value, memory_type);
    dataset->close();
  } catch (const H5::Exception&) {
    (void)dataset.release();
    fail_writing(final_path_);
  }
}

void Hdf5Output::commit() {
  errno = 0;
  try {
    meta_->close();
    file_->flush(H5F_SCOPE_GLOBAL);
    file_->close();
  } catch (const H5::Exception&) {
    fail_writing(final_path_);
  }
  std::error_code error;
  std::filesystem::rename(temporary_path_, final_path_, error);
  if (error) {
    throw std::runtime_error("cannot move '" + temporary_path_.string() + "' to '" +
                             final_path_.string() + "': " + error.message());
  }
  committed_ = true;
}

}  // namespace lockstep
