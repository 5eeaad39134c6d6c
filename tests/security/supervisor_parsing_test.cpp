// Red-team regression: in worker mode the supervisor never parses skill code. The module graph walk
// needs QuickJS's parser (engine/module_requests.h), the engine's attack surface with a history of
// memory-safety bugs; the supervisor holds the host's secrets, so the parse runs in the sandboxed
// worker and the supervisor only reads the files the worker asks for (docs/isolation.md "What the
// supervisor does"). The observable is the process-wide count of files parsed
// (engine::ModuleRequestParser::parses_in_this_process): the supervisor is this test process, a
// worker is another one, so a parse in the supervisor would move it.
#include <gtest/gtest.h>

#include <string>

#include "engine/module_requests.h"
#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

using engine::ModuleRequestParser;

HostOptions worker_options() {
  HostOptions o;
  o.worker_path = SKILLBOX_WORKER_PATH;
  o.worker_pool_size = 1;
  return o;
}

// A graph across folders, and a file whose nesting the parser cannot get through: in the host that
// would be the parser's recursion on hostile input.
TempSkill graph_skill() {
  const std::string nested = std::string(100'000, '[') + std::string(100'000, ']');
  return TempSkill({{"index.js",
                     "import { a } from './lib/a.js';\nexport default async () => {\n"
                     "  let deep = 'ok';\n  try { await import('./deep.js'); } catch (e) { deep = e.name; }\n"
                     "  return [a, deep];\n};\n"},
                    {"lib/a.js", "import { b } from './b/c.js';\nexport const a = 'a' + b;\n"},
                    {"lib/b/c.js", "export const b = 'c';\n"},
                    {"deep.js", "export const x = " + nested + ";\n"}});
}

TEST(WorkerSupervisorParsesNoSkillCode, TheGraphIsWalkedInTheWorker) {
  TempSkill skill = graph_skill();
  WorkerRunner runner(worker_options());
  const uint64_t before = ModuleRequestParser::parses_in_this_process();
  for (int i = 0; i < 2; ++i) {  // a cold source cache, then a warm one
    RunResult r = run(runner, skill);
    ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
    EXPECT_EQ(r.value_json, R"(["ac","SyntaxError"])") << "run " << i;
  }
  EXPECT_EQ(ModuleRequestParser::parses_in_this_process(), before)
      << "the supervisor parsed skill code; in worker mode only the worker may";

  // The observable is honest: in-process the host is where the engine runs, and it does parse there.
  InProcessRunner in_process;
  RunResult r = run(in_process, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"(["ac","SyntaxError"])");
  EXPECT_GE(ModuleRequestParser::parses_in_this_process(), before + 4);
}

// An edit after the supervisor cached what it served: the next worker walks the new graph, and the
// supervisor still parses nothing.
TEST(WorkerSupervisorParsesNoSkillCode, AnEditedGraphIsWalkedAgainInTheWorker) {
  TempSkill skill({{"index.js", "import { a } from './a.js';\nexport default () => a;\n"},
                   {"a.js", "export const a = 'one';\n"},
                   {"b.js", "export const b = 'two';\n"}});
  WorkerRunner runner(worker_options());
  const uint64_t before = ModuleRequestParser::parses_in_this_process();
  RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("one")");
  skill.write("a.js", "import { b } from './b.js';\nexport const a = 'one+' + b;\n");
  r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("one+two")");
  skill.write("a.js", "import { c } from './c.js';\nexport const a = c;\n");
  r = run(runner, skill);
  EXPECT_EQ(r.outcome, Outcome::invalid) << describe(r);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("'c.js' does not exist in the skill folder"), std::string::npos)
      << r.error->message;
  EXPECT_EQ(ModuleRequestParser::parses_in_this_process(), before);
}

}  // namespace
}  // namespace skillbox::testing
