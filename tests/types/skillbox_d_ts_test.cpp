// types/skillbox.d.ts declares exactly the globals a skill really has beyond ECMAScript: a global added to
// the host API without a declaration (or declared but never installed) fails here. The type-checking of
// the declarations themselves runs as the ctest `types.typecheck` (scripts/typecheck.sh).
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

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

/// Names of the top-level `declare var|let|const|function|class NAME` of the declaration file.
std::set<std::string> declared_globals() {
  std::ifstream in(std::string(SKILLBOX_SOURCE_DIR) + "/types/skillbox.d.ts");
  std::stringstream text;
  text << in.rdbuf();
  std::set<std::string> out;
  const std::regex declaration(R"(^declare\s+(?:var|let|const|function|class)\s+([A-Za-z_$][\w$]*))",
                               std::regex::multiline);
  const std::string source = text.str();
  for (std::sregex_iterator it(source.begin(), source.end(), declaration), end; it != end; ++it)
    out.insert((*it)[1].str());
  return out;
}

TEST(SkillboxDts, DeclaresExactlyTheHostGlobals) {
  // ECMAScript's globals, from a plain QuickJS context without the host API.
  testing::JsHarness bare(/*install=*/false);
  const std::set<std::string> ecmascript =
      split(bare.eval("Object.getOwnPropertyNames(globalThis).join()").value);
  const RunResult r =
      testing::run_source("export default () => Object.getOwnPropertyNames(globalThis).join()");
  ASSERT_EQ(r.outcome, Outcome::ok) << testing::describe(r);
  const std::string json = r.value_json;
  std::set<std::string> host;
  for (const std::string& name : split(json.substr(1, json.size() - 2)))
    if (ecmascript.count(name) == 0) host.insert(name);
  EXPECT_FALSE(host.empty());
  EXPECT_EQ(declared_globals(), host);
}

}  // namespace
}  // namespace skillbox
