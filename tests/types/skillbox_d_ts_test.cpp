// types/skillbox.d.ts declares exactly the globals a skill really has beyond ECMAScript: a global added to
// the host API without a declaration (or declared but never installed) fails here. The type-checking of
// the declarations themselves runs as the ctest `types.typecheck` (scripts/typecheck.sh).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bindings/js_harness.h"
#include "skill_fixture.h"

namespace skillbox {
namespace {

std::set<std::string> split(const std::string& csv) {
  std::set<std::string> out;
  std::stringstream in(csv);
  std::string name;
  while (std::getline(in, name, ',')) out.insert(name);
  return out;
}

std::string declarations() {
  std::ifstream in(std::string(SKILLBOX_SOURCE_DIR) + "/types/skillbox.d.ts");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Names of the top-level `declare var|let|const|function|class NAME` of the declaration file.
std::set<std::string> declared_globals() {
  std::set<std::string> out;
  const std::regex declaration(R"(^declare\s+(?:var|let|const|function|class)\s+([A-Za-z_$][\w$]*))",
                               std::regex::multiline);
  const std::string source = declarations();
  for (std::sregex_iterator it(source.begin(), source.end(), declaration), end; it != end; ++it)
    out.insert((*it)[1].str());
  return out;
}

TEST(SkillboxDts, DeclaresExactlyTheHostGlobals) {
  // ECMAScript's globals, from a plain QuickJS context without the host API.
  testing::JsHarness bare(/*install=*/false);
  const std::set<std::string> ecmascript =
      split(bare.eval("Object.getOwnPropertyNames(globalThis).join()").value);
  // With permissions.http.fetch, so the fetch globals (declared at the end of the file) are there too;
  // tests/engine/realm_test.cpp shows that without it they are not.
  testing::TempSkill skill(
      {{"index.js", "export default () => Object.getOwnPropertyNames(globalThis).join()"}});
  skill.manifest().permissions.http.allow = {"https://api.example.com/"};
  skill.manifest().permissions.http.fetch = true;
  testing::TestRunner runner;
  const RunResult r = testing::run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << testing::describe(r);
  const std::string json = r.value_json;
  std::set<std::string> host;
  for (const std::string& name : split(json.substr(1, json.size() - 2)))
    if (ecmascript.count(name) == 0) host.insert(name);
  EXPECT_FALSE(host.empty());
  EXPECT_EQ(declared_globals(), host);
}

/// Member names of `interface NAME { ... }` inside `declare namespace Skillbox` (two-space indented
/// interface, members at four spaces).
std::set<std::string> declared_members(const std::string& interface_name) {
  const std::string source = declarations();
  const size_t start = source.find("\n  interface " + interface_name + " {");
  if (start == std::string::npos) return {};
  const size_t end = source.find("\n  }", start);
  const std::string body = source.substr(start, end - start);
  std::set<std::string> out;
  const std::regex member(R"(^    (?:readonly\s+)?([A-Za-z_$][\w$]*)\??\s*[(<:])", std::regex::multiline);
  for (std::sregex_iterator it(body.begin(), body.end(), member), stop; it != stop; ++it)
    out.insert((*it)[1].str());
  return out;
}

TEST(SkillboxDts, DeclaresEveryMemberOfTheHostObjects) {
  const std::vector<std::pair<std::string, std::string>> objects = {
      {"Store", "store"},         {"Env", "env"},         {"Fs", "openhuman.fs"}, {"Http", "openhuman.http"},
      {"OpenHuman", "openhuman"}, {"Console", "console"}, {"Crypto", "crypto"}};
  std::string source = "export default () => [";
  for (const auto& [name, expression] : objects)
    source += "Object.getOwnPropertyNames(" + expression + ").join(),";
  source += "]";
  const RunResult r = testing::run_source(source);
  ASSERT_EQ(r.outcome, Outcome::ok) << testing::describe(r);
  std::vector<std::string> lists;
  std::stringstream in(r.value_json.substr(2, r.value_json.size() - 4));
  std::string item;
  while (std::getline(in, item, '"')) {
    if (item != ",") lists.push_back(item);
  }
  ASSERT_EQ(lists.size(), objects.size()) << r.value_json;
  for (size_t i = 0; i < objects.size(); ++i) {
    EXPECT_FALSE(declared_members(objects[i].first).empty()) << objects[i].first;
    EXPECT_EQ(declared_members(objects[i].first), split(lists[i]))
        << objects[i].first << " vs " << objects[i].second;
  }
}

}  // namespace
}  // namespace skillbox
