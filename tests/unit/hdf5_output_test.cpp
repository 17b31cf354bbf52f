#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "sim/output/hdf5_output.hpp"

namespace lockstep {
namespace {

struct Row {
  std::int64_t step;
  FixedText<12> kind;
  double load;
};

TableLayout row_layout() {
  return layout<Row>("table", {column("step", &Row::step), column("kind", &Row::kind),
                               column("load", &Row::load)});
}

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "lockstep_hdf5_test";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::filesystem::remove(path);
  return path;
}

void write_run(const std::filesystem::path& path, std::int64_t rows) {
  Hdf5Output out(path);
  out.write_meta_text("scenario", "job: {}\n");
  out.write_meta_integer("seed", 9);
  {
    Table<Row> table(out, row_layout());
    for (std::int64_t i = 0; i < rows; ++i) table.append(Row{i, i % 2 ? "odd" : "even", 0.25});
    table.flush();
  }
  out.commit();
}

std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Files beside `path` whose names start as its temporaries' do.
std::vector<std::filesystem::path> partials_of(const std::filesystem::path& path) {
  std::vector<std::filesystem::path> found;
  for (const auto& entry : std::filesystem::directory_iterator(path.parent_path())) {
    if (entry.path().filename().string().rfind(path.filename().string() + ".partial", 0) == 0) {
      found.push_back(entry.path());
    }
  }
  return found;
}

TEST_CASE("an output that is not committed leaves no file behind") {
  const auto path = scratch("abandoned.h5");
  std::filesystem::path temporary;
  {
    Hdf5Output out(path);
    temporary = out.temporary_path();
    CHECK(temporary == path.string() + ".partial." + std::to_string(getpid()));
    CHECK(std::filesystem::exists(temporary));
    Table<Row> table(out, row_layout());
    table.append(Row{1, "x", 1.0});
    table.flush();
  }
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(partials_of(path).empty());
}

// A user's own file named like a temporary is never touched; one a killed run left (its process is
// gone) is removed by the next run writing the same output.
TEST_CASE("an output removes what killed runs left and nothing of anyone else's") {
  const auto path = scratch("stale.h5");
  for (const auto& old : partials_of(path)) std::filesystem::remove(old);
  const std::filesystem::path users = path.string() + ".partial";
  const std::filesystem::path stale = path.string() + ".partial.999999999";  // beyond pid_max
  const std::filesystem::path running = path.string() + ".partial.1";        // init: alive
  for (const auto& f : {users, stale, running}) std::ofstream(f) << "kept?";
  write_run(path, 3);
  CHECK(std::filesystem::exists(users));
  CHECK_FALSE(std::filesystem::exists(stale));
  CHECK(std::filesystem::exists(running));
  std::filesystem::remove(users);
  std::filesystem::remove(running);
}

TEST_CASE("a committed output holds every row under its final name only") {
  const auto path = scratch("committed.h5");
  write_run(path, 20'000);
  CHECK(std::filesystem::exists(path));
  CHECK(partials_of(path).empty());
  H5::H5File file(path.string(), H5F_ACC_RDONLY);
  H5::DataSet data = file.openDataSet("table");
  hsize_t rows = 0;
  data.getSpace().getSimpleExtentDims(&rows);
  CHECK(rows == 20'000);
  const H5::CompType type = data.getCompType();
  CHECK(type.getNmembers() == 3);
  CHECK(type.getMemberName(1) == "kind");
  // The file type is packed: 8 + 12 + 8 bytes, no padding from the row struct.
  CHECK(type.getSize() == 28);
  std::int64_t seed = 0;
  file.openDataSet("/meta/seed").read(&seed, H5::PredType::NATIVE_INT64);
  CHECK(seed == 9);
}

TEST_CASE("commit closes the file before giving it its final name") {
  const auto path = scratch("closed.h5");
  write_run(path, 100);
  // No file, group or dataset is left open, so nothing is written to this one after the rename.
  // (Datatypes are not counted: the library's own are always open.)
  constexpr unsigned kFileObjects = H5F_OBJ_FILE | H5F_OBJ_GROUP | H5F_OBJ_DATASET | H5F_OBJ_ATTR;
  CHECK(H5Fget_obj_count(H5F_OBJ_ALL, kFileObjects) == 0);
}

TEST_CASE("the same content written twice gives byte-identical files") {
  const auto a = scratch("twice_a.h5");
  const auto b = scratch("twice_b.h5");
  write_run(a, 10'000);
  write_run(b, 10'000);
  CHECK(file_bytes(a) == file_bytes(b));
}

TEST_CASE("an output in a missing directory is refused with its name") {
  CHECK_THROWS_WITH(Hdf5Output(std::filesystem::path("/nonexistent/dir/run.h5")),
                    "cannot create '/nonexistent/dir/run.h5': No such file or directory");
}

}  // namespace
}  // namespace lockstep
