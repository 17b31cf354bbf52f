#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/scenario/scenario.hpp"

namespace lockstep {
namespace {

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(' ');
  const auto end = s.find_last_not_of(' ');
  return begin == std::string::npos ? "" : s.substr(begin, end - begin + 1);
}

std::string unquote(const std::string& s) {
  return s.size() >= 2 && s.front() == '`' && s.back() == '`' ? s.substr(1, s.size() - 2) : s;
}

// Rows of the table under "## Keys" in scenarios/README.md.
std::vector<KeyDoc> documented_keys() {
  std::ifstream in(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/README.md");
  REQUIRE(in);
  std::vector<KeyDoc> keys;
  std::string line;
  bool in_keys = false;
  while (std::getline(in, line)) {
    if (line.starts_with("## ")) in_keys = line == "## Keys";
    if (!in_keys || !line.starts_with("| `")) continue;
    std::vector<std::string> cells;
    std::stringstream row(line.substr(1));
    std::string cell;
    while (std::getline(row, cell, '|')) cells.push_back(trim(cell));
    REQUIRE(cells.size() >= 4);
    keys.push_back(KeyDoc{unquote(cells[0]), cells[1], unquote(cells[2]), cells[3]});
  }
  return keys;
}

TEST_CASE("scenarios/README.md documents exactly the keys the loader accepts") {
  const std::vector<KeyDoc> documented = documented_keys();
  const std::vector<KeyDoc> accepted = scenario_keys();
  for (const KeyDoc& key : accepted) {
    CAPTURE(key.path);
    const auto found = std::find_if(documented.begin(), documented.end(),
                                    [&](const KeyDoc& d) { return d.path == key.path; });
    REQUIRE_MESSAGE(found != documented.end(), "undocumented key (run `lockstep keys`)");
    CHECK(found->type == key.type);
    CHECK(found->default_text == key.default_text);
  }
  for (const KeyDoc& doc : documented) {
    CAPTURE(doc.path);
    CHECK_MESSAGE(std::any_of(accepted.begin(), accepted.end(),
                              [&](const KeyDoc& k) { return k.path == doc.path; }),
                  "documented key that the loader does not accept");
  }
}

}  // namespace
}  // namespace lockstep
