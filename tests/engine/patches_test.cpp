// One test (or more) per engine patch in patches/ (see docs/engine-patches.md). Each fails, hangs or
// crashes without its patch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

constexpr uint64_t kHugeSteps = Limits::kMaxSteps;

RunResult run_with(Runner& runner, const std::string& source, uint64_t steps, uint64_t timeout_ms,
                   uint64_t memory_bytes = Limits{}.memory_bytes) {
  TempSkill skill({{"index.js", source}});
  skill.manifest().limits.steps = steps;
  skill.manifest().limits.timeout_ms = timeout_ms;
  skill.manifest().limits.memory_bytes = memory_bytes;
  return run(runner, skill);
}

void expect_next_run_normal(Runner& runner) {
  RunResult r = run_with(runner, "export default () => 'normal'", Limits{}.steps, Limits{}.timeout_ms);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("normal")");
}

bool abandoned(const RunResult& r) {
  return r.error && r.error->message.find("abandoned") != std::string::npos;
}

// 0001
TEST(EnginePatches, CatastrophicRegexpEndsAsStepLimit) {
  TestRunner runner;
  RunResult r =
      run_with(runner, "export default () => /^(a+)+$/.test('a'.repeat(40) + '!')", 1'000'000, 60'000);
  ASSERT_EQ(r.outcome, Outcome::step_limit) << describe(r);
  EXPECT_GE(r.usage.steps, 1'000'000u);
  EXPECT_LT(r.usage.steps, 1'000'000u + 10'000u);
  expect_next_run_normal(runner);
}

TEST(EnginePatches, CatastrophicRegexpEndsAsTimeout) {
  TestRunner runner;
  RunResult r =
      run_with(runner, "export default () => /^(a+)+$/.test('a'.repeat(40) + '!')", kHugeSteps, 200);
  ASSERT_EQ(r.outcome, Outcome::timeout) << describe(r);
  EXPECT_FALSE(abandoned(r));
  expect_next_run_normal(runner);
}

TEST(EnginePatches, RegexpStillMatchesAndReportsNoFalseErrors) {
  RunResult r = run_source(
      "export default () => [/^(a+)+$/.test('a'.repeat(30)), 'x-aab-y'.replace(/(a+)(b)/g, '[$1|$2]'),\n"
      "  'a1b22c333'.split(/\\d+/), /(\\w+)@(\\w+)\\.com/.exec('mail bob@example.com now')[2]]");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"([true,"x-[aa|b]-y",["a","b","c",""],"example"])");
}

// 0002
TEST(EnginePatches, StackOverflowCannotBeCaughtAndEndsTheRun) {
  TestRunner runner;
  for (const char* source : {
           "export default () => { const f = () => f(); try { f() } catch (e) { return 'caught ' + e.message "
           "} }",
           "export default () => { const f = () => f(); try { f() } finally { return 'finally' } }",
           "export default async () => { const f = async () => f(); try { await f() } catch (e) { return "
           "'caught' } }",
           "export default () => { let g = function () { return g() }; for (let i = 0; i < 10; i++) g = "
           "g.bind(null);"
           " try { g() } catch (e) { return 'caught' } }",
       }) {
    RunResult r = run_with(runner, source, Limits{}.steps, 10'000);
    ASSERT_EQ(r.outcome, Outcome::stack_overflow) << source << ": " << describe(r);
    EXPECT_TRUE(r.value_json.empty());
  }
  expect_next_run_normal(runner);
}

// 0003
TEST(EnginePatches, HugeSparseArrayJoinIsInterrupted) {
  TestRunner runner;
  // With a heap that never fills, only the step budget can stop the join.
  RunResult r = run_with(runner, "export default () => new Array(1e9).join()", 1'000'000, 60'000,
                         Limits::kMaxMemoryBytes);
  ASSERT_EQ(r.outcome, Outcome::step_limit) << describe(r);
  expect_next_run_normal(runner);
}

TEST(EnginePatches, ArrayLikeLoopsOverHolesAreInterrupted) {
  TestRunner runner;
  for (const char* source : {
           "export default () => Array.prototype.indexOf.call({ length: 2 ** 40 }, 1)",
           "export default () => Array.prototype.lastIndexOf.call({ length: 2 ** 31 }, 1)",
           "export default () => Array.prototype.includes.call({ length: 2 ** 40 }, 1)",
           "export default () => Array.prototype.forEach.call({ length: 2 ** 40 }, () => {})",
           "export default () => new Array(2 ** 31).every(() => false)",
       }) {
    RunResult r = run_with(runner, source, 1'000'000, 60'000);
    ASSERT_EQ(r.outcome, Outcome::step_limit) << source << ": " << describe(r);
  }
  expect_next_run_normal(runner);
}

// 0004
TEST(EnginePatches, DeepJsonStringifyIsACatchableError) {
  TestRunner runner;
  RunResult r =
      run_with(runner,
               "export default () => { let a = []; for (let i = 0; i < 1e5; i++) a = [a];\n"
               "  try { return JSON.stringify(a).length } catch (e) { return e.name + ': ' + e.message } }",
               Limits{}.steps, 30'000);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("InternalError: stack overflow")");
  expect_next_run_normal(runner);
}

TEST(EnginePatches, ArrayIsArrayOnAProxyChainIsAStackOverflowNotACrash) {
  TestRunner runner;
  RunResult r =
      run_with(runner,
               "export default () => { let p = []; for (let i = 0; i < 2e5; i++) p = new Proxy(p, {});\n"
               "  return Array.isArray(p); }",
               // 200,000 proxies with their handlers: room for them under AddressSanitizer too, where
               // every block is a separate malloc with the arena's 32-byte prefix (engine/arena.h).
               Limits{}.steps, 30'000, 128ull * 1024 * 1024);
  // An optimizing compiler may turn the recursion into a loop (tail call): then the answer is
  // simply true. Without optimization (debug and sanitizer builds) it recurses once per proxy and,
  // without the patch, overflows the native stack.
  if (r.outcome == Outcome::ok) {
    EXPECT_EQ(r.value_json, "true");
  } else {
    EXPECT_EQ(r.outcome, Outcome::stack_overflow) << describe(r);
  }
  expect_next_run_normal(runner);
}

// 0005
TEST(EnginePatches, InterruptStaysUncatchableWhenAllocationsFail) {
  TestRunner runner;
  // After the deadline every allocation fails, so the "interrupted" error cannot be allocated.
  RunResult r = run_with(runner, "export default () => { for (;;) { try { for (;;) {} } catch (e) {} } }",
                         kHugeSteps, 200);
  ASSERT_EQ(r.outcome, Outcome::timeout) << describe(r);
  EXPECT_FALSE(abandoned(r)) << describe(r);
  expect_next_run_normal(runner);
}

TEST(EnginePatches, ErrorsWithoutMemoryForTheirObjectDoNotCrash) {
  TestRunner runner;
  // A 4 GiB heap and no step budget: the watchdog's allocation refusal ends the join, and each refused
  // allocation throws an error whose object cannot be allocated either.
  RunResult r =
      run_with(runner, "export default () => new Array(1e9) + ''", kHugeSteps, 300, Limits::kMaxMemoryBytes);
  ASSERT_EQ(r.outcome, Outcome::timeout) << describe(r);
  EXPECT_FALSE(abandoned(r)) << describe(r);
  expect_next_run_normal(runner);
}

// 0007, 0008: undefined behaviour that UBSan reports. These runs pass in every build; in the `asan`
// preset (-fsanitize=address,undefined) ctest sets UBSAN_OPTIONS=halt_on_error=1, so without the
// patches the report aborts the test process.
TEST(EnginePatches, TypeofComparisonsCompileWithoutSignedOverflow) {
  // `typeof x == 'undefined'` is optimized with a mask of four opcodes that included OP_neq (170)
  // shifted left by 24 into an int.
  RunResult r = run_source(
      "export default () => { let u; const f = () => 1; return [typeof u == 'undefined',\n"
      "  typeof u != 'undefined', typeof f === 'function', typeof f !== 'function', typeof 's' == 'string'] "
      "}");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "[true,false,true,false,true]");
}

TEST(EnginePatches, ZeroLengthCopiesPassNoNullPointer) {
  // bf_set() of a BigInt zero (no limbs, NULL tab), the variable table of a function without
  // arguments or locals, ''.normalize(): each called memcpy() with NULL and a count of 0.
  RunResult r = run_source(
      "function none() { return 7 }\n"
      "export default () => [String(-0n), String(0n * 5n), String(BigInt(0) + 1n), String(0n ** 2n),\n"
      "  ''.normalize(), 'caf\\u00e9'.normalize('NFC').length, none()]");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"(["0","0","1","0","",4,7])");
}

// 0013: every native function returning a double (Math.*, Date.now(), arithmetic on the host's
// side) goes through JS_NewFloat64, which cast the double to int32_t before checking that it fits:
// undefined behaviour for anything outside the int32 range and for NaN (UBSan reports it under the
// asan preset, where ctest sets halt_on_error). The values must still come back exact, with -0 kept
// as a double and integral doubles inside the range still stored as integers.
TEST(EnginePatches, DoublesOutsideTheInt32RangeAreNotCastToInt) {
  RunResult r = run_source(
      "export default () => [Math.floor(1e12), Math.pow(2, 53), Math.pow(2, 31), -Math.pow(2, 31) - 1,\n"
      "  Number.isNaN(Math.sqrt(-1)), Object.is(Math.round(-0.1), -0), Math.abs(-2147483648),\n"
      "  Math.floor(-2147483648.5), Math.floor(2147483647.5), Date.now() > 1e12, Math.max(1e300, 1) === "
      "1e300,\n"
      "  Math.floor(Infinity) === Infinity]");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json,
            "[1000000000000,9007199254740992,2147483648,-2147483649,true,true,2147483648,-2147483649,"
            "2147483647,true,true,true]");
}

// 0014: the other conversions of a double to an integer type that the engine did before checking the
// range (UBSan under the asan preset): an array length of 1e10 or -1, number-to-string of 1e21, Date
// fields with a huge or non-finite year or month (which also overflowed days_from_year), a local
// time far outside the time value range, and 2**63 taken as fitting int64_t. Results as the spec says.
TEST(EnginePatches, DoublesAreRangeCheckedBeforeIntegerConversion) {
  RunResult r = run_source(
      "const t = (f) => { try { return String(f()) } catch (e) { return e.name } };\n"
      "export default () => [\n"
      "  t(() => { const a = []; a.length = 1e10; }), t(() => { const a = []; a.length = -1; }),\n"
      "  t(() => { const a = []; a.length = 2 ** 32; }), t(() => { const a = [1]; a.length = 2 ** 32 - 1;\n"
      "    return a.length }), t(() => new Array(1e10)),\n"
      "  (1e21).toString(), (2 ** 63).toString(), String(-(2 ** 53)), String(2 ** 53 + 2),\n"
      "  Date.UTC(1e300, 0), new Date(1e300, 0).getTime(), Date.UTC(2020, NaN), Date.UTC(2020, 1e300),\n"
      "  Date.UTC(-1e300, 0), new Date(2020, 0).setFullYear(1e300), new Date(2020, 0, 1e300).getTime(),\n"
      "  Date.UTC(275760, 8, 13), Date.UTC(275760, 8, 14), Date.UTC(2020, 14, 1) === Date.UTC(2021, 2, 1),\n"
      "  [1, 2, 3].slice(2 ** 63).length, [1, 2, 3].indexOf(3, -(2 ** 63)),\n"
      "  Array.prototype.lastIndexOf.call({ length: 3, 0: 1 }, 1, 2 ** 63)]");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(
      r.value_json,
      R"(["RangeError","RangeError","RangeError","4294967295","RangeError","1e+21","9223372036854776000",)"
      R"("-9007199254740992","9007199254740994",null,null,null,null,null,null,null,8640000000000000,null,)"
      R"(true,0,2,0])");
}

// 0015: the Unicode property tables are read 3 bytes per entry; the first two were loaded as one
// uint16_t, misaligned for every other entry (UBSan, found by fuzz/js_eval). Identifiers outside
// ASCII, case mapping with a final sigma and normalization all look entries up.
TEST(EnginePatches, UnicodeTablesAreReadWithoutMisalignedLoads) {
  RunResult r = run_source(
      "const \u00f1and\u00fa = 1, \u03b1\u03b2\u03b3 = 2, \u0905\u0906 = 3;\n"
      "export default () => {\n"
      "  let decomposed = 0, cased = 0;\n"
      "  for (let c = 0xc0; c < 0x3000; c++) {\n"
      "    const s = String.fromCharCode(c);\n"
      "    if (s.normalize('NFD').length > 1) decomposed++;\n"
      "    if (s.toLowerCase() !== s.toUpperCase()) cased++;\n"
      "  }\n"
      "  return [\u00f1and\u00fa + \u03b1\u03b2\u03b3 + \u0905\u0906, '\u0391\u03a3'.toLowerCase() === "
      "'\u03b1\u03c2',\n"
      "    'e\u0301'.normalize('NFC') === '\u00e9', decomposed > 500, cased > 1000];\n"
      "};");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "[6,true,true,true,true]");
}

// 0009: a deadline inside JSON.stringify of a large object graph. After the deadline every
// allocation is refused; the array branch then leaked the element it had just read when the key
// string could not be allocated, and JS_FreeRuntime (debug and sanitizer builds) aborted on its GC
// list assertion. LeakSanitizer reports the same leak at exit. The sweep moves the deadline across
// the whole stringify, in the skill and in the host's serialization of the result.
TEST(EnginePatches, DeadlineInsideJsonStringifyLeavesNothingBehind) {
  TestRunner runner;
  const std::string graph =
      "const t0 = Date.now();\n"
      "const graph = () => { const a = []; for (let i = 0; i < 1000; i++)\n"
      "  a.push({ i, s: 'v' + i, sub: [i, { j: i }], more: [{}, [], { k: [1, 2] }] }); return a; };\n";
  // How long building the graph and one stringify take on this machine (sanitizers, load), so that
  // the sweep lands inside the stringify whatever the speed.
  RunResult probe = run_with(runner,
                             graph +
                                 "export default () => { const g = graph(); const t1 = Date.now();\n"
                                 "  JSON.stringify(g); return [t1 - t0, Date.now() - t1]; }",
                             kHugeSteps, 60'000);
  ASSERT_EQ(probe.outcome, Outcome::ok) << describe(probe);
  const size_t comma = probe.value_json.find(',');
  ASSERT_NE(comma, std::string::npos) << probe.value_json;
  const uint64_t build_ms = std::stoull(probe.value_json.substr(1, comma - 1));
  const uint64_t stringify_ms = std::max<uint64_t>(1, std::stoull(probe.value_json.substr(comma + 1)));

  for (uint64_t k = 0; k < 10; ++k) {
    const uint64_t ms = build_ms + 5 + k * std::max<uint64_t>(1, stringify_ms / 3);
    RunResult r =
        run_with(runner, graph + "export default () => { const g = graph(); for (;;) JSON.stringify(g); }",
                 kHugeSteps, ms);
    ASSERT_EQ(r.outcome, Outcome::timeout) << ms << ": " << describe(r);
  }
  // The export returns the graph at about the deadline, so that the host serializes it as the
  // deadline passes.
  const uint64_t timeout = build_ms + 4 * stringify_ms + 300;
  const uint64_t window = 4 * stringify_ms + 200;
  int ok = 0;
  for (uint64_t k = 0; k <= 10; ++k) {
    TempSkill skill({{"index.js", graph + "export default (ms) => { const g = graph();\n"
                                          "  while (Date.now() < t0 + ms) {} return g; }"}});
    skill.manifest().limits.steps = kHugeSteps;
    skill.manifest().limits.timeout_ms = timeout;
    RunResult r = run(runner, skill, std::to_string(timeout - window + k * window / 10));
    ASSERT_TRUE(r.outcome == Outcome::ok || r.outcome == Outcome::timeout) << k << ": " << describe(r);
    if (r.outcome == Outcome::ok) {
      EXPECT_EQ(r.value_json.substr(0, 12), R"([{"i":0,"s":)");
      ++ok;
    }
  }
  EXPECT_GT(ok, 0);  // the sweep crossed from finishing in time to running out of it
  expect_next_run_normal(runner);
}

// Not a patch: JSON.stringify of 2021-03-27 is already well-formed (ES2019): a lone surrogate is
// written as a \uXXXX escape, a pair as the character. A result holding one must come back as that
// escape, never as null.
TEST(EnginePatches, JsonStringifyIsWellFormed) {
  RunResult r = run_source(
      "export default () => [JSON.stringify('\\ud800') === '\"\\\\ud800\"',\n"
      "  JSON.stringify('\\udc00x') === '\"\\\\udc00x\"', JSON.stringify('\\ud83d\\ude00') === "
      "'\"\\ud83d\\ude00\"',\n"
      "  JSON.stringify('\\ude00\\ud83d') === '\"\\\\ude00\\\\ud83d\"']");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "[true,true,true,true]");
  RunResult lone = run_source("export default () => ({ a: '\\ud800', pair: '\\ud83d\\ude00' })");
  ASSERT_EQ(lone.outcome, Outcome::ok) << describe(lone);
  EXPECT_EQ(lone.value_json, "{\"a\":\"\\ud800\",\"pair\":\"\xF0\x9F\x98\x80\"}");
}

// 0011: native operations whose work grows with their input charge steps for it, and see the
// watchdog's request (0010) within a batch of work.
TEST(EnginePatches, CostlyStringSearchEndsAtTheDeadline) {
  // docs/security.md "Costly native calls outrun the budget": ~27 ms and two ticks per call, so the
  // clock was read every couple of minutes and the run was abandoned with its thread still busy.
  TestRunner runner;
  RunResult r = run_with(runner,
                         "const s = 'a'.repeat(1 << 16), n = 'a'.repeat(1000) + 'b';\n"
                         "export default () => { for (;;) s.indexOf(n); }",
                         kHugeSteps, 1000);
  ASSERT_EQ(r.outcome, Outcome::timeout) << describe(r);
  EXPECT_FALSE(abandoned(r)) << describe(r);
  EXPECT_LE(r.usage.wall_ms, 1000u + 900u);
  std::printf("[ measured ] indexOf loop, 1000 ms deadline: wall_ms=%llu steps=%llu\n",
              static_cast<unsigned long long>(r.usage.wall_ms),
              static_cast<unsigned long long>(r.usage.steps));
  expect_next_run_normal(runner);
}

TEST(EnginePatches, CostlyStringSearchesChargeSteps) {
  TestRunner runner;
  const std::string strings = "const s = 'a'.repeat(1 << 16), n = 'a'.repeat(1000) + 'b';\n";
  for (const char* loop : {
           "for (;;) s.indexOf(n);",
           "for (;;) s.lastIndexOf(n);",
           "for (;;) s.includes(n);",
           "for (;;) s.split(n);",
           "for (;;) s.replace(n, '');",
           "for (;;) s.replaceAll(n, '');",
       }) {
    // One call is a million ticks of work: the budget ends inside the first.
    RunResult r = run_with(runner, strings + "export default () => { " + loop + " }", 300'000, 60'000);
    ASSERT_EQ(r.outcome, Outcome::step_limit) << loop << ": " << describe(r);
  }
  // An ordinary search is not charged more than its call.
  RunResult small =
      run_with(runner, "export default () => 'hello world'.indexOf('wor') + 'abc'.lastIndexOf('c')",
               Limits{}.steps, Limits{}.timeout_ms);
  ASSERT_EQ(small.outcome, Outcome::ok) << describe(small);
  EXPECT_EQ(small.value_json, "8");
  expect_next_run_normal(runner);
}

TEST(EnginePatches, OtherNativeWorkChargesSteps) {
  TestRunner runner;
  for (const char* source : {
           // typed-array sort: ~10^6 comparisons per call, no tick
           "const a = new Float64Array(1 << 16).map(() => Math.random());\n"
           "export default () => { for (;;) a.sort(); }",
           // a lookup that misses walks a chain of 100,000 prototypes
           "let o = {}; for (let i = 0; i < 1e5; i++) o = Object.create(o);\n"
           "export default () => { for (;;) o.missing; }",
           // listing 50,000 properties
           "const o = {}; for (let i = 0; i < 5e4; i++) o['k' + i] = i;\n"
           "export default () => { for (;;) Object.keys(o); }",
           // parsing 100,000 values per call
           "const text = '[' + '0,'.repeat(1e5) + '0]';\n"
           "export default () => { for (;;) JSON.parse(text); }",
           // copying and scanning 8 MiB
           "const a = new Uint8Array(1 << 23);\n"
           "export default () => { for (;;) { a.fill(1); a.copyWithin(0, 1); a.indexOf(2); a.set(a); } }",
           "export default () => { for (;;) 'ab'.repeat(1 << 20).padEnd(1 << 22); }",
       }) {
    RunResult r = run_with(runner, source, 300'000, 60'000, 64ull * 1024 * 1024);
    ASSERT_EQ(r.outcome, Outcome::step_limit) << source << ": " << describe(r);
  }
  expect_next_run_normal(runner);
}

// 0017: CVE-2023-48184. A closure reads a variable of a suspended async function or generator
// through a variable reference that points into the frame; the cycle collector did not see that
// edge, so when the frame was garbage (in a cycle: here it waits on a promise held in one of its own
// variables, or holds its own generator object) it freed the frame's values although a live closure
// still reached them. The closure then read freed memory, and the next collection crashed the host
// (SIGSEGV; ASan: heap-use-after-free in gc_decref_child). Each run here made garbage collections
// happen while such frames were suspended.
constexpr uint64_t kGcTestMemory = 64ull * 1024 * 1024;

constexpr const char* kChurn =
    "const churn = () => { let j = []; for (let i = 0; i < 2e5; i++) j.push({ i }); j = null;\n"
    "  for (let i = 0; i < 2e5; i++) ({ i }); };\n";

TEST(EnginePatches, SuspendedAsyncFramesWithClosuresSurviveGarbageCollection) {
  TestRunner runner;
  // The reproducer of the report, as it was given.
  RunResult r = run_with(runner,
                         "export default async()=>{ (async()=>{let o={};Promise.resolve().then(()=>o);"
                         "await new Promise(()=>{})})();\n"
                         "let j=[];for(let i=0;i<2e5;i++)j.push({i});j=null;for(let i=0;i<2e5;i++)({i}); "
                         "return 1; }",
                         kHugeSteps, 60'000, kGcTestMemory);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "1");
  // Frames in a cycle with the promise they wait on, with closures made directly, in a nested frame,
  // by a closure of the frame, and for per-iteration bindings of a loop.
  r = run_with(
      runner,
      std::string(kChurn) +
          "export default async () => {\n"
          "  const keep = [];\n"
          "  (async () => { let o = { a: 1 }; const p = new Promise(() => {}); keep.push(() => o); "
          "await p; })();\n"
          "  (async () => { let o = { b: 2 }; const p = new Promise(() => {}); "
          "Promise.resolve().then(() => o); await p; })();\n"
          "  (async () => { let o = { c: 3 }; const p = new Promise(() => {});\n"
          "    await (async () => { keep.push(() => o); })(); await p; })();\n"
          "  (async () => { let o = { d: 4 }; const p = new Promise(() => {}); keep.push((() => () => "
          "o)()); await p; })();\n"
          "  (async () => { const p = new Promise(() => {});\n"
          "    for (let i = 0; i < 3; i++) { const o = { i }; keep.push(() => o); await null; } await p; "
          "})();\n"
          "  churn(); await null; await null; await null; await null; churn();\n"
          "  return keep.map((f) => JSON.stringify(f())).join(' ');\n"
          "}",
      kHugeSteps, 60'000, kGcTestMemory);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("{\"a\":1} {\"c\":3} {\"d\":4} {\"i\":0} {\"i\":1} {\"i\":2}")");
  expect_next_run_normal(runner);
}

TEST(EnginePatches, SuspendedGeneratorFramesWithClosuresSurviveGarbageCollection) {
  TestRunner runner;
  // Generators and async generators that hold their own generator object, suspended at a yield or
  // at an await that never settles, and the mapped arguments object of a sloppy generator (made
  // before the generator object exists, so its variable references get their owner later).
  RunResult r = run_with(
      runner,
      std::string(kChurn) +
          "const gen = (0, eval)('(function* (a) { const args = arguments; yield args; const self = yield; "
          "yield self; })');\n"
          "export default async () => {\n"
          "  const keep = [];\n"
          "  (() => { function* g() { let o = { g: 1 }; keep.push(() => o); const self = yield; yield self; "
          "}\n"
          "    const it = g(); it.next(); it.next(it); })();\n"
          "  (() => { async function* g() { let o = { ag: 2 }; keep.push(() => o); const self = yield; yield "
          "self; }\n"
          "    const it = g(); it.next(); it.next(it); })();\n"
          "  (() => { async function* g() { let o = { ag: 3 }; keep.push(() => o); const self = yield;\n"
          "    await new Promise(() => {}); } const it = g(); it.next(); it.next(it); })();\n"
          "  (() => { const it = gen({ args: 4 }); keep.push(it.next().value); it.next(); it.next(it); "
          "})();\n"
          "  churn(); await null; await null; churn();\n"
          "  return keep.map((x) => JSON.stringify(typeof x === 'function' ? x() : x[0])).join(' ');\n"
          "}",
      kHugeSteps, 60'000, kGcTestMemory);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("{\"g\":1} {\"ag\":2} {\"ag\":3} {\"args\":4}")");
  expect_next_run_normal(runner);
}

TEST(EnginePatches, ClosuresAndSuspendedFramesShareVariablesAcrossGarbageCollections) {
  // A variable of a suspended frame stays one variable: what a closure writes while the frame waits
  // (with collections in between) is what the frame reads when it resumes, and the other way round;
  // after the frame ends the closure keeps the last value.
  TestRunner runner;
  RunResult r = run_with(
      runner,
      std::string(kChurn) +
          "export default async () => {\n"
          "  const out = [];\n"
          "  let resume, bump, read;\n"
          "  const done = (async () => { let n = { v: 1 }; bump = () => (n = { v: n.v + 1 }); read = () => "
          "n.v;\n"
          "    const p = new Promise((r) => { resume = r; }); const got = await p; return n.v * 10 + got; "
          "})();\n"
          "  bump(); churn(); bump(); churn();\n"
          "  resume(5);\n"
          "  out.push(await done);\n"
          "  churn(); out.push(read());\n"
          "  function* g() { let x = { x: 1 }; const inc = () => (x = { x: x.x + 1 }); yield inc; yield x.x; "
          "return x.x; }\n"
          "  const it = g(); const inc = it.next().value; inc(); churn(); out.push(it.next().value);\n"
          "  inc(); churn(); out.push(it.next().value);\n"
          "  churn(); out.push(inc().x);\n"
          "  return out;\n"
          "}",
      kHugeSteps, 60'000, kGcTestMemory);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "[35,3,2,3,4]");
}

TEST(EnginePatches, SuspendedFramesLeftAtTeardownAreFreed) {
  TestRunner runner;
  // Hundreds of frames still suspended when the run ends, in cycles or kept by live closures: the
  // runtime's teardown frees them all (debug and sanitizer builds assert that nothing is left).
  RunResult r = run_with(
      runner,
      "export default async () => {\n"
      "  const keep = [];\n"
      "  for (let k = 0; k < 100; k++) {\n"
      "    (async () => { let o = { k }; const p = new Promise(() => {}); keep.push(() => o); await p; "
      "})();\n"
      "    (async () => { let o = { k }; const p = new Promise(() => {}); const c = () => o; await p; })();\n"
      "    (() => { function* g() { let o = { k }; keep.push(() => o); const self = yield; yield self; }\n"
      "      const it = g(); it.next(); it.next(it); })();\n"
      "    (() => { async function* g() { let o = { k }; const c = () => o; const self = yield;\n"
      "      await new Promise(() => {}); } const it = g(); it.next(); it.next(it); })();\n"
      "  }\n"
      "  globalThis.keep = keep;\n"
      "  return keep.length;\n"
      "}",
      kHugeSteps, 60'000, kGcTestMemory);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "200");
  expect_next_run_normal(runner);
}

// 0018, 0019: undefined behaviour (UBSan under the asan preset, where ctest sets halt_on_error).
// The first named group of a regexp looked its name up in a group-name buffer that was still NULL
// (NULL + 0); Date.parse read a run of digits into an int64_t that overflowed after 19 digits, in
// every numeric field of both formats it parses. Such fields now give NaN like any other out of range.
TEST(EnginePatches, FirstNamedRegexpGroupAddsNoOffsetToANullPointer) {
  RunResult r = run_source(
      "export default () => [/(?<a>x)\\k<a>/.exec('xx')[0], 'ab'.replace(/(?<first>a)(?<second>b)/, "
      "'$<second>$<first>'),\n"
      "  /(?<y>\\d{4})-(?<m>\\d\\d)/.exec('on 2020-07').groups.m, (() => { try { new "
      "RegExp('(?<a>x)(?<a>y)') "
      "} catch (e) { return e.name } })()]");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"(["xx","ba","07","SyntaxError"])");
}

TEST(EnginePatches, DateParseReadsLongDigitRunsWithoutOverflow) {
  RunResult r = run_source(
      "const d = '9'.repeat(30);\n"
      "export default () => [Date.parse('2020-01-01T00:00:' + d), Date.parse(d + '-01-01'),\n"
      "  Date.parse('-' + d + '-01-01'), Date.parse('2020-' + d + '-01'), Date.parse('2020-01-01T' + d + "
      "':00'),\n"
      "  Date.parse('Jan ' + d + ' 2020'), Date.parse('Jan 1 2020 ' + d + ':00'), Date.parse('Jan 1 ' + d),\n"
      "  Date.parse('2020-01-01T00:00:00.' + d + 'Z'), Date.parse('2020-01-01T00:00:' + '0'.repeat(40) + "
      "'7Z'),\n"
      "  Date.parse('2020-01-01T00:00:00Z'), Date.parse('275760-09-13T00:00:00Z'),\n"
      "  Date.parse('275760-09-13T00:00:00.001Z')]");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json,
            "[null,null,null,null,null,null,null,null,1577836801000,1577836807000,1577836800000,"
            "8640000000000000,null]");
}

}  // namespace
}  // namespace skillbox::testing
