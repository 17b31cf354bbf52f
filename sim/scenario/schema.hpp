// The declared shape of one config section: each key with its type, default and meaning, bound to a
// member of the plain config struct it fills. One declaration serves three purposes so they cannot
// drift apart: decoding YAML (with every problem collected), writing the resolved scenario back
// out, and the key table that scenarios/README.md must match (a test compares them).
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <bitset>
#include <cctype>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/scenario/codec.hpp"
#include "sim/scenario/decode_context.hpp"
#include "sim/scenario/nearest_word.hpp"

namespace lockstep {

// One row of the documentation table.
struct KeyDoc {
  std::string path;  // "job.network.bandwidth"; list items as "job.stragglers[].rank"
  std::string type;
  std::string default_text;  // "required", "none" (optional, off when absent) or the default value
  std::string description;

  auto operator<=>(const KeyDoc&) const = default;
};

template <class T>
using Constraint = std::function<std::optional<std::string>(const T&)>;

template <class T>
[[nodiscard]] Constraint<T> at_least(T minimum) {
  return [minimum](const T& v) -> std::optional<std::string> {
    if (v < minimum) return "must be at least " + Codec<T>::format(minimum);
    return std::nullopt;
  };
}

template <class T>
[[nodiscard]] Constraint<T> above(T minimum) {
  return [minimum](const T& v) -> std::optional<std::string> {
    if (!(minimum < v)) return "must be more than " + Codec<T>::format(minimum);
    return std::nullopt;
  };
}

template <class T>
[[nodiscard]] Constraint<T> between(T low, T high) {
  return [low, high](const T& v) -> std::optional<std::string> {
    if (v < low || v > high) {
      return "must lie between " + Codec<T>::format(low) + " and " + Codec<T>::format(high);
    }
    return std::nullopt;
  };
}

// A share of a whole that cannot be nothing: a clock factor.
[[nodiscard]] inline Constraint<double> fraction_above_zero() {
  return [](const double& v) -> std::optional<std::string> {
    if (!(v > 0.0 && v <= 1.0)) return "must lie in (0, 1], e.g. 80%";
    return std::nullopt;
  };
}

namespace detail {
template <class T>
struct Unwrapped {
  using type = T;
  static constexpr bool kOptional = false;
};
template <class T>
struct Unwrapped<std::optional<T>> {
  using type = T;
  static constexpr bool kOptional = true;
};
}  // namespace detail

inline std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

template <class Config>
class Schema {
 public:
  // Reports a problem that involves several keys, against one of them ("ranks", "items[2].rank").
  class Checker {
   public:
    Checker(const YAML::Node& mapping, std::string path, DecodeContext& context)
        : mapping_(mapping), path_(std::move(path)), context_(context) {}
    void error(const std::string& relative_path, std::string message) const {
      context_.error(locate(relative_path), child_path(path_, relative_path), std::move(message));
    }

   private:
    // The deepest node along the path that the file defines.
    [[nodiscard]] YAML::Node locate(const std::string& relative_path) const {
      YAML::Node found = mapping_;
      std::size_t i = 0;
      while (i < relative_path.size()) {
        const std::size_t end = relative_path.find_first_of(".[]", i);
        const std::string token = relative_path.substr(i, end - i);
        i = end == std::string::npos ? relative_path.size() : end + 1;
        if (token.empty()) continue;
        const YAML::Node& current = found;
        const bool is_index = std::isdigit(static_cast<unsigned char>(token[0])) != 0;
        const YAML::Node next = current.IsMap() ? current[token]
                                : current.IsSequence() && is_index
                                    ? current[std::stoul(token)]
                                    : YAML::Node(YAML::NodeType::Undefined);
        if (!next.IsDefined()) break;
        found.reset(next);
      }
      return found;
    }

    YAML::Node mapping_;  // a handle: copying it shares the document
    std::string path_;
    DecodeContext& context_;
  };

  // A scalar key. `default_text` is parsed like a value from a file; nullopt makes the key
  // required, unless T is std::optional, where absence means "none".
  template <class T>
  Schema& value(std::string name, T Config::*member, std::optional<std::string> default_text,
                std::string description,
                Constraint<typename detail::Unwrapped<T>::type> constraint = {}) {
    using Value = typename detail::Unwrapped<T>::type;
    constexpr bool kOptional = detail::Unwrapped<T>::kOptional;
    Field f;
    f.name = name;
    f.decode = [=](const YAML::Node& node, const YAML::Node& parent, const std::string& path,
                   Config& out, DecodeContext& context) {
      const bool present = node.IsDefined() && !node.IsNull();
      if (!present && !default_text) {
        if constexpr (!kOptional) context.error(parent, path, "required key is missing");
        return;
      }
      if (present && !node.IsScalar()) {
        context.error(node, path,
                      "expected a single value (" + std::string(Codec<Value>::kTypeName) + ")");
        return;
      }
      const Parsed<Value> parsed = Codec<Value>::parse(present ? node.Scalar() : *default_text);
      if (!parsed) {
        context.error(present ? node : parent, path, parsed.error);
        return;
      }
      if (constraint) {
        if (std::optional<std::string> problem = constraint(*parsed.value)) {
          context.error(present ? node : parent, path, *problem);
          return;
        }
      }
      out.*member = *parsed.value;
    };
    f.encode = [=](const Config& config, YAML::Emitter& emitter) {
      if constexpr (kOptional) {
        if (!(config.*member)) return;
        emitter << YAML::Key << name << YAML::Value << Codec<Value>::format(*(config.*member));
      } else {
        emitter << YAML::Key << name << YAML::Value << Codec<Value>::format(config.*member);
      }
    };
    f.document = [=](const std::string& path, std::vector<KeyDoc>& out) {
      out.push_back(KeyDoc{path, std::string(Codec<Value>::kTypeName),
                           default_text ? *default_text : (kOptional ? "none" : "required"),
                           description});
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  // A key whose value is one of a fixed set of words; an empty `default_text` makes it required.
  template <class E>
  Schema& choice(std::string name, E Config::*member,
                 std::vector<std::pair<std::string, E>> options, std::string default_text,
                 std::string description) {
    Field f;
    f.name = name;
    f.decode = [=](const YAML::Node& node, const YAML::Node& parent, const std::string& path,
                   Config& out, DecodeContext& context) {
      const bool present = node.IsDefined() && !node.IsNull();
      if (!present && default_text.empty()) {
        context.error(parent, path, "required key is missing: one of " + join(words_of(options)));
        return;
      }
      if (present && !node.IsScalar()) {
        context.error(node, path, "expected one of " + join(words_of(options)));
        return;
      }
      const std::string word = present ? node.Scalar() : default_text;
      std::vector<std::string> words;
      for (const auto& [option, value] : options) {
        if (option == word) {
          out.*member = value;
          return;
        }
        words.push_back(option);
      }
      std::string message = "'" + word + "' is not one of " + join(words);
      if (std::optional<std::string> near = nearest_word(word, words)) {
        message += " (did you mean '" + *near + "'?)";
      }
      context.error(node, path, std::move(message));
    };
    f.encode = [=](const Config& config, YAML::Emitter& emitter) {
      for (const auto& [option, value] : options) {
        if (value == config.*member) emitter << YAML::Key << name << YAML::Value << option;
      }
    };
    const std::string type = "one of " + join(words_of(options), ", ");
    f.document = [=](const std::string& path, std::vector<KeyDoc>& out) {
      out.push_back(
          KeyDoc{path, type, default_text.empty() ? "required" : default_text, description});
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  // A nested mapping; absent means all of its defaults.
  template <class Sub>
  Schema& section(std::string name, Sub Config::*member, Schema<Sub> sub_schema,
                  std::string description) {
    const auto sub = share(std::move(sub_schema));
    Field f;
    f.name = name;
    f.decode = [=](const YAML::Node& node, const YAML::Node& parent, const std::string& path,
                   Config& out, DecodeContext& context) {
      sub->decode(node.IsDefined() && !node.IsNull() ? node : YAML::Node(), parent, path,
                  out.*member, context);
    };
    f.encode = [=](const Config& config, YAML::Emitter& emitter) {
      emitter << YAML::Key << name << YAML::Value;
      sub->encode(config.*member, emitter);
    };
    f.document = [=](const std::string& path, std::vector<KeyDoc>& out) {
      out.push_back(KeyDoc{path, "section", "", description});
      sub->document(path, out);
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  // A nested mapping that is there only when the scenario gives it (a feature that is off unless
  // asked for); given empty, it takes all of its defaults.
  template <class Sub>
  Schema& optional_section(std::string name, std::optional<Sub> Config::*member,
                           Schema<Sub> sub_schema, std::string description) {
    const auto sub = share(std::move(sub_schema));
    Field f;
    f.name = name;
    f.decode = [=](const YAML::Node& node, const YAML::Node&, const std::string& path, Config& out,
                   DecodeContext& context) {
      (out.*member).reset();
      if (!node.IsDefined()) return;
      Sub value{};
      sub->decode(node.IsNull() ? YAML::Node() : node, node, path, value, context);
      out.*member = std::move(value);
    };
    f.encode = [=](const Config& config, YAML::Emitter& emitter) {
      if (!(config.*member)) return;
      emitter << YAML::Key << name << YAML::Value;
      sub->encode(*(config.*member), emitter);
    };
    f.document = [=](const std::string& path, std::vector<KeyDoc>& out) {
      out.push_back(KeyDoc{path, "section", "none", description});
      sub->document(path, out);
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  // A set of small indices written as a list, e.g. [3] or [3, 4]; each must lie in [0, limit).
  template <std::size_t N>
  Schema& index_set(std::string name, std::bitset<N> Config::*member, std::string default_text,
                    std::string description) {
    Field f;
    f.name = name;
    f.decode = [=](const YAML::Node& node, const YAML::Node&, const std::string& path, Config& out,
                   DecodeContext& context) {
      const YAML::Node list = node.IsDefined() && !node.IsNull() ? node : YAML::Load(default_text);
      if (!list.IsSequence()) {
        context.error(node, path, "expected a list of indices, e.g. [3]");
        return;
      }
      std::bitset<N> set;
      for (std::size_t i = 0; i < list.size(); ++i) {
        const Parsed<std::int64_t> index =
            list[i].IsScalar() ? Codec<std::int64_t>::parse(list[i].Scalar())
                               : Parsed<std::int64_t>{std::nullopt, "expected a whole number"};
        if (!index || *index.value < 0 || *index.value >= static_cast<std::int64_t>(N)) {
          context.error(list[i], path + "[" + std::to_string(i) + "]",
                        index ? "must lie between 0 and " + std::to_string(N - 1) : index.error);
          continue;
        }
        set.set(static_cast<std::size_t>(*index.value));
      }
      out.*member = set;
    };
    f.encode = [=](const Config& config, YAML::Emitter& emitter) {
      emitter << YAML::Key << name << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (std::size_t i = 0; i < N; ++i) {
        if ((config.*member).test(i)) emitter << i;
      }
      emitter << YAML::EndSeq;
    };
    f.document = [=](const std::string& path, std::vector<KeyDoc>& out) {
      out.push_back(KeyDoc{path, "list of indices", default_text, description});
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  // A list of ranks (whole numbers from 0), e.g. [9] or [0, 9]; absent means empty. Whether each
  // exists is for a check that knows the cluster.
  Schema& rank_list(std::string name, std::vector<std::int32_t> Config::*member,
                    std::string description) {
    Field f;
    f.name = name;
    f.decode = [=](const YAML::Node& node, const YAML::Node&, const std::string& path, Config& out,
                   DecodeContext& context) {
      (out.*member).clear();
      if (!node.IsDefined() || node.IsNull()) return;
      if (!node.IsSequence()) {
        context.error(node, path, "expected a list of ranks, e.g. [9]");
        return;
      }
      decode_ranks(node, path, out.*member, context);
    };
    f.encode = [=](const Config& config, YAML::Emitter& emitter) {
      emitter << YAML::Key << name << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (const std::int32_t rank : config.*member) emitter << rank;
      emitter << YAML::EndSeq;
    };
    f.document = [=](const std::string& path, std::vector<KeyDoc>& out) {
      out.push_back(KeyDoc{path, "list of ranks", "empty", description});
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  // A key that is either one of a fixed set of words or a list of ranks, which then means
  // `list_kind` (e.g. `placement: packed` or `placement: [0, 8, 1, 9]`).
  template <class E>
  Schema& words_or_ranks(std::string name, E Config::*kind,
                         std::vector<std::int32_t> Config::*ranks,
                         std::vector<std::pair<std::string, E>> words, E list_kind,
                         std::string default_text, std::string description) {
    Field f;
    f.name = name;
    f.decode = [=](const YAML::Node& node, const YAML::Node&, const std::string& path, Config& out,
                   DecodeContext& context) {
      (out.*ranks).clear();
      const bool present = node.IsDefined() && !node.IsNull();
      if (present && node.IsSequence()) {
        out.*kind = list_kind;
        decode_ranks(node, path, out.*ranks, context);
        return;
      }
      if (present && !node.IsScalar()) {
        context.error(node, path, "expected one of " + join(words_of(words)) + " or a list");
        return;
      }
      const std::string word = present ? node.Scalar() : default_text;
      for (const auto& [option, value] : words) {
        if (option == word) {
          out.*kind = value;
          return;
        }
      }
      std::string message =
          "'" + word + "' is not one of " + join(words_of(words)) + ", nor a list of GPUs";
      if (std::optional<std::string> near = nearest_word(word, words_of(words))) {
        message += " (did you mean '" + *near + "'?)";
      }
      context.error(node, path, std::move(message));
    };
    f.encode = [=](const Config& config, YAML::Emitter& emitter) {
      emitter << YAML::Key << name << YAML::Value;
      if (config.*kind == list_kind) {
        emitter << YAML::Flow << YAML::BeginSeq;
        for (const std::int32_t rank : config.*ranks) emitter << rank;
        emitter << YAML::EndSeq;
        return;
      }
      for (const auto& [option, value] : words) {
        if (value == config.*kind) emitter << option;
      }
    };
    const std::string type = "one of " + join(words_of(words), ", ") + ", or a list";
    f.document = [=](const std::string& path, std::vector<KeyDoc>& out) {
      out.push_back(KeyDoc{path, type, default_text, description});
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  // A sequence of mappings of one shape; absent means empty.
  template <class Sub>
  Schema& list(std::string name, std::vector<Sub> Config::*member, Schema<Sub> sub_schema,
               std::string description) {
    const auto sub = share(std::move(sub_schema));
    Field f;
    f.name = name;
    f.decode = [=](const YAML::Node& node, const YAML::Node&, const std::string& path, Config& out,
                   DecodeContext& context) {
      (out.*member).clear();
      if (!node.IsDefined() || node.IsNull()) return;
      if (!node.IsSequence()) {
        context.error(node, path, "expected a list");
        return;
      }
      for (std::size_t i = 0; i < node.size(); ++i) {
        Sub item{};
        sub->decode(node[i], node, path + "[" + std::to_string(i) + "]", item, context);
        (out.*member).push_back(std::move(item));
      }
    };
    f.encode = [=](const Config& config, YAML::Emitter& emitter) {
      if ((config.*member).empty()) return;
      emitter << YAML::Key << name << YAML::Value << YAML::BeginSeq;
      for (const Sub& item : config.*member) sub->encode(item, emitter);
      emitter << YAML::EndSeq;
    };
    f.document = [=](const std::string& path, std::vector<KeyDoc>& out) {
      out.push_back(KeyDoc{path, "list", "empty", description});
      sub->document(path + "[]", out);
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  // A rule across keys of this section, run after they all decoded cleanly.
  Schema& check(std::function<void(const Config&, const Checker&)> rule) {
    checks_.push_back(std::move(rule));
    return *this;
  }

  // `node` is this section's mapping (undefined when absent); `parent` locates messages about it.
  void decode(const YAML::Node& node, const YAML::Node& parent, const std::string& path,
              Config& out, DecodeContext& context) const {
    const bool present = node.IsDefined() && !node.IsNull();
    if (present && !node.IsMap()) {
      context.error(node, path, "expected a mapping of keys");
      return;
    }
    if (present) report_unknown_keys(node, path, context);
    const std::size_t errors_before = context.error_count();
    for (const Field& f : fields_) {
      // Absent children must read as undefined: a default Node is a defined null, which an
      // optional section would take for "given empty".
      const YAML::Node child = present ? node[f.name] : YAML::Node(YAML::NodeType::Undefined);
      f.decode(child, present ? node : parent, child_path(path, f.name), out, context);
    }
    if (context.error_count() != errors_before) return;
    const Checker checker(present ? node : parent, path, context);
    for (const auto& rule : checks_) rule(out, checker);
  }

  void encode(const Config& config, YAML::Emitter& emitter) const {
    emitter << YAML::BeginMap;
    for (const Field& f : fields_) f.encode(config, emitter);
    emitter << YAML::EndMap;
  }

  void document(const std::string& prefix, std::vector<KeyDoc>& out) const {
    for (const Field& f : fields_) f.document(child_path(prefix, f.name), out);
  }

 private:
  // The items of the sequence `node`, each a whole number from 0, appended to `out`; each bad one
  // reported under its index.
  static void decode_ranks(const YAML::Node& node, const std::string& path,
                           std::vector<std::int32_t>& out, DecodeContext& context) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      const Parsed<std::int32_t> rank =
          node[i].IsScalar() ? Codec<std::int32_t>::parse(node[i].Scalar())
                             : Parsed<std::int32_t>{std::nullopt, "expected a whole number"};
      if (!rank || *rank.value < 0) {
        context.error(node[i], path + "[" + std::to_string(i) + "]",
                      rank ? "a rank is 0 or more" : rank.error);
        continue;
      }
      out.push_back(*rank.value);
    }
  }

  // A nested schema is held once and shared by the closures that use it: copied into each, every
  // level of nesting would triple the copies of everything below it.
  template <class Sub>
  [[nodiscard]] static std::shared_ptr<const Schema<Sub>> share(Schema<Sub> sub) {
    return std::make_shared<const Schema<Sub>>(std::move(sub));
  }

  struct Field {
    std::string name;
    std::function<void(const YAML::Node&, const YAML::Node&, const std::string&, Config&,
                       DecodeContext&)>
        decode;
    std::function<void(const Config&, YAML::Emitter&)> encode;
    std::function<void(const std::string&, std::vector<KeyDoc>&)> document;
  };

  template <class E>
  static std::vector<std::string> words_of(const std::vector<std::pair<std::string, E>>& options) {
    std::vector<std::string> words;
    for (const auto& option : options) words.push_back(option.first);
    return words;
  }

  static std::string join(const std::vector<std::string>& words,
                          std::string_view separator = ", ") {
    std::string out;
    for (const std::string& w : words) {
      if (!out.empty()) out += separator;
      out += w;
    }
    return out;
  }

  void report_unknown_keys(const YAML::Node& node, const std::string& path,
                           DecodeContext& context) const {
    std::vector<std::string> known;
    for (const Field& f : fields_) known.push_back(f.name);
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.Scalar();
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      std::string message = "unknown key";
      if (std::optional<std::string> near = nearest_word(key, known)) {
        message += " (did you mean '" + *near + "'?)";
      } else {
        message += " (valid keys: " + join(known) + ")";
      }
      context.error(it->first, child_path(path, key), std::move(message));
    }
  }

  std::vector<Field> fields_;
  std::vector<std::function<void(const Config&, const Checker&)>> checks_;
};

}  // namespace lockstep
