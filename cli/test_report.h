// cli/test_report.h — what `skillbox test` reports, for machines: `--json` (one JSON document on stdout)
// and `--junit FILE` (JUnit XML, the format CI systems read). docs/cli.md "skillbox test" shows both.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace skillbox::cli {

/// One test that ran.
struct TestRecord {
  std::string name;
  bool passed = false;
  int64_t duration_ms = 0;
  /// Why it failed, one reason a line (escaped for terminals: what the human output shows under
  /// "FAIL"), without a final newline; "" when it passed.
  std::string failure;
};

/// The tests of one `skillbox test` run that started, in the order they ran.
struct TestRun {
  std::string skill_id;
  std::string file;  // the test file as the user named it: "skill.test.json"
  std::vector<TestRecord> tests;
  int64_t duration_ms = 0;
  bool cancelled = false;  // Ctrl-C or SIGTERM: the last test was cancelled and none started after it
};

/// The `--json` document, one line, ASCII only:
/// {"skill", "file", "tests": [{"name", "status": "pass"|"fail", "duration_ms", "failure": text|null}],
///  "totals": {"tests", "passed", "failed", "duration_ms"}, "cancelled"}.
[[nodiscard]] std::string test_run_json(const TestRun& run);

/// The JUnit XML report: one <testsuite> (named after the skill) in <testsuites>, one <testcase> per
/// test, a <failure> in each failed one (its first reason as the message attribute, all of them as
/// the text). Times in seconds.
[[nodiscard]] std::string test_run_junit(const TestRun& run);

/// `text` for XML 1.0 character data or, with `attribute`, for a quoted attribute value: the five
/// markup characters as entities (&amp; &lt; &gt; &quot; &apos;); in attributes also tab, newline and
/// carriage return as character references (attribute normalization would turn them into spaces),
/// and carriage return in text too (end-of-line handling would drop it). Characters XML 1.0 cannot
/// carry at all, not even as references (other C0 controls, U+FFFE, U+FFFF), and bytes that are not
/// well-formed UTF-8 become visible escapes (`\x01`, `\ufffe`), as do terminal-unsafe code points
/// (base/escape.h): the output is always well-formed XML.
[[nodiscard]] std::string xml_escape(std::string_view text, bool attribute);

}  // namespace skillbox::cli
