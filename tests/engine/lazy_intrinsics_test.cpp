// Date, Map/Set/WeakMap/WeakSet and the typed arrays are built on the first access to one of their
// globals (engine/realm.h, engine patch 0016). A skill must not be able to tell, except by the heap it
// uses: the globals look like ordinary data properties, host functions hand out real Uint8Arrays
// whatever the skill did to the globals, and the originals the host uses are captured before the
// skill can touch them.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

RunResult run_js(Runner& runner, const std::string& source, const std::string& input = "null",
                 Limits limits = {}) {
  TempSkill skill({{"index.js", source}});
  skill.manifest().limits = limits;
  return run(runner, skill, input);
}

TEST(LazyIntrinsics, TheirGlobalsAreOrdinaryDataPropertiesAndWork) {
  RunResult r = run_source(
      "const d = (n) => { const x = Object.getOwnPropertyDescriptor(globalThis, n);\n"
      "  return [n, typeof x.value, x.writable, x.enumerable, x.configurable].join(); };\n"
      "export default () => ['Date', 'Map', 'WeakSet', 'Uint8Array', 'DataView', 'ArrayBuffer'].map(d)\n"
      "  .concat([new Map([[1, 2]]).get(1), new Date(0).toISOString(), new Uint8Array([1, 2]).length,\n"
      "           'Atomics' in globalThis, 'SharedArrayBuffer' in globalThis])");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"(["Date,function,true,false,true","Map,function,true,false,true",)"
                          R"("WeakSet,function,true,false,true","Uint8Array,function,true,false,true",)"
                          R"("DataView,function,true,false,true","ArrayBuffer,function,true,false,true",)"
                          R"(2,"1970-01-01T00:00:00.000Z",2,false,false])");
}

TEST(LazyIntrinsics, HostResultsHaveTheOriginalPrototypesWhenTheSkillNeverTouchedThem) {
  // TextEncoder builds the typed arrays itself; the skill reads Uint8Array only afterwards.
  RunResult r = run_source(
      "export default () => { const u = new TextEncoder().encode('hi');\n"
      "  return [u.length, u instanceof Uint8Array, Object.getPrototypeOf(u) === Uint8Array.prototype,\n"
      "          Object.getPrototypeOf(u.buffer) === ArrayBuffer.prototype]; }");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "[2,true,true,true]");
}

TEST(LazyIntrinsics, GlobalsDeletedOrReplacedBeforeFirstUseDoNotChangeWhatTheHostMakes) {
  RunResult r = run_source(
      "export default () => { delete globalThis.Uint8Array; globalThis.ArrayBuffer = 5;\n"
      "  const u = new TextEncoder().encode('abc');\n"
      "  return [typeof Uint8Array, ArrayBuffer, Object.prototype.toString.call(u), u.byteLength,\n"
      "          new TextDecoder().decode(u), typeof u.subarray]; }");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"(["undefined",5,"[object Uint8Array]",3,"abc","function"])");
}

TEST(LazyIntrinsics, GettersReplacedRightAfterTheFirstUseAreNotWhatTheHostCalls) {
  // The access to DataView builds the group; the host captures its getters before that access returns.
  RunResult r = run_source(
      "export default () => {\n"
      "  Object.defineProperty(DataView.prototype, 'byteLength', { get() { throw new Error('skill getter'); "
      "} });\n"
      "  Object.defineProperty(DataView.prototype, 'byteOffset', { get() { return -5; } });\n"
      "  return new TextDecoder().decode(new DataView(new TextEncoder().encode('xyz').buffer, 1)); }");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("yz")");
}

TEST(LazyIntrinsics, AGroupIsBuiltOnlyWhenUsedAndItsMemoryIsCounted) {
  RunResult plain = run_source("export default () => 1");
  RunResult typed = run_source("export default () => typeof Uint8Array");
  ASSERT_EQ(plain.outcome, Outcome::ok) << describe(plain);
  ASSERT_EQ(typed.outcome, Outcome::ok) << describe(typed);
  // The typed arrays take about 12 KB; a run that never reads them does not pay for them.
  EXPECT_GT(typed.usage.heap_peak_bytes, plain.usage.heap_peak_bytes + 8 * 1024);
}

TEST(LazyIntrinsics, ChangesToALazyGroupDoNotSurviveTheRun) {
  TestRunner runner;
  const std::string source =
      "export default (poison) => { if (poison) { Map.prototype.get = () => 'poisoned';\n"
      "    Date.now = () => 0; Uint8Array.prototype.fill = null; globalThis.Set = 1; }\n"
      "  return [new Map([[1, 'ok']]).get(1), Date.now() > 0, typeof new Uint8Array(1).fill, typeof Set]; }";
  RunResult first = run_js(runner, source, "true");
  ASSERT_EQ(first.outcome, Outcome::ok) << describe(first);
  EXPECT_EQ(first.value_json, R"(["poisoned",false,"object","number"])");
  RunResult second = run_js(runner, source, "false");
  ASSERT_EQ(second.outcome, Outcome::ok) << describe(second);
  EXPECT_EQ(second.value_json, R"(["ok",true,"function","function"])");
}

TEST(LazyIntrinsics, BuildingAGroupAtTheHeapLimitEndsAsMemoryLimitNeverACrash) {
  // The groups are built late in the run, after the skill has filled its heap: across a sweep of
  // limits some builds start just below the limit and end past it. That must be memory_limit (or
  // ok), never an engine abort: QuickJS cannot build a realm part with a failing allocator, so the
  // build runs unlimited and the limit applies right after it.
  TestRunner runner;
  const std::string source =
      "export default () => { const keep = [];\n"
      "  for (let i = 0; i < 1500; i++) keep.push({ i, s: 'v' + i });\n"
      "  return [keep.length, new Map([[1, 2]]).size, new Date(0).getTime(), new "
      "Uint8Array(3).length].join(); }";
  RunResult full = run_js(runner, source);
  ASSERT_EQ(full.outcome, Outcome::ok) << describe(full);
  EXPECT_EQ(full.value_json, R"("1500,1,0,3")");
  const uint64_t top = full.usage.heap_peak_bytes + full.usage.host_peak_bytes + 16 * 1024;
  int ok = 0;
  int oom = 0;
  for (uint64_t limit = Limits::kMinMemoryBytes; limit <= top; limit += 2048) {
    Limits limits;
    limits.memory_bytes = limit;
    RunResult r = run_js(runner, source, "null", limits);
    ASSERT_TRUE(r.outcome == Outcome::ok || r.outcome == Outcome::memory_limit)
        << limit << ": " << describe(r);
    if (r.outcome == Outcome::ok) {
      EXPECT_EQ(r.value_json, R"("1500,1,0,3")") << limit;
    }
    (r.outcome == Outcome::ok ? ok : oom)++;
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(oom, 0);
}

}  // namespace
}  // namespace skillbox::testing
