#include "sim/sweep/sweep_plan.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "sim/scenario/decode_context.hpp"
#include "sim/scenario/duplicate_keys.hpp"
#include "sim/scenario/nearest_word.hpp"

namespace lockstep {
namespace {

const std::vector<std::string> kSweepKeys = {"base", "set", "vary", "zip", "seeds"};

// A value as `--set` takes it back: YAML in flow style, quoted only where YAML needs it.
std::string as_override_text(const YAML::Node& node) {
  YAML::Emitter emitter;
  emitter << YAML::Flow << node;
  return emitter.c_str();
}

// "400Gbps" -> 400 and "Gbps"; a bare number has no unit.
struct NumberWithUnit {
  double number = 0;
  std::string unit;
};

std::optional<NumberWithUnit> split_number(const std::string& text) {
  NumberWithUnit split;
  const char* end = text.data() + text.size();
  const auto [rest, error] = std::from_chars(text.data(), end, split.number);
  if (error != std::errc() || !std::isfinite(split.number)) return std::nullopt;
  split.unit.assign(rest, end);
  return split;
}

std::string format_number(double value, const std::string& unit) {
  if (std::abs(value) < 9.0e15 && value == std::round(value))
    return std::to_string(static_cast<std::int64_t>(value)) + unit;
  std::array<char, 32> digits{};
  const auto [end, error] = std::to_chars(digits.data(), digits.data() + digits.size(), value);
  return std::string(digits.data(), end) + unit;
}

class SweepReader {
 public:
  SweepReader(const std::filesystem::path& path, Diagnostics& diagnostics)
      : path_(path), context_(path.string(), diagnostics) {}

  std::optional<SweepPlan> read(const YAML::Node& root) {
    if (!root.IsMap()) {
      context_.error(root, "", "a sweep file is a mapping with `base` and `vary`");
      return std::nullopt;
    }
    report_duplicate_keys(root, context_);
    for (const auto& entry : root) {
      const std::string key = entry.first.Scalar();
      if (std::find(kSweepKeys.begin(), kSweepKeys.end(), key) != kSweepKeys.end()) continue;
      const std::optional<std::string> near = nearest_word(key, kSweepKeys);
      context_.error(entry.first, key,
                     "unknown key" + (near ? "; did you mean `" + *near + "`?"
                                           : "; a sweep file has base, set, vary, zip and seeds"));
    }
    SweepPlan plan;
    read_base(root, plan);
    const std::vector<SweepSetting> fixed = read_fixed(root["set"]);
    const std::vector<Dimension> dimensions = read_dimensions(root, plan);
    const std::vector<std::optional<std::uint64_t>> seeds = read_seeds(root["seeds"], plan);
    if (context_.error_count() != 0) return std::nullopt;

    std::size_t count = seeds.size();
    for (const Dimension& dimension : dimensions) {
      if (count > kMostSweepPoints / dimension.length) {
        context_.error(root["vary"], "vary",
                       "more than " + std::to_string(kMostSweepPoints) +
                           " points: check the ranges' steps, or split the study");
        return std::nullopt;
      }
      count *= dimension.length;
    }
    for (std::size_t index = 0; index < count; ++index) {
      SweepPoint point{index, fixed, seeds[index % seeds.size()]};
      // The first dimension varies slowest, the seed fastest: a point's repetitions sit together.
      std::size_t rest = index / seeds.size();
      std::vector<std::size_t> positions(dimensions.size());
      for (std::size_t d = dimensions.size(); d-- > 0;) {
        positions[d] = rest % dimensions[d].length;
        rest /= dimensions[d].length;
      }
      for (std::size_t d = 0; d < dimensions.size(); ++d) {
        for (const auto& [key, values] : dimensions[d].keys)
          point.settings.push_back({key, values[positions[d]]});
      }
      plan.points.push_back(std::move(point));
    }
    return plan;
  }

 private:
  // Keys varied together (one `zip` group, or one key alone) and their values, row by row.
  struct Dimension {
    std::vector<std::pair<std::string, std::vector<std::string>>> keys;
    std::size_t length = 0;
  };

  void read_base(const YAML::Node& root, SweepPlan& plan) {
    const YAML::Node base = root["base"];
    if (!base) {
      context_.error(root, "base", "missing: the scenario the sweep varies");
      return;
    }
    if (!base.IsScalar() || base.Scalar().empty()) {
      context_.error(base, "base", "a scenario file's path, relative to the sweep file");
      return;
    }
    std::filesystem::path scenario(base.Scalar());
    if (scenario.is_relative()) scenario = path_.parent_path() / scenario;
    plan.base = std::filesystem::absolute(scenario).lexically_normal();
    std::error_code error;
    if (!std::filesystem::is_regular_file(plan.base, error))
      context_.error(base, "base", "no scenario file at " + plan.base.string());
  }

  std::vector<SweepSetting> read_fixed(const YAML::Node& set) {
    std::vector<SweepSetting> fixed;
    if (!set) return fixed;
    if (!set.IsMap()) {
      context_.error(set, "set", "a mapping of scenario key to the value every point gives it");
      return fixed;
    }
    for (const auto& entry : set)
      fixed.push_back({entry.first.Scalar(), as_override_text(entry.second)});
    return fixed;
  }

  std::vector<Dimension> read_dimensions(const YAML::Node& root, SweepPlan& plan) {
    const YAML::Node vary = root["vary"];
    if (!vary) {
      context_.error(root, "vary", "missing: the scenario keys to vary and their values");
      return {};
    }
    if (!vary.IsMap() || vary.size() == 0) {
      context_.error(vary, "vary", "a mapping of scenario key to a list of values or a range");
      return {};
    }
    std::map<std::string, std::vector<std::string>> values;
    for (const auto& entry : vary) {
      const std::string key = entry.first.Scalar();
      plan.parameters.push_back(key);
      values[key] = read_values(entry.second, "vary." + key);
    }
    const std::map<std::string, std::size_t> group_of = read_zip(root["zip"], values);

    std::vector<Dimension> dimensions;
    std::map<std::size_t, std::size_t> dimension_of_group;
    for (const std::string& key : plan.parameters) {
      const auto grouped = group_of.find(key);
      Dimension* dimension = nullptr;
      if (grouped != group_of.end() && dimension_of_group.contains(grouped->second)) {
        dimension = &dimensions[dimension_of_group[grouped->second]];
      } else {
        if (grouped != group_of.end()) dimension_of_group[grouped->second] = dimensions.size();
        dimension = &dimensions.emplace_back();
      }
      dimension->keys.emplace_back(key, values[key]);
      dimension->length = values[key].size();
    }
    if (std::any_of(dimensions.begin(), dimensions.end(),
                    [](const Dimension& d) { return d.length == 0; }))
      return {};
    return dimensions;
  }

  std::vector<std::string> read_values(const YAML::Node& node, const std::string& key_path) {
    if (node.IsSequence()) {
      if (node.size() == 0)
        context_.error(node, key_path, "an empty list: give at least one value");
      std::vector<std::string> values;
      for (const auto& value : node) values.push_back(as_override_text(value));
      return values;
    }
    if (node.IsMap()) return read_range(node, key_path);
    context_.error(node, key_path,
                   "a list of values, or a range {from, to, step} or {from, to, factor}");
    return {};
  }

  // {from: 100Gbps, to: 400Gbps, step: 100Gbps} or {from: 1, to: 64, factor: 2}, both ends
  // included; the unit, if any, is the same on every bound.
  std::vector<std::string> read_range(const YAML::Node& node, const std::string& key_path) {
    for (const auto& entry : node) {
      const std::string key = entry.first.Scalar();
      if (key != "from" && key != "to" && key != "step" && key != "factor")
        context_.error(entry.first, key_path + "." + key,
                       "unknown key; a range has from, to and step or factor");
    }
    const YAML::Node step_node = node["step"];
    const YAML::Node factor_node = node["factor"];
    if (!node["from"] || !node["to"] || (!step_node == !factor_node)) {
      context_.error(node, key_path, "a range needs from, to, and one of step or factor");
      return {};
    }
    const auto bound = [&](const YAML::Node& value,
                           const std::string& name) -> std::optional<NumberWithUnit> {
      std::optional<NumberWithUnit> split =
          value.IsScalar() ? split_number(value.Scalar()) : std::nullopt;
      if (!split) context_.error(value, key_path + "." + name, "a number, with a unit or not");
      return split;
    };
    const std::optional<NumberWithUnit> from = bound(node["from"], "from");
    const std::optional<NumberWithUnit> to = bound(node["to"], "to");
    const std::optional<NumberWithUnit> by =
        bound(step_node ? step_node : factor_node, step_node ? "step" : "factor");
    if (!from || !to || !by) return {};
    if (from->unit != to->unit || (step_node && by->unit != from->unit)) {
      context_.error(node, key_path, "from, to and step must carry the same unit");
      return {};
    }
    if (factor_node && !by->unit.empty()) {
      context_.error(factor_node, key_path + ".factor", "a factor is a plain number");
      return {};
    }
    std::vector<std::string> values;
    const double span = to->number - from->number;
    // A bound reached up to rounding is included: 0.1 + 2 x 0.1 must give 0.3.
    const double slack = 1e-9 * std::max(std::abs(from->number), std::abs(to->number));
    if (step_node) {
      if (by->number == 0 || span * by->number < 0) {
        context_.error(step_node, key_path + ".step", "the step must lead from `from` to `to`");
        return {};
      }
      for (std::size_t i = 0; values.size() <= kMostSweepPoints; ++i) {
        const double value = from->number + static_cast<double>(i) * by->number;
        if (std::abs(value - from->number) > std::abs(span) + slack) break;
        values.push_back(format_number(value, from->unit));
      }
    } else {
      const bool growing = span >= 0;
      if (from->number <= 0 || to->number <= 0 || by->number <= 0 || by->number == 1 ||
          (by->number > 1) != growing) {
        context_.error(factor_node, key_path + ".factor",
                       "positive bounds and a factor that leads from `from` to `to`");
        return {};
      }
      for (double value = from->number; values.size() <= kMostSweepPoints; value *= by->number) {
        if (growing ? value > to->number + slack : value < to->number - slack) break;
        values.push_back(format_number(value, from->unit));
      }
    }
    if (values.size() > kMostSweepPoints)
      context_.error(node, key_path, "more than " + std::to_string(kMostSweepPoints) + " values");
    return values;
  }

  // Which zip group each zipped key belongs to. Keys of one group must have as many values.
  std::map<std::string, std::size_t> read_zip(
      const YAML::Node& zip, const std::map<std::string, std::vector<std::string>>& values) {
    std::map<std::string, std::size_t> group_of;
    if (!zip) return group_of;
    if (!zip.IsSequence()) {
      context_.error(zip, "zip", "a list of groups of `vary` keys that move together");
      return group_of;
    }
    for (std::size_t g = 0; g < zip.size(); ++g) {
      const YAML::Node group = zip[g];
      const std::string group_path = "zip[" + std::to_string(g) + "]";
      if (!group.IsSequence() || group.size() < 2) {
        context_.error(group, group_path, "a list of at least two `vary` keys");
        continue;
      }
      std::optional<std::size_t> length;
      for (const auto& member : group) {
        const std::string key = member.IsScalar() ? member.Scalar() : "";
        const auto varied = values.find(key);
        if (varied == values.end()) {
          context_.error(member, group_path, "`" + key + "` is not a key under `vary`");
          continue;
        }
        if (!group_of.emplace(key, g).second) {
          context_.error(member, group_path, "`" + key + "` is already in a zip group");
          continue;
        }
        if (length && *length != varied->second.size()) {
          context_.error(member, group_path,
                         "`" + key + "` has " + std::to_string(varied->second.size()) +
                             " values where the group's first key has " + std::to_string(*length) +
                             ": zipped keys move together");
        }
        length = length.value_or(varied->second.size());
      }
    }
    return group_of;
  }

  std::vector<std::optional<std::uint64_t>> read_seeds(const YAML::Node& node, SweepPlan& plan) {
    if (!node) return {std::nullopt};
    plan.seeded = true;
    const auto seed_value = [&](const YAML::Node& value) -> std::optional<std::uint64_t> {
      std::uint64_t seed = 0;
      const std::string text = value.IsScalar() ? value.Scalar() : "";
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seed);
      if (error != std::errc() || end != text.data() + text.size()) {
        context_.error(value, "seeds", "a seed is a non-negative integer");
        return std::nullopt;
      }
      return seed;
    };
    std::vector<std::optional<std::uint64_t>> seeds;
    if (node.IsScalar()) {
      // `seeds: N` repeats every point with seeds 1 to N.
      const std::optional<std::uint64_t> count = seed_value(node);
      if (count && (*count == 0 || *count > kMostSweepPoints)) {
        context_.error(
            node, "seeds",
            "a count from 1 to " + std::to_string(kMostSweepPoints) + ", or a list of seeds");
        return {std::nullopt};
      }
      for (std::uint64_t seed = 1; count && seed <= *count; ++seed) seeds.emplace_back(seed);
    } else if (node.IsSequence() && node.size() > 0) {
      std::set<std::uint64_t> seen;
      for (const auto& value : node) {
        const std::optional<std::uint64_t> seed = seed_value(value);
        if (seed && !seen.insert(*seed).second)
          context_.error(value, "seeds", "seed " + std::to_string(*seed) + " is listed twice");
        seeds.push_back(seed);
      }
    } else {
      context_.error(node, "seeds", "a count (seeds 1 to N) or a list of seeds");
    }
    if (seeds.empty()) seeds.emplace_back();
    return seeds;
  }

  std::filesystem::path path_;
  DecodeContext context_;
};

}  // namespace

const std::string& SweepPlan::value_of(const SweepPoint& point, const std::string& parameter) {
  // The varied keys follow the fixed ones, so the last setting of a key is its varied value.
  const auto found = std::find_if(point.settings.rbegin(), point.settings.rend(),
                                  [&](const SweepSetting& s) { return s.key == parameter; });
  return found->value;
}

SweepPlanLoad load_sweep_file(const std::filesystem::path& path) {
  SweepPlanLoad result;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    result.diagnostics.add(path.string(), "", "no sweep file here (or not a regular file)");
    return result;
  }
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    result.diagnostics.add(path.string(), "", "cannot read the sweep file");
    return result;
  }
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::ParserException& e) {
    result.diagnostics.add(path.string() + ":" + std::to_string(e.mark.line + 1) + ":" +
                               std::to_string(e.mark.column + 1),
                           "", e.msg);
    return result;
  }
  SweepReader reader(path, result.diagnostics);
  std::optional<SweepPlan> plan = reader.read(root);
  if (result.diagnostics.empty()) result.plan = std::move(plan);
  return result;
}

}  // namespace lockstep
