// Red-team regression (SECURITY-CASES "Results are valid text"): `export default () => ({a: '\ud800'})`
// ended ok with value null. Every string that leaves the sandbox (result, error text, log lines, store
// values, HTTP request header values) is now well-formed UTF-8: escaped, or refused with a clear error.
#include <gtest/gtest.h>

#include <string>

#include "base/utf8.h"
#include "capabilities/store/store_test_util.h"
#include "cli/report.h"
#include "skill_fixture.h"
#include "support/http_test_server.h"

namespace skillbox::testing {
namespace {

class Utf8Out : public ::testing::Test {
 protected:
  RunResult run_js(const std::string& source, Policy policy = {}) {
    TempSkill skill({{"index.js", source}});
    skill.manifest().permissions = std::move(policy);
    HostOptions options;
    options.data_dir = data_.path();
    options.env = std::map<std::string, std::string>{};
    TestRunner runner(std::move(options));
    return run(runner, skill);
  }
  TempDir data_;
};

// The example itself: the value comes back, escaped as JSON requires (ES2019 well-formed stringify).
TEST_F(Utf8Out, ALoneSurrogateInTheResultIsEscapedNotNull) {
  const RunResult r = run_js("export default () => ({a: '\\ud800'})");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"({"a":"\ud800"})");
  // Variants: a trailing high, a lone low, a reversed pair, in keys too.
  const RunResult v = run_js("export default () => ({['k\\udfff']: ['x\\ud83d', '\\ude00\\ud83d']})");
  ASSERT_EQ(v.outcome, Outcome::ok) << describe(v);
  EXPECT_EQ(v.value_json, R"({"k\udfff":["x\ud83d","\ude00\ud83d"]})");
  EXPECT_TRUE(base::utf8::is_valid(v.value_json));
}

// Error name, message and stack: the surrogate is shown as its escape.
TEST_F(Utf8Out, ErrorTextWithALoneSurrogateIsEscaped) {
  const RunResult r = run_js(
      "export default () => { const e = new Error('bad \\ud800 end'); e.name = 'N\\udc00'; throw e; }");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->message, "bad \\uD800 end");
  EXPECT_EQ(r.error->name, "N\\uDC00");
  EXPECT_TRUE(base::utf8::is_valid(r.error->stack));
  const RunResult thrown = run_js("export default () => { throw '\\ud800'; }");
  ASSERT_TRUE(thrown.error);
  EXPECT_EQ(thrown.error->message, "\\uD800");
}

// Log lines are escaped; a store value with a lone surrogate is stored as JSON.stringify escapes it
// (`"v\udbff"`: well-formed UTF-8 text every reader of skillbox accepts, base/json_text.h) and comes back
// the same string.
TEST_F(Utf8Out, LogLinesAndStoreValuesStayWellFormed) {
  Policy policy;
  const RunResult r = run_js(
      "export default () => { console.log('log \\ud800');\n"
      "  try { store.set('k', {s: 'v\\udbff'}); return store.get('k').s === 'v\\udbff' ? 'same' : 'changed'; "
      "}\n"
      "  catch (e) { return e.name + ': ' + e.message; } }",
      policy);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "\"same\"");
  ASSERT_EQ(r.logs.size(), 1u);
  EXPECT_TRUE(base::utf8::is_valid(r.logs[0].message)) << r.logs[0].message;
  EXPECT_EQ(r.logs[0].message.rfind("log ", 0), 0u);
}

// An HTTP request header value with a lone surrogate is refused before anything is sent.
TEST_F(Utf8Out, AHeaderValueWithALoneSurrogateIsRefused) {
  HttpTestServer server;
  Policy policy;
  policy.http.allow = {server.origin() + "/"};
  policy.http.allow_private_addresses = true;
  const RunResult r = run_js("export default async () => { try { await openhuman.http.get(" +
                                 std::string("'") + server.url("/plain") +
                                 "', {headers: {'X-A': 'v\\ud800'}}); return 'sent'; }\n"
                                 "  catch (e) { return e.name + ': ' + e.message; } }",
                             policy);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_NE(r.value_json.find("X-A"), std::string::npos) << r.value_json;
  EXPECT_NE(r.value_json.find("surrogate"), std::string::npos) << r.value_json;
  EXPECT_EQ(server.requests(), 0u);
}

// The CLI's last line of defence: an ok result whose value is not JSON text is reported as internal,
// never printed as null.
TEST(Utf8OutCli, AnUnreadableValueBecomesInternalNotNull) {
  RunResult bad;
  bad.outcome = Outcome::ok;
  bad.value_json = "{\"a\":\"\xED\xA0\x80\"}";
  const RunResult checked = cli::checked_result(bad);
  EXPECT_EQ(checked.outcome, Outcome::internal);
  ASSERT_TRUE(checked.error);
  EXPECT_NE(checked.error->message.find("not valid UTF-8"), std::string::npos);
  bad.value_json = "{oops";
  EXPECT_EQ(cli::checked_result(bad).outcome, Outcome::internal);
  bad.value_json = "[1]";
  EXPECT_EQ(cli::checked_result(bad).outcome, Outcome::ok);
}

}  // namespace
}  // namespace skillbox::testing
