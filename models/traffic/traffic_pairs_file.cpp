#include "models/traffic/traffic_pairs_file.hpp"

#include <charconv>
#include <cstdint>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

namespace lockstep::traffic {
namespace {

std::string_view trim(std::string_view text) {
  constexpr std::string_view kBlank = " \t";
  const std::size_t begin = text.find_first_not_of(kBlank);
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(kBlank) - begin + 1);
}

// A whole field as a non-negative endpoint id: digits only, no sign, fitting in 32 bits.
std::optional<std::int32_t> endpoint_id(std::string_view field) {
  field = trim(field);
  if (field.empty() || field.front() < '0' || field.front() > '9') return {};
  std::int32_t value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc() || end != field.data() + field.size()) return {};
  return value;
}

[[noreturn]] void reject_line(std::string_view origin, std::int64_t number,
                              std::string_view content, const std::string& why) {
  throw std::invalid_argument(std::string(origin) + ":" + std::to_string(number) + ": " + why +
                              ", in \"" + std::string(content) + "\"");
}

}  // namespace

std::vector<FlowSpec> from_pairs(std::istream& lines, std::string_view origin, Bytes size) {
  if (size <= Bytes(0)) {
    throw std::invalid_argument(std::string(origin) + ": flow size must be at least 1 B, got " +
                                std::to_string(size.count()) + " B");
  }
  std::vector<FlowSpec> flows;
  std::string line;
  for (std::int64_t number = 1; std::getline(lines, line); ++number) {
    std::string_view text = line;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    const std::string_view content = trim(text);
    if (content.empty() || content.front() == '#') continue;

    const std::size_t arrow = content.find("->");
    if (arrow == std::string_view::npos) {
      reject_line(origin, number, content, "expected \"source->destination\"");
    }
    const auto source = endpoint_id(content.substr(0, arrow));
    const auto destination = endpoint_id(content.substr(arrow + 2));
    if (!source || !destination) {
      reject_line(origin, number, content,
                  "expected two endpoint ids (non-negative integers) around \"->\"");
    }
    if (*source == *destination) {
      reject_line(origin, number, content,
                  "endpoint " + std::to_string(*source) + " sends to itself");
    }
    FlowSpec& flow = flows.emplace_back();
    flow.source = *source;
    flow.destination = *destination;
    flow.size = size;
  }
  if (lines.bad()) throw std::invalid_argument(std::string(origin) + ": read error");
  return flows;
}

std::vector<FlowSpec> from_pairs_file(const std::filesystem::path& path, Bytes size) {
  std::ifstream file(path);
  if (!file) throw std::invalid_argument(path.string() + ": cannot open the pairs file");
  return from_pairs(file, path.string(), size);
}

}  // namespace lockstep::traffic
