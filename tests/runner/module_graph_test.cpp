// A skill's sources are its entry's module graph (runner/skill_reader.h): what the entry imports,
// transitively, is read; nothing else in the folder is, whatever it holds. Run through TestRunner, so
// ctest runs every test here in both isolation modes (in process, and `process.` in worker processes,
// where the sources travel in the invocation frame).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

/// Fills `skill`'s node_modules/ the way `npm install` does, with more than the reader would take if it
/// read them: more files than runner::kMaxSourceFiles (4096), folders nested deeper than
/// runner::kMaxSourceDepth (32), and a link leading out of the skill folder.
void install_node_modules(const TempSkill& skill) {
  for (int package = 0; package < 41; ++package) {
    const std::string dir = "node_modules/pkg" + std::to_string(package) + "/lib/";
    for (int file = 0; file < 100; ++file)
      skill.write(dir + std::to_string(file) + ".js", "export const n = " + std::to_string(file) + ";\n");
  }
  std::string deep = "node_modules/deep/";
  for (int i = 0; i < 40; ++i) deep += "d/";
  skill.write(deep + "x.js", "export default 1;\n");
  skill.write("node_modules/pkg0/index.js", "export * from './lib/0.js';\n");
  skill.symlink("node_modules/.bin", "/usr/bin");
  skill.symlink("node_modules/outside.js", "/etc/passwd");
}

TEST(ModuleGraph, AFolderFullOfUnimportedJavaScriptIsNotRead) {
  TempSkill skill(
      {{"index.js",
        "import { twice } from './src/math.js';\n"
        "export default async () => {\n"
        "  // A computed specifier is not known before the run: only files read for the graph load.\n"
        "  const name = ['node_modules', 'pkg0', 'index.js'].join('/');\n"
        "  let unread;\n"
        "  try { await import('./' + name); unread = 'loaded'; } catch (e) { unread = e.message; }\n"
        "  return [twice(21), unread];\n"
        "};\n"},
       {"src/math.js", "export { twice } from '../lib/twice.js';\n"},
       {"lib/twice.js", "export const twice = (n) => 2 * n;\n"}});
  install_node_modules(skill);

  TestRunner runner;
  const RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json,
            R"([42,"cannot load module: 'node_modules/pkg0/index.js' is not among the skill's sources )"
            R"((the entry and the files it imports by a string literal, transitively): import() with a )"
            R"(computed specifier loads only those"])");

  const CodeCheck check = check_code(skill.skill());
  EXPECT_TRUE(check.problems.empty()) << check.problems.size() << " problems, the first in "
                                      << (check.problems.empty() ? "" : check.problems[0].file);
  EXPECT_EQ(check.exports, std::vector<std::string>{"default"});
}

TEST(ModuleGraph, ImportsAcrossFoldersAreFollowedTransitively) {
  TempSkill skill(
      {{"index.js",
        "import { a, b } from './feature/a.js';\n"
        "import { extra } from './feature/reexport.mjs';\n"
        "export default async () =>\n"
        "  [a, b, extra, globalThis.side === true, (await import('./feature/lazy/late.js')).late];\n"},
       {"feature/a.js", "export * from '../shared/b.js';\nexport const a = 'a';\n"},
       {"feature/reexport.mjs", "export { c as extra } from './deeper/c.js';\n"},
       {"feature/deeper/c.js", "export const c = 'c';\n"},
       {"shared/b.js", "import '../shared/side.js';\nexport const b = 'b';\n"},
       {"shared/side.js", "globalThis.side = true;\n"},
       {"feature/lazy/late.js",
        "import { b } from '../../shared/b.js';\nexport const late = 'late' + b;\n"}});
  TestRunner runner;
  const RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"(["a","b","c",true,"lateb"])");
}

TEST(ModuleGraph, ImportLookalikesInCommentsStringsAndRegexpsAreNotImports) {
  // Each lookalike names a file nested deeper than runner::kMaxSourceDepth: had the host taken it for an
  // import, reading the sources would have failed, and the run would be invalid.
  std::string deep = "./node_modules/";
  for (int i = 0; i < 40; ++i) deep += "d/";
  std::string deep_in_regexp;  // the same with each '/' escaped
  for (const char c : deep) deep_in_regexp += c == '/' ? std::string("\\/") : std::string(1, c);
  TempSkill skill({{"index.js", "// import x from '" + deep +
                                    "a.js';\n"
                                    "/* export * from '" +
                                    deep +
                                    "b.js'; */\n"
                                    "const s = \"import y from '" +
                                    deep +
                                    "c.js'\";\n"
                                    "const t = `${s} import('" +
                                    deep +
                                    "d.js')`;\n"
                                    "const re = /import\\('" +
                                    deep_in_regexp +
                                    "e.js'\\)/;\n"
                                    "export default () => [s.length > 0, t.length > 0, re.test('x')];\n"}});
  TestRunner runner;
  const RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "[true,true,false]");

  // The same specifier in a real import is read, and refused for its depth.
  skill.write("index.js", "import x from '" + deep + "a.js';\nexport default () => x;\n");
  const RunResult imported = run(runner, skill);
  ASSERT_EQ(imported.outcome, Outcome::invalid) << describe(imported);
  EXPECT_NE(imported.error->message.find("nested more than 32 folders deep"), std::string::npos)
      << describe(imported);
}

TEST(ModuleGraph, AMissingImportIsInvalidWithTheMessageItAlwaysHad) {
  TempSkill skill({{"index.js", "import { x } from './lib/util.js';\nexport default () => x;\n"},
                   {"lib/util.js", "import { y } from './missing.js';\nexport const x = y;\n"}});
  TestRunner runner;
  const RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->name, "InvalidSkill");
  EXPECT_EQ(r.error->message, "cannot load module: 'lib/missing.js' does not exist in the skill folder");

  const CodeCheck check = check_code(skill.skill());
  ASSERT_EQ(check.problems.size(), 1u);
  EXPECT_EQ(check.problems[0].file, "lib/util.js");
  EXPECT_EQ(check.problems[0].line, 1u);
  EXPECT_EQ(check.problems[0].message,
            "cannot load module: 'lib/missing.js' does not exist in the skill folder");
}

TEST(ModuleGraph, AnImportLeadingOutOfTheFolderIsInvalidWithItsReason) {
  TempSkill skill({{"index.js", "import x from './link.js';\nexport default () => x;\n"}});
  skill.write("../outside.js", "export default 'outside';");
  skill.symlink("link.js", "../outside.js");
  TestRunner runner;
  const RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->message, "cannot load module: 'link.js' leads outside the skill folder");
}

TEST(ModuleGraph, AMissingDynamicImportRejectsAndTheRunGoesOn) {
  TempSkill skill(
      {{"index.js",
        "export default async () => {\n"
        "  try { await import('./optional.js'); return 'loaded'; } catch (e) { return e.message; }\n"
        "};\n"}});
  TestRunner runner;
  const RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("cannot load module: 'optional.js' does not exist in the skill folder")");
}

// The runner's source cache (runner/source_cache.h) trusts files older than a second: the skill ages
// first, so the second run is served from the cache and the edit after it has to be seen by stat.
TEST(ModuleGraph, AnEditThatAddsOrDropsAnImportTakesEffectOnTheNextRun) {
  TempSkill skill(
      {{"index.js", "export default () => 'plain';\n"}, {"lib/extra.js", "export const extra = 'extra';\n"}});
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  TestRunner runner;
  for (int i = 0; i < 2; ++i) {
    const RunResult r = run(runner, skill);
    ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
    EXPECT_EQ(r.value_json, R"("plain")");
  }
  skill.write("index.js", "import { extra } from './lib/extra.js';\nexport default () => extra;\n");
  RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("extra")");

  // The imported file is edited, then removed: both are seen.
  skill.write("lib/extra.js", "export const extra = 'edited';\n");
  r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("edited")");
  std::filesystem::remove(skill.dir() / "lib/extra.js");
  r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->message, "cannot load module: 'lib/extra.js' does not exist in the skill folder");

  // The missing import appears again.
  skill.write("lib/extra.js", "export const extra = 'back';\n");
  r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("back")");
}

}  // namespace
}  // namespace skillbox::testing
