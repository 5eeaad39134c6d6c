#include "engine/realm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

// Every own property of a skill's globalThis. Update this list when the host API changes, and only
// then: a name that appears here without a decision is a hole in the sandbox.
// The whole global surface a skill sees. Adding a global is a security decision: it must be added here.
const std::vector<std::string> kGoldenGlobals = {
    // ECMAScript (ES2020 + BigInt) as built by engine/realm.cpp
    "AggregateError",
    "Array",
    "ArrayBuffer",
    "BigInt",
    "BigInt64Array",
    "BigUint64Array",
    "Boolean",
    "DataView",
    "Date",
    "Error",
    "EvalError",
    "Float32Array",
    "Float64Array",
    "Function",
    "Infinity",
    "Int16Array",
    "Int32Array",
    "Int8Array",
    "InternalError",
    "JSON",
    "Map",
    "Math",
    "NaN",
    "Number",
    "Object",
    "Promise",
    "Proxy",
    "RangeError",
    "ReferenceError",
    "Reflect",
    "RegExp",
    "Set",
    "String",
    "Symbol",
    "SyntaxError",
    "TypeError",
    "URIError",
    "Uint16Array",
    "Uint32Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "WeakMap",
    "WeakSet",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "escape",
    "eval",
    "globalThis",
    "isFinite",
    "isNaN",
    "parseFloat",
    "parseInt",
    "undefined",
    "unescape",
    // engine/timers.cpp
    "clearInterval",
    "clearTimeout",
    "queueMicrotask",
    "setInterval",
    "setTimeout",
    // bindings/install.cpp: log/console, web APIs, the openhuman namespace
    "TextDecoder",
    "TextEncoder",
    "atob",
    "btoa",
    "console",
    "crypto",
    "log",
    "openhuman",
    // bindings/env.cpp, bindings/store.cpp (also as openhuman.env, openhuman.store)
    "env",
    "store",
};

// What permissions.http.fetch adds (bindings/fetch.cpp), and nothing else: no XMLHttpRequest, no
// DOMException, no EventTarget.
const std::vector<std::string> kFetchGlobals = {"AbortController", "AbortSignal", "Headers",
                                                "Request",         "Response",    "fetch"};

std::string golden_json(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> names = kGoldenGlobals;
  names.insert(names.end(), extra.begin(), extra.end());
  std::sort(names.begin(), names.end());
  std::string joined;
  for (const std::string& n : names) joined += (joined.empty() ? "" : ",") + n;
  return "\"" + joined + "\"";
}

TEST(Realm, GlobalObjectHasExactlyTheGoldenList) {
  RunResult r = run_source("export default () => Object.getOwnPropertyNames(globalThis).sort().join(',')");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, golden_json());
}

TEST(Realm, WithFetchTheGlobalObjectGainsExactlyTheFetchGlobals) {
  TempSkill skill(
      {{"index.js", "export default () => Object.getOwnPropertyNames(globalThis).sort().join(',')"}});
  skill.manifest().permissions.http.allow = {"https://api.example.com/"};
  skill.manifest().permissions.http.fetch = true;
  TestRunner runner;
  RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, golden_json(kFetchGlobals));
}

TEST(Realm, NoHostModulesNoSharedMemoryNoEngineHelpers) {
  RunResult r = run_source(
      "export default () => ['std', 'os', 'require', 'process', 'module', 'Atomics', 'SharedArrayBuffer', "
      "'__date_clock', 'BigFloat', 'BigDecimal', 'Operators', 'print', 'scriptArgs', '__loadScript']"
      ".map((n) => n + ':' + typeof globalThis[n] + ':' + (n in globalThis))");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(
      r.value_json,
      R"(["std:undefined:false","os:undefined:false","require:undefined:false","process:undefined:false",)"
      R"("module:undefined:false","Atomics:undefined:false","SharedArrayBuffer:undefined:false",)"
      R"("__date_clock:undefined:false","BigFloat:undefined:false","BigDecimal:undefined:false",)"
      R"("Operators:undefined:false","print:undefined:false","scriptArgs:undefined:false",)"
      R"("__loadScript:undefined:false"])");
}

TEST(Realm, EveryHostFunctionLeadsBackToTheSkillsOwnFunctionConstructor) {
  // Host functions are the globals that are not ECMAScript built-ins, and the functions found on host
  // objects (one level deep, e.g. console.log). Each must be an ordinary function of the skill's realm.
  RunResult r = run_source(
      "const builtins = new Set(['Array','ArrayBuffer','BigInt','BigInt64Array','BigUint64Array','Boolean',\n"
      "  "
      "'DataView','Date','Error','EvalError','Float32Array','Float64Array','Function','Int16Array','"
      "Int32Array',\n"
      "  'Int8Array','InternalError','JSON','Map','Math','Number','Object','Promise','Proxy','RangeError',\n"
      "  'ReferenceError','Reflect','RegExp','Set','String','Symbol','SyntaxError','TypeError','URIError',\n"
      "  'Uint16Array','Uint32Array','Uint8Array','Uint8ClampedArray','WeakMap','WeakSet','AggregateError',\n"
      "  "
      "'decodeURI','decodeURIComponent','encodeURI','encodeURIComponent','escape','eval','globalThis','"
      "isFinite',\n"
      "  'isNaN','parseFloat','parseInt','unescape','undefined','NaN','Infinity']);\n"
      "export default () => {\n"
      "  const checked = [], bad = [];\n"
      "  const check = (name, f) => { checked.push(name);\n"
      "    if (f.constructor !== Function || f.constructor.constructor !== Function ||\n"
      "        Object.getPrototypeOf(f) !== Function.prototype) bad.push(name); };\n"
      "  for (const name of Object.getOwnPropertyNames(globalThis)) {\n"
      "    if (builtins.has(name)) continue;\n"
      "    const v = globalThis[name];\n"
      "    if (typeof v === 'function') check(name, v);\n"
      "    else if (v && typeof v === 'object') for (const k of Object.getOwnPropertyNames(v))\n"
      "      if (typeof v[k] === 'function') check(name + '.' + k, v[k]);\n"
      "  }\n"
      "  return { checked: checked.length >= 5, bad }; }");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"({"checked":true,"bad":[]})");
}

TEST(Realm, FunctionConstructorStaysInsideTheSandbox) {
  RunResult r = run_source(
      "export default () => { const F = setTimeout.constructor.constructor;\n"
      "  return [F('return typeof std + typeof os')(), F('return this')() === globalThis]; }");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"(["undefinedundefined",true])");
}

}  // namespace
}  // namespace skillbox::testing
