// A run's error.code says which host function failed ("EACCES": the manifest does not grant it), and
// embedders act on it. Before, it was read from the thrown value's `code` property, so a skill could
// report any code it liked: `throw {code: 'EACCES'}` looked like a permission denial. Now the code
// comes only from the errors the host made in that run (Session::describe); in process isolation the
// supervisor also drops a code that no host error has. Runs in both isolation modes.
#include <gtest/gtest.h>

#include <string>

#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

RunResult run_module(const std::string& source) {
  TempSkill skill({{"index.js", source}});  // no permissions: every fs call is denied
  TestRunner runner;
  return run(runner, skill);
}

TEST(ForgedErrorCodes, ACodePropertyTheSkillWroteIsNotReported) {
  const std::string forgeries[] = {
      "export default () => { throw Object.assign(new Error('no'), { code: 'EACCES' }); }",
      "export default () => { throw { name: 'PermissionDenied', message: 'no', code: 'EACCES' }; }",
      "export default async () => { await null; throw Object.assign(new TypeError('no'), { code: 'ENOENT' "
      "}); }",
      // A copy of a real host error is not the host's error.
      "export default async () => {\n"
      "  let e; try { await openhuman.fs.readFile('a.txt'); } catch (x) { e = x; }\n"
      "  const copy = Object.create(Object.getPrototypeOf(e));\n"
      "  Object.assign(copy, { name: e.name, message: e.message, code: e.code });\n"
      "  throw copy;\n"
      "}",
      // A getter that answers differently each time it is read.
      "export default () => { let n = 0; throw { message: 'm', get code() { return n++ ? 'EACCES' : 'x'; } "
      "}; }",
  };
  for (const std::string& source : forgeries) {
    RunResult r = run_module(source);
    ASSERT_EQ(r.outcome, Outcome::error) << source << ": " << describe(r);
    ASSERT_TRUE(r.error.has_value());
    EXPECT_EQ(r.error->code, "") << source;
  }
}

TEST(ForgedErrorCodes, AHostErrorKeepsItsCodeWhenRethrownOrEdited) {
  // Uncaught, rethrown by hand, and with its `code` property rewritten by the skill: the reported code
  // is the host's each time.
  const std::string sources[] = {
      "export default async () => { await openhuman.fs.readFile('a.txt'); }",
      "export default async () => { try { await openhuman.fs.readFile('a.txt'); } catch (e) { throw e; } }",
      "export default async () => {\n"
      "  try { await openhuman.fs.readFile('a.txt'); } catch (e) { e.code = 'EFORGED'; throw e; }\n"
      "}",
      "export default () => openhuman.fs.writeFile('a.txt', 'x').catch((e) => Promise.reject(e))",
  };
  for (const std::string& source : sources) {
    RunResult r = run_module(source);
    ASSERT_EQ(r.outcome, Outcome::error) << source << ": " << describe(r);
    ASSERT_TRUE(r.error.has_value());
    EXPECT_EQ(r.error->name, "PermissionDenied") << source;
    EXPECT_EQ(r.error->code, "EACCES") << source;
  }
}

TEST(ForgedErrorCodes, AnOldHostErrorRethrownAfterManyOthersStillCarriesNoForgedCode) {
  // The session remembers a bounded number of host errors; rethrowing one it has forgotten reports no
  // code rather than the object's (skill-writable) property.
  RunResult r = run_module(
      "export default async () => {\n"
      "  let first; try { await openhuman.fs.readFile('a.txt'); } catch (e) { first = e; }\n"
      "  for (let i = 0; i < 1100; i++) { try { await openhuman.fs.readFile('a.txt'); } catch (e) {} }\n"
      "  first.code = 'EACCES';\n"
      "  throw first;\n"
      "}");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->name, "PermissionDenied");
  EXPECT_EQ(r.error->code, "");
}

TEST(ForgedErrorCodes, AThrownStringIsAnErrorWithThatMessageAndNoCode) {
  RunResult r = run_module("export default () => { throw 'EACCES: denied'; }");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->name, "Error");
  EXPECT_EQ(r.error->message, "EACCES: denied");
  EXPECT_EQ(r.error->code, "");
}

}  // namespace
}  // namespace skillbox::testing
