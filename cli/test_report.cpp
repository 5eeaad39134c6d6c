// cli/test_report.cpp — see test_report.h.
#include "cli/test_report.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/escape.h"
#include "cli/report.h"

namespace skillbox::cli {
namespace {

size_t count_passed(const TestRun& run) {
  size_t n = 0;
  for (const TestRecord& t : run.tests) n += t.passed ? 1 : 0;
  return n;
}

/// Milliseconds as JUnit's seconds, "0.042".
std::string seconds(int64_t ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%lld.%03lld", static_cast<long long>(ms / 1000),
                static_cast<long long>(ms % 1000));
  return text;
}

}  // namespace

std::string xml_escape(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\t':
        out += attribute ? "&#9;" : "\t";
        break;
      case '\n':
        out += attribute ? "&#10;" : "\n";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        // U+FFFE and U+FFFF (EF BF BE, EF BF BF) are not XML characters; escape_unit passes them.
        if (static_cast<unsigned char>(c) == 0xEF && i + 2 < text.size() &&
            static_cast<unsigned char>(text[i + 1]) == 0xBF &&
            (static_cast<unsigned char>(text[i + 2]) & 0xFE) == 0xBE) {
          base::append_code_point_escape(out,
                                         static_cast<unsigned char>(text[i + 2]) == 0xBE ? 0xFFFE : 0xFFFF);
          i += 3;
          continue;
        }
        // Everything else that is not plain printable text (C0 controls, ill-formed UTF-8,
        // terminal-unsafe code points) becomes a visible escape; the rest is copied.
        i += base::escape_unit(text, i, out);
        continue;
    }
    ++i;
  }
  return out;
}

std::string test_run_json(const TestRun& run) {
  nlohmann::ordered_json tests = nlohmann::ordered_json::array();
  for (const TestRecord& t : run.tests) {
    tests.push_back(
        {{"name", t.name},
         {"status", t.passed ? "pass" : "fail"},
         {"duration_ms", t.duration_ms},
         {"failure", t.passed ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(t.failure)}});
  }
  const size_t passed = count_passed(run);
  const nlohmann::ordered_json doc = {{"skill", run.skill_id},
                                      {"file", run.file},
                                      {"tests", std::move(tests)},
                                      {"totals",
                                       {{"tests", run.tests.size()},
                                        {"passed", passed},
                                        {"failed", run.tests.size() - passed},
                                        {"duration_ms", run.duration_ms}}},
                                      {"cancelled", run.cancelled}};
  return dump_json(doc, -1, /*ascii=*/true) + "\n";
}

std::string test_run_junit(const TestRun& run) {
  const size_t failed = run.tests.size() - count_passed(run);
  const std::string suite = xml_escape(run.skill_id, true);
  const std::string counts = " tests=\"" + std::to_string(run.tests.size()) + "\" failures=\"" +
                             std::to_string(failed) + "\" errors=\"0\" skipped=\"0\" time=\"" +
                             seconds(run.duration_ms) + "\"";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"skillbox test\"" + counts + ">\n";
  out += "  <testsuite name=\"" + suite + "\"" + counts + " file=\"" + xml_escape(run.file, true) + "\">\n";
  for (const TestRecord& t : run.tests) {
    out += "    <testcase name=\"" + xml_escape(t.name, true) + "\" classname=\"" + suite + "\" time=\"" +
           seconds(t.duration_ms) + "\"";
    if (t.passed) {
      out += "/>\n";
      continue;
    }
    const std::string first = t.failure.substr(0, t.failure.find('\n'));
    out += ">\n      <failure message=\"" + xml_escape(first, true) + "\" type=\"failed\">" +
           xml_escape(t.failure, false) + "</failure>\n    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace skillbox::cli
