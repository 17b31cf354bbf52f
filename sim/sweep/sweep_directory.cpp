#include "sim/sweep/sweep_directory.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace lockstep {

SweepDirectory::SweepDirectory(std::filesystem::path root, std::size_t points)
    : root_(std::move(root)), digits_(4) {
  for (std::size_t widest = 10'000; widest < points; widest *= 10) ++digits_;
}

std::filesystem::path SweepDirectory::stem(std::size_t index) const {
  std::string number = std::to_string(index);
  number.insert(
      0, static_cast<std::size_t>(digits_) - std::min<std::size_t>(digits_, number.size()), '0');
  return root_ / "points" / number;
}

std::filesystem::path SweepDirectory::point_file(std::size_t index) const {
  return stem(index).replace_extension(".h5");
}
std::filesystem::path SweepDirectory::log_file(std::size_t index) const {
  return stem(index).replace_extension(".log");
}
std::filesystem::path SweepDirectory::failure_file(std::size_t index) const {
  return stem(index).replace_extension(".failed");
}

PointState SweepDirectory::state(std::size_t index) const {
  std::error_code error;
  if (std::filesystem::is_regular_file(point_file(index), error)) return PointState::kDone;
  if (std::filesystem::is_regular_file(failure_file(index), error)) return PointState::kFailed;
  return PointState::kPending;
}

std::string SweepDirectory::failure_message(std::size_t index) const {
  std::ifstream in(failure_file(index));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string manifest_text(const SweepPlan& plan) {
  std::ostringstream text;
  text << "base " << plan.base.string() << "\n";
  for (const SweepPoint& point : plan.points) {
    text << point.index;
    for (const SweepSetting& setting : point.settings)
      text << " --set " << setting.key << "=" << setting.value;
    if (point.seed) text << " --seed " << *point.seed;
    text << "\n";
  }
  return text.str();
}

void write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::path temporary = path;
  temporary += ".partial." + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      const int reason = errno;
      std::filesystem::remove(temporary);
      throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(reason));
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary);
    throw std::runtime_error("cannot write " + path.string() + ": " + error.message());
  }
}

}  // namespace lockstep
