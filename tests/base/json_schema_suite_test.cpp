// base/json_schema.h against the official JSON Schema Test Suite (Debian json-schema-test-suite,
// installed by scripts/setup.sh): every case of every draft 7 file, through the same JsonSchema wrapper
// `skillbox mcp` validates tool arguments and results with. A case whose outcome differs fails, unless
// its file or case is in kSkipped below with the reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "base/json_schema.h"

namespace skillbox::base {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

/// Where the Debian package puts the draft 7 files. The files under optional/ (formats, bignums,
/// ECMAScript regex details) test what draft 7 itself calls optional; they are not run.
constexpr std::string_view kSuiteDir = "/usr/share/json-schema-test-suite/tests/draft7";

/// What is not supported, by file ("refRemote.json") or by "file: group description". Each reason is
/// what docs/mcp.md says is not supported.
const std::pair<std::string_view, std::string_view> kSkipped[] = {
    {"refRemote.json", "remote $ref: skillbox never fetches a schema (docs/mcp.md)"},
    {"ref.json: Recursive references between schemas",
     "a $ref resolved through the \"$id\" of a subschema (http://localhost:1234/tree): valijson looks such "
     "an id up as a remote document, which skillbox never fetches"},
};

std::string_view skip_reason(const std::string& file, const std::string& group) {
  for (const auto& [what, why] : kSkipped)
    if (what == file || what == file + ": " + group) return why;
  return {};
}

json read_json(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

std::vector<fs::path> suite_files() {
  std::vector<fs::path> out;
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(kSuiteDir)))
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(JsonSchemaSuite, EveryDraft7CaseHasTheSuitesOutcome) {
  if (!fs::is_directory(fs::path(kSuiteDir)))
    GTEST_SKIP() << "the JSON Schema Test Suite is not installed (" << kSuiteDir
                 << " is missing): install the Debian package json-schema-test-suite (scripts/setup.sh does)";
  size_t cases = 0, skipped = 0;
  for (const fs::path& path : suite_files()) {
    const std::string file = path.filename().string();
    for (const json& group : read_json(path)) {
      const std::string name = group["description"].get<std::string>();
      if (!skip_reason(file, name).empty()) {
        skipped += group["tests"].size();
        continue;
      }
      SCOPED_TRACE(file + ": " + name);
      Result<JsonSchema> schema = JsonSchema::compile(group["schema"]);
      if (!schema) {
        ADD_FAILURE() << "the suite's schema was refused: " << schema.error().message;
        continue;
      }
      for (const json& test : group["tests"]) {
        ++cases;
        const bool valid = test["valid"].get<bool>();
        const std::optional<SchemaMismatch> mismatch = schema->validate(test["data"]);
        EXPECT_EQ(!mismatch.has_value(), valid)
            << test["description"].get<std::string>() << ": data " << test["data"].dump()
            << (mismatch ? " was refused: " + mismatch->text() : std::string(" was accepted"));
      }
    }
  }
  EXPECT_GT(cases, 380u) << "fewer cases than the suite has: was it found?";
  std::printf("ran %zu draft 7 cases, skipped %zu (see kSkipped)\n", cases, skipped);
}

TEST(JsonSchemaSuite, EverySkippedFileExists) {
  if (!fs::is_directory(fs::path(kSuiteDir)))
    GTEST_SKIP() << "the JSON Schema Test Suite is not installed: install json-schema-test-suite";
  for (const auto& [what, why] : kSkipped) {
    const std::string_view file = what.substr(0, what.find(':'));
    EXPECT_TRUE(fs::exists(fs::path(kSuiteDir) / file)) << what << " is skipped but not in the suite";
  }
}

}  // namespace
}  // namespace skillbox::base
