// cli/test_file.h — a skill's test file (skill.test.json) read into test cases, every problem at once.
//
// docs/cli.md "skillbox test" gives the format. Reading checks everything that can be checked without
// running the skill: keys, types, fixture URLs and headers, workspace paths (by the rules of the
// skill's own fs calls), and that a test using the workspace runs a skill whose manifest grants fs.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/fixture_server.h"
#include "skillbox/policy.h"
#include "skillbox/result.h"

namespace skillbox::cli {

/// Largest test file read, in bytes.
inline constexpr uint64_t kMaxTestFileBytes = 16u << 20;
/// Most tests in one file: each is a run of its own.
inline constexpr size_t kMaxTests = 1000;
/// Most fixture origins of one test: each gets a loopback server (and its thread) of its own.
inline constexpr size_t kMaxFixtureOrigins = 64;
/// Deepest nesting of arrays and objects in a test file: inputs and expected values are data, and
/// copying or printing a value nested far deeper would exhaust the stack.
inline constexpr size_t kMaxTestFileDepth = 64;

struct HttpFixture {
  std::string origin;  // normalized "https://api.example.com"
  FixtureRoute route;
};

/// What one workspace file must be after the run.
struct FileExpectation {
  enum class Kind : uint8_t { absent, text, json };
  Kind kind = Kind::absent;
  std::string text;      // Kind::text: the bytes, exactly
  nlohmann::json value;  // Kind::json: the content parsed as JSON equals this value
};

struct Expectation {
  std::string outcome = "ok";
  std::optional<nlohmann::json> value;
  std::optional<std::string> error_name;
  std::optional<std::string> error_message;  // a substring of the message
  std::vector<std::string> logs;             // substrings of log lines, in order
  std::map<std::string, nlohmann::json> store;
  std::map<std::string, FileExpectation> workspace;  // by normalized path
};

struct TestCase {
  std::string name;
  std::string call;
  std::string input_json = "null";
  std::map<std::string, std::string> env;
  std::map<std::string, nlohmann::json> store;
  std::map<std::string, std::string>
      workspace;  // files put in the workspace before the run, by normalized path
  std::vector<HttpFixture> http;
  Expectation expect;
};

/// Reads and checks the test file `file` (`shown` is how messages name it). `fs_mode` is the
/// manifest's permissions.fs.mode: a test that seeds or expects workspace files needs one other
/// than none. The error lists every problem found, one per line, each with its key path
/// ("tests[1].expect.outcome: ..."), escaped.
[[nodiscard]] Result<std::vector<TestCase>> read_test_file(const std::filesystem::path& file,
                                                           const std::string& shown, FsMode fs_mode);

}  // namespace skillbox::cli
