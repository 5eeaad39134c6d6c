// `skillbox test --json` and `--junit` (cli/test_report.h): the documents CI systems read, whatever a
// test's name or failure holds.
#include "cli/test_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace skillbox::cli {
namespace {

using nlohmann::json;

/// True when `xml` holds no byte XML 1.0 refuses (C0 controls but tab, newline, carriage return) and
/// every '&' starts one of the entities xml_escape writes.
bool only_xml_characters(const std::string& xml) {
  for (size_t i = 0; i < xml.size(); ++i) {
    const auto c = static_cast<unsigned char>(xml[i]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return false;
    if (c == '&') {
      bool known = false;
      for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#9;", "&#10;", "&#13;"})
        known = known || xml.compare(i, std::string(e).size(), e) == 0;
      if (!known) return false;
    }
  }
  return true;
}

TEST(TestReport, XmlEscapeMakesHostileTextInertInTextAndAttributes) {
  const std::string hostile = "<b>&amp; \"q\" 'a'</testcase><failure>";
  EXPECT_EQ(xml_escape(hostile, false),
            "&lt;b&gt;&amp;amp; &quot;q&quot; &apos;a&apos;&lt;/testcase&gt;&lt;failure&gt;");
  EXPECT_EQ(xml_escape(hostile, true), xml_escape(hostile, false));

  // Tab, newline and carriage return survive attribute normalization only as references; in text,
  // tab and newline stay, carriage return does not survive end-of-line handling.
  EXPECT_EQ(xml_escape("a\tb\nc\rd", true), "a&#9;b&#10;c&#13;d");
  EXPECT_EQ(xml_escape("a\tb\nc\rd", false), "a\tb\nc&#13;d");

  // Characters XML 1.0 cannot carry even as references, and bytes that are not UTF-8, become visible
  // escapes; the rest of the text is kept.
  EXPECT_EQ(xml_escape(std::string("a\x01"
                                   "b\x1b[31mc",
                                   9),
                       false),
            "a\\x01b\\x1b[31mc");
  EXPECT_EQ(xml_escape(std::string("nul\0end", 7), true), "nul\\x00end");
  EXPECT_EQ(xml_escape("\xef\xbf\xbe\xef\xbf\xbf", false), "\\ufffe\\uffff");
  EXPECT_EQ(xml_escape("bad \xff\xfe byte", false), "bad \\xff\\xfe byte");
  EXPECT_EQ(xml_escape("caf\xc3\xa9 \xe2\x9c\x93", false), "caf\xc3\xa9 \xe2\x9c\x93")
      << "UTF-8 is kept as it is";

  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
  EXPECT_TRUE(only_xml_characters(xml_escape(every_byte, true)));
  EXPECT_TRUE(only_xml_characters(xml_escape(every_byte, false)));
}

TestRun sample_run() {
  TestRun run;
  run.skill_id = "weather";
  run.file = "skill.test.json";
  run.duration_ms = 1234;
  run.tests.push_back({"greets <you> & \"me\"", true, 12, ""});
  run.tests.push_back({std::string("bell\x07 'it'\nnext", 15), false, 1005,
                       "value: expected 1, got 2\nlogs:\n  [info] <script>&"});
  return run;
}

TEST(TestReport, JsonHasEachTestAndTheTotals) {
  const std::string text = test_run_json(sample_run());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line";
  const json doc = json::parse(text);
  EXPECT_EQ(doc["skill"], "weather");
  EXPECT_EQ(doc["file"], "skill.test.json");
  ASSERT_EQ(doc["tests"].size(), 2u);
  EXPECT_EQ(doc["tests"][0], json::parse(R"({"name": "greets <you> & \"me\"", "status": "pass",
                                             "duration_ms": 12, "failure": null})"));
  EXPECT_EQ(doc["tests"][1]["name"], std::string("bell\x07 'it'\nnext", 15));
  EXPECT_EQ(doc["tests"][1]["status"], "fail");
  EXPECT_EQ(doc["tests"][1]["failure"], "value: expected 1, got 2\nlogs:\n  [info] <script>&");
  EXPECT_EQ(doc["totals"], json::parse(R"({"tests": 2, "passed": 1, "failed": 1, "duration_ms": 1234})"));
  EXPECT_EQ(doc["cancelled"], false);
}

TEST(TestReport, JunitHasASuiteACasePerTestAndTheFailures) {
  const std::string xml = test_run_junit(sample_run());
  EXPECT_TRUE(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites ")) << xml;
  EXPECT_TRUE(only_xml_characters(xml)) << xml;
  EXPECT_NE(xml.find("<testsuite name=\"weather\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\" "
                     "time=\"1.234\" file=\"skill.test.json\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase name=\"greets &lt;you&gt; &amp; &quot;me&quot;\" classname=\"weather\" "
                     "time=\"0.012\"/>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase name=\"bell\\x07 &apos;it&apos;&#10;next\" classname=\"weather\" "
                     "time=\"1.005\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<failure message=\"value: expected 1, got 2\" type=\"failed\">value: expected 1, got "
                     "2\nlogs:\n  [info] &lt;script&gt;&amp;</failure>"),
            std::string::npos)
      << xml;
  EXPECT_TRUE(xml.ends_with("</testsuite>\n</testsuites>\n")) << xml;
}

}  // namespace
}  // namespace skillbox::cli
