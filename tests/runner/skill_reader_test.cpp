// The host side of a skill's sources: reading the folder, confined to it, into bus::SkillSources.
#include "runner/skill_reader.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <cerrno>
#include <fstream>
#include <optional>

#include "skill_fixture.h"

namespace skillbox::runner {
namespace {

TEST(SkillFiles, ReadsFilesAndFollowsSymlinksThatStayInside) {
  testing::TempSkill skill({{"lib/a.js", "A"}});
  skill.symlink("alias.js", "lib/a.js");
  auto files = SkillFiles::open(skill.dir());
  ASSERT_TRUE(files);
  EXPECT_EQ(*files->read("lib/a.js", 1024), "A");
  EXPECT_EQ(*files->read("alias.js", 1024), "A");
}

TEST(SkillFiles, RefusesSymlinksLeadingOutOfTheFolder) {
  testing::TempSkill skill({{"index.js", "x"}});
  // A file beside the skill folder, reachable only through the links.
  std::filesystem::path outside = skill.dir().parent_path() / "secret.js";
  { std::ofstream(outside) << "secret"; }
  skill.symlink("l1.js", outside);
  skill.symlink("l2", "..");
  skill.symlink("l3.js", "/etc/passwd");
  auto files = SkillFiles::open(skill.dir());
  ASSERT_TRUE(files);
  for (const char* name : {"l1.js", "l2/secret.js", "l3.js"}) {
    auto r = files->read(name, 1 << 20);
    ASSERT_FALSE(r) << name;
    EXPECT_EQ(r.error().message, "'" + std::string(name) + "' leads outside the skill folder");
    EXPECT_EQ(r.error().message.find(skill.dir().string()), std::string::npos);
  }
}

TEST(SkillFiles, MissingFoldersAndOversizedFilesAreErrorsWithoutHostPaths) {
  testing::TempSkill skill({{"big.js", std::string(2000, 'x')}, {"dir/x.js", "x"}});
  auto files = SkillFiles::open(skill.dir());
  ASSERT_TRUE(files);
  EXPECT_EQ(files->read("nope.js", 1 << 20).error().message, "'nope.js' does not exist in the skill folder");
  EXPECT_EQ(files->read("dir", 1 << 20).error().message, "'dir' is not a regular file");
  EXPECT_EQ(files->read("big.js", 1000).error().message,
            "'big.js' is too large (2000 bytes; limit is 1000 bytes)");
}

// ---- read_skill_sources: the entry's module graph, and nothing else --------------------------------

/// Limits whose heap limit (the per-file cap) is `memory_bytes`.
Limits heap(uint64_t memory_bytes) {
  Limits l;
  l.memory_bytes = memory_bytes;
  return l;
}

TEST(SkillSources, TheEntryAndWhatItImportsAreReadAndNothingElse) {
  testing::TempSkill skill({{"index.js",
                             "import { a } from './lib/a.js';\n"
                             "import './alias.js';\n"
                             "export { b } from './lib/deep/b.mjs';\n"
                             "export default async () => [a, await import('./lazy.js')];\n"},
                            {"lib/a.js", "import '../c.cjs';\nexport const a = 1;\n"},
                            {"lib/deep/b.mjs", "export * from '../a.js';\nexport const b = 2;\n"},
                            {"c.cjs", "C"},
                            {"lazy.js", "export default 3;\n"},
                            {"unused.js", "export default 'never imported';\n"},
                            {"node_modules/pkg/index.js", "module.exports = 1;\n"},
                            {"README.md", "not a module"},
                            {"data.json", "{}"}});
  skill.symlink("alias.js", "lib/a.js");
  auto sources = read_skill_sources(skill.dir(), "./index.js", Limits{});
  ASSERT_TRUE(sources) << sources.error().message;
  EXPECT_EQ(sources->entry, "index.js");
  std::vector<std::string> names;
  for (const auto& [name, text] : sources->files) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"alias.js", "c.cjs", "index.js", "lazy.js", "lib/a.js",
                                             "lib/deep/b.mjs"}));
  EXPECT_EQ(sources->files.at("alias.js"), sources->files.at("lib/a.js"));
  EXPECT_EQ(sources->files.at("c.cjs"), "C");
  EXPECT_TRUE(sources->refused.empty());
}

TEST(SkillSources, OnlyImportsTheParserSeesAreFollowed) {
  testing::TempSkill skill(
      {{"index.js",
        "// import a from './a.js';\n"
        "/* import('./b.js') */\n"
        "const s = 'import c from \"./c.js\"';\n"
        "const t = `import('./d.js') ${s}`;\n"
        "const r = /import('.\\/e.js')/;\n"
        "const name = './f.js';\n"
        "export default () => [import(name), import('./g.js' + ''), import('./h.js')];\n"}});
  for (const char* f : {"a.js", "b.js", "c.js", "d.js", "e.js", "f.js", "g.js", "h.js"})
    skill.write(f, "export default 1;");
  auto sources = read_skill_sources(skill.dir(), "index.js", Limits{});
  ASSERT_TRUE(sources) << sources.error().message;
  std::vector<std::string> names;
  for (const auto& [name, text] : sources->files) names.push_back(name);
  // Only the import() of a single string literal is known before the code runs.
  EXPECT_EQ(names, (std::vector<std::string>{"h.js", "index.js"}));
}

TEST(SkillSources, AScriptEntrysImportsAndThoseBeforeASyntaxErrorAreFollowed) {
  // A classic script's dynamic imports; and the imports above a syntax error: the run reports the
  // error, `skillbox check` the problems of the files imported above it too.
  for (const char* entry : {"async function run() { return (await import('./lib.js')).x; }\n",
                            "import { x } from './lib.js';\nexport default () => x +;\n"}) {
    testing::TempSkill skill({{"index.js", entry}, {"lib.js", "export const x = 1;\n"}});
    auto sources = read_skill_sources(skill.dir(), "index.js", Limits{});
    ASSERT_TRUE(sources) << sources.error().message;
    EXPECT_EQ(sources->files.count("lib.js"), 1u) << entry;
  }
}

TEST(SkillSources, BareAndEscapingSpecifiersAndOtherFilesAreNotRead) {
  testing::TempSkill skill(
      {{"index.js",
        "import _ from 'lodash';\nimport u from '../up.js';\nimport d from './data.json';\n"
        "export default () => 1;\n"},
       {"data.json", "{}"},
       {"lodash", "x"}});
  skill.write("../up.js", "export default 1;");
  auto sources = read_skill_sources(skill.dir(), "index.js", Limits{});
  ASSERT_TRUE(sources) << sources.error().message;
  EXPECT_EQ(sources->files.size(), 1u);
  EXPECT_TRUE(sources->refused.empty());
  // The loader gives the reasons when the skill compiles, as it always did.
  EXPECT_EQ(engine::find_module_source(*sources, "data.json").error().message,
            "'data.json' is not a JavaScript file: modules of a skill end in .js, .mjs or .cjs");
}

TEST(SkillSources, TheEntryIsReadWhateverItsName) {
  testing::TempSkill skill({{"src/main.ts", "export default () => 1;"}}, "src/main.ts");
  auto sources = read_skill_sources(skill.dir(), "src/main.ts", Limits{});
  ASSERT_TRUE(sources) << sources.error().message;
  EXPECT_EQ(sources->files.at("src/main.ts"), "export default () => 1;");
}

TEST(SkillSources, ImportsThatCannotBeLoadedAreRefusedWithTheirReason) {
  testing::TempSkill skill({{"index.js",
                             "import './l1.js';\nimport './l2/secret.js';\nimport './l3.js';\n"
                             "import './big.js';\nimport './inside/x.js';\nimport './lib/x.js';\n"
                             "import './nope.js';\nimport './gone/y.js';\nimport './dangling.js';\n"},
                            {"big.js", std::string(300'000, ' ')}});
  std::filesystem::path outside = skill.dir().parent_path() / "secret.js";
  { std::ofstream(outside) << "secret"; }
  skill.symlink("l1.js", outside);
  skill.symlink("l2", "..");
  skill.symlink("l3.js", "/etc/passwd");
  skill.symlink("inside", "lib");
  skill.symlink("dangling.js", "nowhere.js");
  skill.write("lib/x.js", "X");
  auto sources = read_skill_sources(skill.dir(), "index.js", heap(Limits::kMinMemoryBytes));
  ASSERT_TRUE(sources) << sources.error().message;
  EXPECT_EQ(sources->refused,
            (std::map<std::string, std::string>{
                {"l1.js", "leads outside the skill folder"},
                {"l2", "leads outside the skill folder"},
                {"l3.js", "leads outside the skill folder"},
                {"big.js", "is too large (300000 bytes; limit is 262144 bytes)"},
                {"inside",
                 "is a symbolic link to a folder; skillbox does not follow links to folders when it reads a "
                 "skill's sources, so import the files by their own path"},
                {"nope.js", "does not exist in the skill folder"},
                {"gone/y.js", "does not exist in the skill folder"},
                {"dangling.js", "does not exist in the skill folder"}}));
  EXPECT_EQ(sources->files.at("lib/x.js"), "X");
  EXPECT_EQ(sources->files.size(), 2u);  // index.js and lib/x.js: nothing from outside
  // The loader's messages are the ones the engine gave when it read files itself.
  EXPECT_EQ(engine::find_module_source(*sources, "l2/secret.js").error().message,
            "'l2/secret.js' leads outside the skill folder");
  EXPECT_EQ(engine::find_module_source(*sources, "nope.js").error().message,
            "'nope.js' does not exist in the skill folder");
}

// Worker mode's supervisor serves the worker's SourcesRequests with one SourceReader per invocation:
// the byte cap holds over all its fetches, so a worker that asks again and again for big files is
// refused once the total would pass kMaxSourceTotalBytes, before that file is read.
TEST(SourceReader, TheByteCapHoldsAcrossFetches) {
  testing::TempSkill skill({{"index.js", ""}});
  const uint64_t third = kMaxSourceTotalBytes / 3 + 1;
  for (const char* name : {"a.js", "b.js", "c.js"})
    std::filesystem::resize_file(
        [&] {
          skill.write(name, "");
          return skill.dir() / name;
        }(),
        third);
  auto reader = SourceReader::open(skill.dir(), heap(kMaxSourceTotalBytes));
  ASSERT_TRUE(reader) << reader.error().message;
  bus::SkillSources pool;
  ASSERT_TRUE(reader->read_entry("index.js", pool));
  ASSERT_TRUE(reader->fetch({"a.js"}, pool));
  ASSERT_TRUE(reader->fetch({"b.js"}, pool));
  Result<void> third_fetch = reader->fetch({"c.js"}, pool);
  ASSERT_FALSE(third_fetch);
  EXPECT_NE(third_fetch.error().message.find("bytes of JavaScript (reached at 'c.js')"), std::string::npos)
      << third_fetch.error().message;
  EXPECT_EQ(pool.files.count("c.js"), 0u);
}

TEST(SkillSources, EntryProblemsAreReportedAsBefore) {
  testing::TempSkill skill({{"other.js", ""}});
  EXPECT_EQ(read_skill_sources(skill.dir(), "index.js", Limits{}).error().message,
            "entry file 'index.js' does not exist in the skill folder");
  EXPECT_EQ(read_skill_sources(skill.dir(), "../index.js", Limits{}).error().message,
            "entry: the path '../index.js' leads outside the skill folder");
  skill.write("big.js", std::string(2000, 'x'));
  EXPECT_EQ(read_skill_sources(skill.dir(), "big.js", heap(1000)).error().message,
            "entry file 'big.js' is too large (2000 bytes; limit is 1000 bytes)");
}

TEST(SkillSources, TheFileCountIsCapped) {
  std::string index;
  for (size_t i = 0; i < kMaxSourceFiles; ++i) index += "import './m/" + std::to_string(i) + ".js';\n";
  testing::TempSkill skill({{"index.js", index}});
  for (size_t i = 0; i < kMaxSourceFiles; ++i) skill.write("m/" + std::to_string(i) + ".js", "");
  auto sources = read_skill_sources(skill.dir(), "index.js", Limits{});
  ASSERT_FALSE(sources);
  EXPECT_EQ(
      sources.error().message,
      "the skill's entry imports more than 4096 files, directly or through other files; the limit is 4096");
}

TEST(SkillSources, NestingIsCapped) {
  std::string deep;
  for (size_t i = 0; i <= kMaxSourceDepth; ++i) deep += "d/";
  testing::TempSkill skill({{"index.js", "import './" + deep + "x.js';\n"}});
  skill.write(deep + "x.js", "");
  auto sources = read_skill_sources(skill.dir(), "index.js", Limits{});
  ASSERT_FALSE(sources);
  EXPECT_NE(sources.error().message.find("nested more than 32 folders deep"), std::string::npos)
      << sources.error().message;
}

TEST(SkillSources, UnimportedFilesBeyondEveryCapCostNothing) {
  // What made reading fail when every file of the folder was read: more files than the cap, folders
  // nested deeper than the cap, a link to a folder outside.
  testing::TempSkill skill({{"index.js", "export default () => 1;\n"}});
  for (size_t i = 0; i <= kMaxSourceFiles; ++i)
    skill.write("node_modules/m/" + std::to_string(i) + ".js", "");
  std::string deep = "node_modules/";
  for (size_t i = 0; i <= kMaxSourceDepth; ++i) deep += "d/";
  skill.write(deep + "x.js", "");
  skill.symlink("node_modules/.bin", "/usr/bin");
  auto sources = read_skill_sources(skill.dir(), "index.js", Limits{});
  ASSERT_TRUE(sources) << sources.error().message;
  EXPECT_EQ(sources->files.size(), 1u);
  EXPECT_TRUE(sources->refused.empty());
}

TEST(SkillSources, ReadingFromAThreadWithASmallStackParsesOnOneWithAJsStack) {
  // QuickJS's stack check assumes the skill's JS stack limit (512 KiB here) fits the thread's real
  // stack. Called on a thread of 128 KiB, the read parses on a thread of the runner's instead, so
  // nesting beyond the limit ends the parse with an error, never the host with SIGSEGV.
  std::string nested(100'000, '[');
  nested += std::string(100'000, ']');
  testing::TempSkill skill({{"index.js", "import './lib.js';\nexport default () => " + nested + ";\n"},
                            {"lib.js", "export default 1;\n"}});
  struct Call {
    const testing::TempSkill* skill;
    std::optional<Result<bus::SkillSources>> out;
  } call{&skill, std::nullopt};
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 128 * 1024), 0);
  pthread_t thread{};
  ASSERT_EQ(pthread_create(
                &thread, &attr,
                [](void* arg) -> void* {
                  auto* c = static_cast<Call*>(arg);
                  c->out.emplace(read_skill_sources(c->skill->dir(), "index.js", Limits{}));
                  return nullptr;
                },
                &call),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  ASSERT_TRUE(call.out.has_value());
  ASSERT_TRUE(*call.out) << call.out->error().message;
  EXPECT_EQ((*call.out)->files.count("lib.js"), 1u);
}

// A kernel without openat2 (or a seccomp profile that blocks it): reading fails closed, never
// falling back to a plain open that a symlink could redirect.
int openat2_enosys(int, const char*, uint64_t, uint64_t) {
  errno = ENOSYS;
  return -1;
}
int openat2_eperm(int, const char*, uint64_t, uint64_t) {
  errno = EPERM;
  return -1;
}

TEST(SkillSources, MissingOrBlockedOpenat2FailsClosed) {
  testing::TempSkill skill({{"index.js", "export default () => 1;"}});
  auto missing = read_skill_sources(skill.dir(), "index.js", Limits{}, &openat2_enosys);
  ASSERT_FALSE(missing);
  EXPECT_EQ(
      missing.error().message,
      "cannot read the skill's sources: the kernel refused openat2 (ENOSYS: not implemented, Linux 5.6 "
      "or later has it); skillbox needs it to keep every read inside the skill folder and does not fall "
      "back to a plain open");
  auto blocked = read_skill_sources(skill.dir(), "index.js", Limits{}, &openat2_eperm);
  ASSERT_FALSE(blocked);
  EXPECT_NE(blocked.error().message.find("openat2 (EPERM: blocked"), std::string::npos)
      << blocked.error().message;
  auto files = SkillFiles::open(skill.dir(), &openat2_enosys);
  ASSERT_TRUE(files);
  EXPECT_NE(files->read("index.js", 1 << 20).error().message.find("does not fall back to a plain open"),
            std::string::npos);
}

}  // namespace
}  // namespace skillbox::runner
