#include "engine/session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "bus/endpoint.h"
#include "engine/reply_inbox.h"
#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

// ---- entry, exports, input and results --------------------------------------------------------------

TEST(Session, ModuleDefaultExportGetsInputAndReturnsJson) {
  RunResult r = run_source("export default function (input) { return { hello: input.name, n: 1 + 1 }; }",
                           R"({"name":"Ada"})");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"({"hello":"Ada","n":2})");
  EXPECT_FALSE(r.error);
}

TEST(Session, RunIsCalledWhenThereIsNoDefaultExport) {
  RunResult r = run_source("export function run(x) { return x * 2; }", "21");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "42");
}

TEST(Session, NamedExportIsCalledWhenRequested) {
  TempSkill skill(
      {{"index.js", "export default () => 'd'; export function other(x) { return 'other ' + x; }"}});
  TestRunner runner;
  RunResult r = run(runner, skill, R"("arg")", "other");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("other arg")");
}

TEST(Session, MissingExportIsInvalidAndSaysWhatWasLookedFor) {
  RunResult r = run_source("export const x = 1;");
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->message, "index.js has no export named 'default' or 'run'; its exports are 'x'");

  TempSkill skill({{"index.js", "export default () => 1;"}});
  TestRunner runner;
  r = run(runner, skill, "null", "nope");
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->message, "index.js has no export named 'nope'; its exports are 'default'");

  r = run_source("const quiet = 1;\nexport {};");
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->message, "index.js has no export named 'default' or 'run'; it exports nothing");

  std::string many;
  for (int i = 0; i < 25; ++i)
    many += "export const e" + std::to_string(i) + " = " + std::to_string(i) + ";\n";
  r = run_source(many);
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_NE(r.error->message.find("'e0'"), std::string::npos) << r.error->message;
  EXPECT_NE(r.error->message.find(" and 5 more"), std::string::npos) << r.error->message;
}

TEST(Session, ExportThatIsNotAFunctionIsInvalid) {
  RunResult r = run_source("export default 42;");
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->message, "the export 'default' of index.js is a number, not a function");
}

TEST(Session, ClassicScriptExportsItsGlobalFunctions) {
  RunResult r =
      run_source("function helper(x) { return x + 1 }\nfunction run(input) { return helper(input); }", "1");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "2");
}

TEST(Session, ModuleOrScriptIsDecidedByExtensionThenBySource) {
  TestRunner runner;
  // An export declaration after other statements still makes a module (top-level `this` is undefined).
  TempSkill late_export({{"index.js", "const t = typeof this;\nexport default () => t;"}});
  RunResult r = run(runner, late_export);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("undefined")");

  TempSkill mjs({{"main.mjs", "const t = typeof this;\nexport default () => t;"}}, "main.mjs");
  r = run(runner, mjs);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("undefined")");

  // Sloppy-mode script: top-level `this` is the global object.
  TempSkill script({{"index.js", "var t = typeof this;\nfunction run() { return t; }"}});
  r = run(runner, script);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("object")");

  // .cjs is always a script, so an export declaration is a syntax error there (the skill is invalid).
  TempSkill cjs({{"main.cjs", "function run() { return 1 }\nexport default run;"}}, "main.cjs");
  r = run(runner, cjs);
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->name, "SyntaxError");
}

TEST(Session, AsyncExportIsAwaited) {
  RunResult r = run_source(
      "export default async (n) => { let s = 0; for (let i = 0; i < n; i++) s += await Promise.resolve(i); "
      "return s; }",
      "5");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "10");
}

TEST(Session, ThenableResultIsFollowed) {
  RunResult r = run_source("export default () => ({ then(resolve) { resolve('from thenable'); } })");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("from thenable")");
}

TEST(Session, UndefinedResultIsNull) {
  RunResult r = run_source("export default () => {}");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "null");
}

TEST(Session, ValuesJsonCannotRepresentAreErrorsThatSayWhy) {
  struct Case {
    const char* source;
    const char* message;
  } cases[] = {
      {"export default () => 10n",
       "the export's result cannot be represented as JSON: bigint are forbidden in JSON.stringify"},
      {"export default () => { const a = {}; a.self = a; return a; }",
       "the export's result cannot be represented as JSON: circular reference"},
      {"export default () => () => 1",
       "the export's result is a function, which JSON cannot represent; return plain data (objects, arrays, "
       "strings, numbers, booleans, null)"},
      {"export default () => Symbol('s')",
       "the export's result is a symbol, which JSON cannot represent; return plain data (objects, arrays, "
       "strings, numbers, booleans, null)"},
  };
  for (const Case& c : cases) {
    RunResult r = run_source(c.source);
    ASSERT_EQ(r.outcome, Outcome::error) << c.source << ": " << describe(r);
    EXPECT_EQ(r.error->message, c.message) << c.source;
    EXPECT_TRUE(r.value_json.empty());
  }
}

// `code` is reported only for errors the host made (tests/security/forged_codes_test.cpp): the one the
// skill sets here is not.
TEST(Session, ErrorsCarryNameMessageAndStackWithSkillRelativeNames) {
  TempSkill skill({{"index.js", "import { fail } from './lib/util.js';\nexport default () => fail();\n"},
                   {"lib/util.js",
                    "export function fail() {\n  const e = new RangeError('bad range');\n  e.code = "
                    "'E_RANGE';\n  throw e;\n}\n"}});
  TestRunner runner;
  RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->name, "RangeError");
  EXPECT_EQ(r.error->message, "bad range");
  EXPECT_EQ(r.error->code, "");
  EXPECT_NE(r.error->stack.find("at fail (lib/util.js:2)"), std::string::npos) << r.error->stack;
  EXPECT_NE(r.error->stack.find("at default (index.js"), std::string::npos) << r.error->stack;
  EXPECT_EQ(r.error->stack.find(skill.dir().string()), std::string::npos);
  EXPECT_EQ(r.error->stack.find('/' + std::string("tmp")), std::string::npos);
}

// A host error names the line of the skill that made the call, also when the host's answer comes
// later, from the event loop (where no frame of the skill runs): a rejection takes the stack of the
// call that made the request.
TEST(Session, HostErrorsCarryTheStackOfTheCallInTheSkill) {
  TempSkill skill(
      {{"index.js",
        "import { read, fetchIt, storeIt } from './lib/io.js';\n"
        "export async function fsMissing() {\n  return await read('nope.txt');\n}\n"
        "export async function httpDenied() {\n  return await fetchIt('https://denied.example.org/x');\n}\n"
        "export function storeBadArgs() {\n  return storeIt();\n}\n"
        "export async function caught() {\n  try { await read('nope.txt'); } catch (e) { return e.stack; "
        "}\n}\n"
        "export async function httpRefused() {\n  return await fetchIt('http://127.0.0.1:1/');\n}\n"},
       {"lib/io.js",
        "export async function read(p) {\n  return openhuman.fs.readFile(p);\n}\n"
        "export async function fetchIt(u) {\n  return openhuman.http.get(u);\n}\n"
        "export function storeIt() {\n  return store.set(42);\n}\n"}});
  skill.manifest().permissions.fs.mode = FsMode::read;
  skill.manifest().permissions.http.allow = {"https://api.example.com/", "http://127.0.0.1:1/"};
  skill.manifest().permissions.http.allow_private_addresses = true;
  TestRunner runner;

  RunResult r = run(runner, skill, "null", "fsMissing");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->name, "NotFound");
  EXPECT_EQ(r.error->code, "ENOENT");
  EXPECT_NE(r.error->stack.find("at read (lib/io.js:2)"), std::string::npos) << r.error->stack;
  EXPECT_NE(r.error->stack.find("at fsMissing (index.js:3)"), std::string::npos) << r.error->stack;

  r = run(runner, skill, "null", "httpDenied");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->name, "PermissionDenied");
  EXPECT_NE(r.error->stack.find("at fetchIt (lib/io.js:5)"), std::string::npos) << r.error->stack;
  EXPECT_NE(r.error->stack.find("at httpDenied (index.js:6)"), std::string::npos) << r.error->stack;

  r = run(runner, skill, "null", "storeBadArgs");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->name, "TypeError");
  EXPECT_NE(r.error->stack.find("at storeIt (lib/io.js:8)"), std::string::npos) << r.error->stack;
  EXPECT_NE(r.error->stack.find("at storeBadArgs (index.js:9)"), std::string::npos) << r.error->stack;

  // Refused by the loopback port's owner, not by policy: the answer always comes later (libcurl).
  r = run(runner, skill, "null", "httpRefused");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->name, "NetworkError");
  EXPECT_NE(r.error->stack.find("at fetchIt (lib/io.js:5)"), std::string::npos) << r.error->stack;
  EXPECT_NE(r.error->stack.find("at httpRefused (index.js:15)"), std::string::npos) << r.error->stack;

  // The skill sees the same stack on the error it catches.
  r = run(runner, skill, "null", "caught");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_NE(r.value_json.find("at read (lib/io.js:2)"), std::string::npos) << r.value_json;
  EXPECT_NE(r.value_json.find("at caught (index.js:12)"), std::string::npos) << r.value_json;
}

TEST(Session, AHostErrorsCallerStackIsBounded) {
  // A call made deep in recursion keeps the first frames only (Session::kCallerStackFrames).
  RunResult r = run_source(
      "function deep(n) {\n  if (n === 0) return openhuman.fs.readFile('x');\n  const p = deep(n - 1);\n  "
      "return p;\n}\n"
      "export default async () => { await deep(40); };\n");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_NE(r.error->stack.find("at deep (index.js:2)\n    at deep (index.js:3)"), std::string::npos)
      << r.error->stack;
  EXPECT_LE(std::count(r.error->stack.begin(), r.error->stack.end(), '\n'), 10) << r.error->stack;
}

TEST(Session, RejectionIsAnError) {
  RunResult r = run_source("export default async () => { await null; throw new TypeError('nope'); }");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->name, "TypeError");
  EXPECT_EQ(r.error->message, "nope");
}

TEST(Session, NonErrorThrownValuesAreDescribed) {
  RunResult r = run_source("export default () => { throw 'just a string'; }");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->name, "Error");
  EXPECT_EQ(r.error->message, "just a string");

  r = run_source("export default () => { throw { name: 'Custom', message: 'shaped like an error' }; }");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->name, "Custom");
  EXPECT_EQ(r.error->message, "shaped like an error");
}

TEST(Session, HostileErrorGettersDoNotBreakTheResult) {
  RunResult r = run_source(
      "export default () => { const e = new Error('m');"
      " Object.defineProperty(e, 'name', { get() { throw new Error('getter'); } });"
      " Object.defineProperty(e, 'stack', { get() { return 42; } }); throw e; }");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->name, "Error");
  EXPECT_EQ(r.error->message, "m");
  EXPECT_EQ(r.error->stack, "");
}

// Code that does not compile never ran: the skill is `invalid`, as `skillbox check` says, with the
// engine's name and message and the file and line where the parser stopped.
TEST(Session, SyntaxErrorInTheEntryIsInvalidWithFileAndLine) {
  RunResult r = run_source("export default () => {\n  return 1;\n  let = = 2;\n}\n");
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->name, "SyntaxError");
  EXPECT_EQ(r.error->message, "variable name expected");
  EXPECT_EQ(r.error->stack, "    at index.js:3\n");
  EXPECT_EQ(r.usage.steps, 0u);

  // A classic script (no import or export) that does not compile either.
  r = run_source("function run() {\n  return (;\n}\n");
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->name, "SyntaxError");
  EXPECT_NE(r.error->stack.find("index.js:2"), std::string::npos) << r.error->stack;
}

TEST(Session, SyntaxErrorInAnImportedFileIsInvalidAndNamesThatFile) {
  TempSkill skill(
      {{"index.js", "globalThis.ran = true;\nimport { x } from './lib/util.js';\nexport default () => x;\n"},
       {"lib/util.js", "export const x = 1;\nexport const y = (;\n"}});
  TestRunner runner;
  RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->name, "SyntaxError");
  EXPECT_EQ(r.error->stack, "    at lib/util.js:2\n");
  EXPECT_EQ(r.usage.steps, 0u);
}

TEST(Session, TopLevelAwaitIsInvalid) {
  // QuickJS 2021-03-27 has no top-level await (docs/limits.md "Entry and modules").
  RunResult r = run_source("const v = await Promise.resolve(1);\nexport default () => v;\n");
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->name, "SyntaxError");
  EXPECT_EQ(r.error->stack, "    at index.js:1\n");
}

TEST(Session, AnImportOfAMissingFileIsInvalidWithTheImportLine) {
  RunResult r = run_source("// helper\nimport { x } from './missing.js';\nexport default () => x;\n");
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->name, "InvalidSkill");
  EXPECT_NE(r.error->message.find("missing.js"), std::string::npos) << r.error->message;
  EXPECT_EQ(r.error->stack, "    at index.js:2\n");

  TempSkill skill({{"index.js", "import { x } from './lib/a.js';\nexport default () => x;\n"},
                   {"lib/a.js", "export const y = 1;\nexport { x } from 'lodash';\n"}});
  TestRunner runner;
  r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_NE(r.error->message.find("lodash"), std::string::npos) << r.error->message;
  EXPECT_EQ(r.error->stack, "    at lib/a.js:2\n");
}

TEST(Session, ASyntaxErrorThrownWhileRunningIsAnError) {
  // Thrown by code that ran: the skill compiled, so this is the run's error, not an invalid skill.
  RunResult r = run_source("export default () => {\n  return JSON.parse('{');\n};\n");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->name, "SyntaxError");
  EXPECT_NE(r.error->stack.find("index.js:2"), std::string::npos) << r.error->stack;

  r = run_source("export default () => new Function('{');\n");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->name, "SyntaxError");

  r = run_source("export default async () => { await null; return import('./missing.js'); };\n");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
}

TEST(Session, BadInputIsInvalidAndRunsNoSkillCode) {
  TempSkill skill({{"index.js", "globalThis.x = 1; export default (i) => i;"}});
  TestRunner runner;
  RunResult r = run(runner, skill, "{not json");
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->name, "InvalidInput");
  EXPECT_EQ(r.error->message.rfind("the input is not valid JSON: ", 0), 0u) << r.error->message;
  EXPECT_EQ(r.usage.steps, 0u);
}

TEST(Session, DeeplyNestedInputIsInvalidAndSaysItIsTooDeepNotMalformed) {
  TempSkill skill({{"index.js", "export default (i) => 1;"}});
  TestRunner runner;
  RunResult r = run(runner, skill, std::string(100000, '[') + std::string(100000, ']'));
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->name, "InvalidInput");
  EXPECT_EQ(r.error->message,
            "the input JSON is nested too deeply for the engine's parser; pass flatter input (or raise "
            "limits.stack_kb)");
  EXPECT_EQ(r.usage.steps, 0u);
  r = run(runner, skill, "[[[1]]]");
  EXPECT_EQ(r.outcome, Outcome::ok) << describe(r);
}

TEST(Session, MissingOrEscapingEntryIsInvalid) {
  TestRunner runner;
  TempSkill missing({{"other.js", ""}});
  RunResult r = run(runner, missing);
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->message, "entry file 'index.js' does not exist in the skill folder");

  TempSkill escaping({{"index.js", ""}}, "../index.js");
  r = run(runner, escaping);
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->message, "entry: the path '../index.js' leads outside the skill folder");
}

// ---- modules ----------------------------------------------------------------------------------------

TEST(SessionModules, RelativeImportsOfSkillFilesWork) {
  TempSkill skill(
      {{"index.js", "import { twice } from './lib/math.js';\nexport default (n) => twice(n);"},
       {"lib/math.js", "import { one } from '../one.js';\nexport const twice = (n) => 2 * n + one - 1;"},
       {"one.js", "export const one = 1;"}});
  TestRunner runner;
  RunResult r = run(runner, skill, "21");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "42");
}

TEST(SessionModules, DynamicImportOfASkillFileWorks) {
  TempSkill skill({{"index.js", "export default async () => (await import('./lib.js')).value;"},
                   {"lib.js", "export const value = 'dynamic';"}});
  TestRunner runner;
  RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("dynamic")");
}

TEST(SessionModules, StaticImportsOutsideTheSkillFailTheLoad) {
  struct Case {
    const char* import;
    const char* message;
  } cases[] = {
      {"std",
       "cannot import 'std': only files of the skill can be imported, with a relative specifier such as "
       "'./lib.js' (there are no built-in modules)"},
      {"os",
       "cannot import 'os': only files of the skill can be imported, with a relative specifier such as "
       "'./lib.js' (there are no built-in modules)"},
      {"/etc/passwd",
       "cannot import '/etc/passwd': absolute paths are not allowed; import files of the skill with "
       "'./' or '../'"},
      {"../outside.js", "cannot import '../outside.js': it leads outside the skill folder"},
  };
  for (const Case& c : cases) {
    TempSkill skill(
        {{"index.js", std::string("import x from '") + c.import + "';\nexport default () => x;"}});
    skill.write("../outside.js", "export default 'outside';");
    TestRunner runner;
    RunResult r = run(runner, skill);
    // Nothing ran: the skill's static imports cannot be satisfied, as `skillbox check` says.
    ASSERT_EQ(r.outcome, Outcome::invalid) << c.import << ": " << describe(r);
    EXPECT_EQ(r.error->name, "InvalidSkill") << c.import;
    EXPECT_EQ(r.error->message, c.message);
  }
}

TEST(SessionModules, DynamicImportsOutsideTheSkillReject) {
  TempSkill skill(
      {{"index.js",
        "export default async () => { const out = [];\n"
        "  for (const s of ['std', 'os', '../outside.js', '/etc/passwd', './link.js', './missing.js',\n"
        "                   'file:///etc/passwd']) {\n"
        "    try { await import(s); out.push(s + ': loaded'); } catch (e) { out.push(s + ': ' + e.name); }\n"
        "  }\n  return out; }"}});
  skill.write("../outside.js", "export default 1;");
  skill.symlink("link.js", "../outside.js");
  TestRunner runner;
  RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json,
            R"(["std: TypeError","os: TypeError","../outside.js: TypeError","/etc/passwd: TypeError",)"
            R"("./link.js: ReferenceError","./missing.js: ReferenceError","file:///etc/passwd: TypeError"])");
}

TEST(SessionModules, SymlinkOutOfTheFolderIsRefusedWithoutAHostPath) {
  TempSkill skill({{"index.js", "import x from './link.js';\nexport default () => x;"}});
  skill.write("../outside.js", "export default 'outside';");
  skill.symlink("link.js", "../outside.js");
  TestRunner runner;
  RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->message, "cannot load module: 'link.js' leads outside the skill folder");
}

// ---- the Bridge: host requests through the bus -------------------------------------------------------

// Answers a Session's requests with a test function, as runner::HostEndpoint answers them with
// capabilities. Returning a reply answers at once; returning nullopt makes the request asynchronous:
// the test later calls sink.complete(id, reply), from any thread.
using Handler = std::function<std::optional<bus::Reply>(uint64_t, const bus::Request&, bus::CompletionSink&)>;

class TestEndpoint final : public bus::Endpoint {
 public:
  TestEndpoint(Handler handler, bus::CompletionSink& sink) : handler_(std::move(handler)), sink_(sink) {}
  std::optional<bus::Reply> send(uint64_t id, bus::Request request) override {
    return handler_(id, request, sink_);
  }
  void cancel_all() override {}

 private:
  Handler handler_;
  bus::CompletionSink& sink_;
};

// describe() for the engine's own result: the same text as for a RunResult.
std::string describe(const engine::SessionResult& s) {
  RunResult r;
  r.outcome = s.outcome;
  r.value_json = s.value_json;
  r.error = s.error;
  return testing::describe(r);
}

// Runs `sources` directly on a Session (no runner, no skill folder on disk), with test bindings:
//   __sync(name)  -> bridge.call(EnvGetRequest{name}), returns the string or null
//   __async(name) -> bridge.call_async(EnvGetRequest{name}), a promise of the string
// Requests are answered by `handler`.
engine::SessionResult run_sources(bus::SkillSources sources, Handler handler, uint64_t timeout_ms = 10'000) {
  engine::DeadlineFlag flag;
  engine::SessionParams p;
  p.call = engine::Call{.skill_id = "test", .export_name = "", .input_json = "null"};
  p.limits = Manifest{}.limits;
  p.deadline = engine::Clock::now() + std::chrono::milliseconds(timeout_ms);
  p.deadline_flag = &flag;
  p.sources = std::move(sources);
  p.install_extra_api = [](JSContext* ctx) {
    JSCFunction* sync = [](JSContext* c, JSValueConst, int, JSValueConst* argv) -> JSValue {
      const char* s = JS_ToCString(c, argv[0]);
      if (!s) return JS_EXCEPTION;
      bus::Reply reply = bindings::bridge(c).call(bus::EnvGetRequest{s});
      JS_FreeCString(c, s);
      if (auto* e = std::get_if<bus::ErrorReply>(&reply)) return bindings::throw_host_error(c, *e);
      auto& v = std::get<bus::OptionalStringReply>(reply).value;
      return v ? JS_NewString(c, v->c_str()) : JS_NULL;
    };
    JSCFunction* async = [](JSContext* c, JSValueConst, int, JSValueConst* argv) -> JSValue {
      const char* s = JS_ToCString(c, argv[0]);
      if (!s) return JS_EXCEPTION;
      JSValue promise =
          bindings::bridge(c).call_async(c, bus::EnvGetRequest{s}, [](JSContext* c2, bus::Reply& r) {
            auto& v = std::get<bus::OptionalStringReply>(r).value;
            return v ? JS_NewString(c2, v->c_str()) : JS_NULL;
          });
      JS_FreeCString(c, s);
      return promise;
    };
    JSValue global = JS_GetGlobalObject(ctx);
    JS_SetPropertyStr(ctx, global, "__sync", JS_NewCFunction(ctx, sync, "__sync", 1));
    JS_SetPropertyStr(ctx, global, "__async", JS_NewCFunction(ctx, async, "__async", 1));
    JS_FreeValue(ctx, global);
  };
  engine::ReplyInbox inbox;
  TestEndpoint endpoint(std::move(handler), inbox);
  return engine::run_session(std::move(p), endpoint, inbox);
}

// `source` as the whole skill (index.js), run with run_sources.
engine::SessionResult run_with_bridge(const std::string& source, Handler handler,
                                      uint64_t timeout_ms = 10'000) {
  return run_sources(bus::SkillSources{.entry = "index.js", .files = {{"index.js", source}}, .refused = {}},
                     std::move(handler), timeout_ms);
}

std::optional<bus::Reply> no_requests(uint64_t, const bus::Request&, bus::CompletionSink&) {
  ADD_FAILURE() << "unexpected host request";
  return bus::ErrorReply{};
}

std::string request_name(const bus::Request& r) {
  return std::get<bus::EnvGetRequest>(r).name;
}

TEST(SessionBridge, SynchronousCallsReturnTheReplyOrThrowTheHostError) {
  engine::SessionResult r = run_with_bridge(
      "export default () => { const out = [__sync('A')];\n"
      "  try { __sync('DENIED') } catch (e) { out.push(e.name, e.code, e.message, e instanceof Error) }\n"
      "  return out; }",
      [](uint64_t, const bus::Request& req, bus::CompletionSink&) -> std::optional<bus::Reply> {
        if (request_name(req) == "DENIED")
          return bus::ErrorReply{bus::ErrorCode::PermissionDenied, "env.get('DENIED') is not granted"};
        return bus::OptionalStringReply{"value of " + request_name(req)};
      });
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json,
            R"(["value of A","PermissionDenied","EACCES","env.get('DENIED') is not granted",true])");
}

TEST(SessionBridge, AsynchronousRepliesFromOtherThreadsSettleInTheEventLoop) {
  std::vector<std::thread> threads;
  engine::SessionResult r = run_with_bridge(
      "export default async () => {\n"
      "  const a = __async('slow'), b = __async('fast'), c = __async('err');\n"
      "  let err; try { await c } catch (e) { err = e.name + '/' + e.code }\n"
      "  return [await a, await b, err]; }",
      [&](uint64_t id, const bus::Request& req, bus::CompletionSink& sink) -> std::optional<bus::Reply> {
        std::string name = request_name(req);
        threads.emplace_back([id, name, &sink] {
          std::this_thread::sleep_for(std::chrono::milliseconds(name == "slow" ? 50 : 5));
          if (name == "err") {
            sink.complete(id, bus::ErrorReply{bus::ErrorCode::Timeout, "too slow"});
          } else {
            sink.complete(id, bus::OptionalStringReply{name});
          }
        });
        return std::nullopt;
      });
  for (auto& t : threads) t.join();
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"(["slow","fast","Timeout/ETIMEDOUT"])");
}

TEST(SessionBridge, RequestsStillPendingWhenTheRunEndsAreDroppedAndTheRunDoesNotWait) {
  std::atomic<int> asked{0};
  engine::SessionResult r =
      run_with_bridge("export default () => { __async('never'); return 'done'; }",
                      [&](uint64_t, const bus::Request&, bus::CompletionSink&) -> std::optional<bus::Reply> {
                        ++asked;
                        return std::nullopt;  // never completed
                      });
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("done")");
  EXPECT_EQ(asked.load(), 1);
}

TEST(SessionBridge, AwaitingARequestThatNeverCompletesEndsAtTheDeadline) {
  engine::SessionResult r = run_with_bridge(
      "export default async () => await __async('never')",
      [&](uint64_t, const bus::Request&, bus::CompletionSink&) -> std::optional<bus::Reply> {
        return std::nullopt;
      },
      200);
  ASSERT_EQ(r.outcome, Outcome::timeout) << describe(r);
}

// ---- sources in memory: the engine opens no file ---------------------------------------------------

// The Session has no folder to open (engine::Call names none): static and dynamic imports alike come
// from the sources.
TEST(SessionSources, ModulesComeFromMemory) {
  engine::SessionResult r = run_sources(
      bus::SkillSources{
          .entry = "index.js",
          .files = {{"index.js",
                     "import { twice } from './lib/math.js';\n"
                     "export default async () => [twice(21), (await import('./lib/late.mjs')).late];"},
                    {"lib/math.js", "export const twice = (n) => 2 * n;"},
                    {"lib/late.mjs", "export const late = 'dynamic';"}},
          .refused = {}},
      no_requests);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"([42,"dynamic"])");
}

TEST(SessionSources, AStaticImportTheHostFoundMissingIsInvalidWithItsReason) {
  engine::SessionResult r = run_sources(
      bus::SkillSources{.entry = "index.js",
                        .files = {{"index.js", "import x from './missing.js';\nexport default () => x;"}},
                        .refused = {{"missing.js", "does not exist in the skill folder"}}},
      no_requests);
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->name, "InvalidSkill");
  EXPECT_EQ(r.error->message, "cannot load module: 'missing.js' does not exist in the skill folder");
}

// The host reads the entry's module graph (runner/skill_reader.h): a name it never looked for can only
// come from an import() with a computed specifier, and the message says so.
TEST(SessionSources, AComputedImportOfAFileOutsideTheGraphSaysWhy) {
  engine::SessionResult r = run_sources(
      bus::SkillSources{
          .entry = "index.js",
          .files =
              {{"index.js",
                "export default async () => { const n = 'other';\n"
                "  try { await import('./' + n + '.js'); } catch (e) { return [e.name, e.message]; } };"}},
          .refused = {}},
      no_requests);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(
      r.value_json,
      R"(["ReferenceError","cannot load module: 'other.js' is not among the skill's sources (the entry )"
      R"(and the files it imports by a string literal, transitively): import() with a computed specifier )"
      R"(loads only those"])");
}

TEST(SessionSources, RefusedNamesFailWithTheirReasonAlsoForNamesBelowThem) {
  engine::SessionResult r = run_sources(
      bus::SkillSources{
          .entry = "index.js",
          .files = {{"index.js",
                     "export default async () => { const out = [];\n"
                     "  for (const s of ['./link.js', './up/secret.js', './notes.txt']) {\n"
                     "    try { await import(s); out.push('loaded'); } catch (e) { out.push(e.message) }\n"
                     "  }\n  return out; }"}},
          .refused = {{"link.js", "leads outside the skill folder"},
                      {"up", "leads outside the skill folder"}}},
      no_requests);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(
      r.value_json,
      R"(["cannot load module: 'link.js' leads outside the skill folder",)"
      R"("cannot load module: 'up/secret.js' leads outside the skill folder",)"
      R"("cannot load module: 'notes.txt' is not a JavaScript file: modules of a skill end in .js, .mjs or .cjs"])");
}

TEST(SessionSources, AnEntryMissingFromTheSourcesIsInvalid) {
  engine::SessionResult r =
      run_sources(bus::SkillSources{.entry = "main.js", .files = {}, .refused = {}}, no_requests);
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->name, "InvalidSkill");
  EXPECT_EQ(r.error->message, "entry file 'main.js' does not exist in the skill folder");
}

}  // namespace
}  // namespace skillbox::testing
