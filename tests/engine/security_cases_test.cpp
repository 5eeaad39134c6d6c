// docs/security.md, sections "Engine" and "Promise and job floods" (and the engine side of "No way
// out through constructors or modules"). Every case runs on a shared runner and is followed by a
// normal invocation on that same runner.
#include <gtest/gtest.h>

#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

class SecurityCases : public ::testing::Test {
 protected:
  RunResult run_js(const std::string& source, Limits limits = {}) {
    TempSkill skill({{"index.js", source}});
    skill.manifest().limits = limits;
    return run(runner_, skill);
  }

  void TearDown() override {
    // The process survived; the next invocation in it behaves normally.
    RunResult r = run_js("export default (x) => ({ ok: true, n: [1, 2, 3].map((v) => v * 2) })");
    ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
    EXPECT_EQ(r.value_json, R"({"ok":true,"n":[2,4,6]})");
  }

  TestRunner runner_;
};

bool is_one_of(Outcome o, std::initializer_list<Outcome> set) {
  for (Outcome s : set)
    if (o == s) return true;
  return false;
}

// ---- Long native loops that never reach the interrupt handler ------------------------------------------

TEST_F(SecurityCases, HugeSparseArrayToStringEndsWithinAboutTheDeadline) {
  Limits limits;
  limits.timeout_ms = 1000;
  RunResult r = run_js("export default () => new Array(1e9) + ''", limits);
  EXPECT_TRUE(is_one_of(r.outcome, {Outcome::timeout, Outcome::memory_limit, Outcome::step_limit}))
      << describe(r);
  EXPECT_LE(r.usage.wall_ms, limits.timeout_ms + 1000);
}

TEST_F(SecurityCases, HugeJoinEndsWithinAboutTheDeadline) {
  Limits limits;
  limits.timeout_ms = 1000;
  RunResult r = run_js("export default () => new Array(2 ** 30).join('ab')", limits);
  EXPECT_TRUE(is_one_of(r.outcome, {Outcome::timeout, Outcome::memory_limit, Outcome::step_limit}))
      << describe(r);
  EXPECT_LE(r.usage.wall_ms, limits.timeout_ms + 1000);
}

TEST_F(SecurityCases, HugeJoinWithAHugeHeapAndBudgetStillEndsAtTheDeadline) {
  Limits limits;
  limits.timeout_ms = 500;
  limits.steps = Limits::kMaxSteps;
  limits.memory_bytes = Limits::kMaxMemoryBytes;
  RunResult r = run_js("export default () => new Array(2 ** 30).join('ab')", limits);
  EXPECT_EQ(r.outcome, Outcome::timeout) << describe(r);
}

// ---- Regular-expression blow-ups ----------------------------------------------------------------------

TEST_F(SecurityCases, CatastrophicBacktrackingEndsAsStepLimitOrTimeout) {
  RunResult r = run_js("export default () => /^(a+)+$/.test('a'.repeat(40) + '!')");
  EXPECT_TRUE(is_one_of(r.outcome, {Outcome::step_limit, Outcome::timeout})) << describe(r);
}

TEST_F(SecurityCases, CompilingDeeplyNestedQuantifiersIsBounded) {
  RunResult r = run_js(
      "export default () => { let p = 'a'; for (let i = 0; i < 20; i++) p = '(?:(?:' + p + '|)+|)+';\n"
      "  try { const re = new RegExp(p); return ['compiled', re.test('b')]; } catch (e) { return [e.name]; } "
      "}");
  // Each `+` copies its atom in the compiled program, so 20 levels blow up exponentially: the compile
  // fails at the heap limit (or finishes), never hangs.
  EXPECT_TRUE(
      is_one_of(r.outcome, {Outcome::ok, Outcome::memory_limit, Outcome::step_limit, Outcome::timeout}))
      << describe(r);
}

// ---- Native stack overflow in recursive parsers --------------------------------------------------------

TEST_F(SecurityCases, RecursiveParsersThrowCatchableErrors) {
  RunResult r = run_js(
      "const attempt = (f) => { try { f(); return 'no error'; } catch (e) { return e.name + ': ' + "
      "e.message; } };\n"
      "export default () => [\n"
      "  attempt(() => new RegExp('('.repeat(1e5) + ')'.repeat(1e5))),\n"
      "  attempt(() => new RegExp('(?:'.repeat(1e5) + ')'.repeat(1e5))),\n"
      "  attempt(() => JSON.parse('['.repeat(1e5) + ']'.repeat(1e5))),\n"
      "  attempt(() => eval('('.repeat(1e5) + '1' + ')'.repeat(1e5))),\n"
      "  attempt(() => Function('return ' + '['.repeat(1e5) + ']'.repeat(1e5))),\n"
      "]");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(
      r.value_json,
      R"j(["SyntaxError: too many captures","SyntaxError: stack overflow","SyntaxError: stack overflow",)j"
      R"j("SyntaxError: stack overflow","SyntaxError: stack overflow"])j");
}

// ---- Memory accounting --------------------------------------------------------------------------------

TEST_F(SecurityCases, ManyLiveTypedArraysEndAsMemoryLimitNearTheLimit) {
  Limits limits;  // 32 MiB
  RunResult r = run_js(
      "export default () => { const keep = []; for (let i = 0; i < 4096; i++) keep.push(new Uint8Array(1 << "
      "20)); }",
      limits);
  ASSERT_EQ(r.outcome, Outcome::memory_limit) << describe(r);
  EXPECT_LE(r.usage.heap_peak_bytes, limits.memory_bytes);
  EXPECT_GE(r.usage.heap_peak_bytes, limits.memory_bytes - 2 * 1024 * 1024);
}

TEST_F(SecurityCases, ThrowNullIsAnOrdinaryError) {
  RunResult r = run_js("export default () => { throw null }");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  r = run_js("export default async () => { for (let i = 0; i < 1000; i++) await null; throw null; }");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
}

// ---- Out of memory during parsing or teardown ----------------------------------------------------------

TEST_F(SecurityCases, OutOfMemoryWhileParsingOrBuildingWithTinyHeapsEndsAsMemoryLimit) {
  for (uint64_t heap : {uint64_t{256} * 1024, uint64_t{512} * 1024, uint64_t{1024} * 1024}) {
    Limits limits;
    limits.memory_bytes = heap;
    // A generated function body that fits the heap as text but not compiled (a closure per statement).
    RunResult r = run_js("export default (n) => Function('(function () { return 1 })();'.repeat(" +
                             std::to_string(heap / 64) + "))()",
                         limits);
    EXPECT_EQ(r.outcome, Outcome::memory_limit) << heap << ": " << describe(r);
    r = run_js("export default () => { let a = []; for (;;) a = [a, [a], { a }]; }", limits);
    EXPECT_EQ(r.outcome, Outcome::memory_limit) << heap << ": " << describe(r);
    r = run_js(
        "export default () => { const m = new Map(); for (let i = 0; ; i++) m.set('k' + i, { i, s: "
        "'x'.repeat(i % 100) }); }",
        limits);
    EXPECT_EQ(r.outcome, Outcome::memory_limit) << heap << ": " << describe(r);
  }
}

// Out-of-memory paths of the parser, compiler, runtime and teardown: the same program under heap limits
// a few KiB apart, so that the allocation that fails lands somewhere else each time. No run may crash,
// abort (JS_FreeRuntime asserts that nothing leaked in debug builds) or end other than ok/memory_limit.
TEST_F(SecurityCases, OutOfMemoryAnywhereEndsAsMemoryLimitAndTeardownNeverAborts) {
  std::string source =
      "class Shape { #id; constructor(id) { this.#id = id; } get id() { return this.#id; } static of(i) { "
      "return new Shape(i); } }\n"
      "const re = /([a-z]+)-(\\d+)/g;\n"
      "export default async () => {\n"
      "  const out = [];\n";
  for (int i = 0; i < 500; ++i) {
    const std::string n = std::to_string(i);
    source += "  { const f" + n + " = async ({ a, b = " + n +
              " } = {}, ...rest) => `${a}:${b}:${rest.length}`;\n"
              "    out.push(await f" +
              n + "({ a: 'x" + n + "' }, 1, 2), Shape.of(" + n + ").id, [...'ab-" + n + " cd-" + n +
              "'.matchAll(re)].length, JSON.stringify({ k: [" + n + ", { v: 'w' }] }), new Map([[" + n +
              ", new Set([" + n + "])]]).size); }\n";
  }
  source += "  return out.length; }\n";
  RunResult full = run_js(source);
  ASSERT_EQ(full.outcome, Outcome::ok) << describe(full);
  const uint64_t peak = full.usage.heap_peak_bytes;
  ASSERT_GT(peak, Limits::kMinMemoryBytes * 3 / 2);
  int ok = 0, oom = 0;
  // The limit covers the heap and the host bytes held for the run (its sources: docs/limits.md "Host
  // memory is part of the budget"), so the sweep reaches past both.
  const uint64_t top = peak + full.usage.host_peak_bytes + uint64_t{64} * 1024;
  const uint64_t step = (top - Limits::kMinMemoryBytes) / 60;
  for (uint64_t heap = Limits::kMinMemoryBytes; heap <= top; heap += step) {
    Limits limits;
    limits.memory_bytes = heap;
    RunResult r = run_js(source, limits);
    EXPECT_TRUE(is_one_of(r.outcome, {Outcome::ok, Outcome::memory_limit})) << heap << ": " << describe(r);
    if (r.outcome == Outcome::ok) {
      EXPECT_EQ(r.value_json, "2500");
    }
    (r.outcome == Outcome::ok ? ok : oom)++;
  }
  // The sweep must cross from failing to succeeding, or it tests nothing.
  EXPECT_GT(ok, 0);
  EXPECT_GT(oom, 10);
}

TEST_F(SecurityCases, LargeEntryFileWithATinyHeapEndsAsMemoryLimit) {
  // 150 KB of source fits the 256 KiB heap; its compiled form does not.
  std::string source = "export default () => [";
  for (int i = 0; i < 25000; i++) source += std::to_string(i) + ",";
  source += "].length;";
  ASSERT_LT(source.size(), 256u * 1024);
  Limits limits;
  limits.memory_bytes = uint64_t{256} * 1024;
  RunResult r = run_js(source, limits);
  EXPECT_EQ(r.outcome, Outcome::memory_limit) << describe(r);
}

TEST_F(SecurityCases, EntryFileLargerThanTheHeapIsRefusedBeforeParsing) {
  std::string source = "export default () => '" + std::string(size_t{300} * 1024, 'x') + "'.length;";
  Limits limits;
  limits.memory_bytes = uint64_t{256} * 1024;
  RunResult r = run_js(source, limits);
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->message, "entry file 'index.js' is too large (" + std::to_string(source.size()) +
                                  " bytes; limit is 262144 bytes)");
}

// ---- Promise and job floods ---------------------------------------------------------------------------

TEST_F(SecurityCases, EndlessPromiseChainEndsAtALimit) {
  const std::string spin =
      "function spin() { return Promise.resolve().then(spin) }\nexport default () => spin()";
  // Every promise of the chain waits for the next one, so with the default limits the heap fills
  // before the step budget runs out.
  RunResult r = run_js(spin);
  EXPECT_TRUE(is_one_of(r.outcome, {Outcome::step_limit, Outcome::timeout, Outcome::memory_limit}))
      << describe(r);
  Limits roomy;
  roomy.memory_bytes = 1024ull * 1024 * 1024;
  roomy.steps = 200'000;
  r = run_js(spin, roomy);
  EXPECT_EQ(r.outcome, Outcome::step_limit) << describe(r);
}

TEST_F(SecurityCases, EndlessMicrotasksEndAsStepLimitOrTimeout) {
  RunResult r = run_js(
      "const again = () => queueMicrotask(again);\nexport default () => { again(); return new Promise(() => "
      "{}); }");
  EXPECT_TRUE(is_one_of(r.outcome, {Outcome::step_limit, Outcome::timeout})) << describe(r);
}

TEST_F(SecurityCases, EndlessPendingPromisesEndAsMemoryLimit) {
  // The limit under test is the heap: the deadline is lifted so that a loaded or sanitizer-slowed
  // machine still reaches the heap limit first (at the default 5 s an ASan build did not).
  Limits limits;
  limits.timeout_ms = 120'000;
  RunResult r =
      run_js("export default () => { const keep = []; for (;;) keep.push(new Promise(() => {})); }", limits);
  EXPECT_EQ(r.outcome, Outcome::memory_limit) << describe(r);
  r = run_js(
      "export default async () => { const keep = []; for (;;) { keep.push(new Promise(() => {})); await "
      "null; } }",
      limits);
  EXPECT_TRUE(is_one_of(r.outcome, {Outcome::memory_limit, Outcome::step_limit})) << describe(r);
}

// ---- No way out through constructors or modules (engine side) -------------------------------------------

TEST_F(SecurityCases, HostModulesCannotBeImported) {
  RunResult r = run_js(
      "export default async () => { const out = [typeof std, typeof os, typeof require, typeof process];\n"
      "  for (const m of ['std', 'os', 'qjs:std', 'node:fs']) {\n"
      "    try { await import(m); out.push('loaded ' + m); } catch (e) { out.push(e.name); } }\n"
      "  return out; }");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(
      r.value_json,
      R"(["undefined","undefined","undefined","undefined","TypeError","TypeError","TypeError","TypeError"])");
}

}  // namespace
}  // namespace skillbox::testing
