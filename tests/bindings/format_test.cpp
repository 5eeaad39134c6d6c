// Formatting of log()/console.* arguments, observed as the exact text of the LogRequest sent.
#include "bindings/format.h"

#include <gtest/gtest.h>

#include <string>

#include "bindings/console.h"
#include "bindings/js_harness.h"

namespace skillbox::bindings {
namespace {

using testing::JsHarness;

// Runs `source` in a fresh context and returns the text of the one message it logged.
std::string logged(const std::string& source) {
  JsHarness js;
  EXPECT_TRUE(js.installed());
  const testing::JsResult r = js.eval(source);
  EXPECT_TRUE(r.ok) << source << " threw " << r.error;
  const std::vector<std::string> texts = js.bridge.texts();
  EXPECT_EQ(texts.size(), 1u) << source;
  return texts.empty() ? std::string("<nothing logged>") : texts.front();
}

TEST(Format, PrimitivesAtTopLevel) {
  EXPECT_EQ(logged("log('hello', 'world')"), "hello world");
  EXPECT_EQ(logged("log(1, -0, 1.5, NaN, Infinity, -Infinity, 1e21, 0.1, 2**53)"),
            "1 -0 1.5 NaN Infinity -Infinity 1e+21 0.1 9007199254740992");
  EXPECT_EQ(logged("log(true, false, null, undefined)"), "true false null undefined");
  EXPECT_EQ(logged("log(12n, -5n, 2n**70n)"), "12n -5n 1180591620717411303424n");
  EXPECT_EQ(logged("log(Symbol('tag'), Symbol())"), "Symbol(tag) Symbol()");
  EXPECT_EQ(logged("log()"), "");
  EXPECT_EQ(logged("log('')"), "");
}

TEST(Format, ContainersAsCompactJson) {
  EXPECT_EQ(logged("log([1, 'a', [2, null]], {a: 1, b: 'x', c: {d: true}})"),
            R"([1,"a",[2,null]] {"a":1,"b":"x","c":{"d":true}})");
  EXPECT_EQ(logged("log({s: 'quote\" slash\\\\ nl\\n tab\\t bell\\x07'})"),
            R"({"s":"quote\" slash\\ nl\n tab\t bell\u0007"})");
  EXPECT_EQ(logged("log({'we\"ird key': 1})"), R"({"we\"ird key":1})");
  // Values JSON has no form for stay visible.
  EXPECT_EQ(logged("log({u: undefined, f() {}, n: NaN, b: 1n, s: Symbol('x')})"),
            R"({"u":undefined,"f":[Function: f],"n":NaN,"b":1n,"s":Symbol(x)})");
  // Only own enumerable string keys, in property order; symbol keys and non-enumerables are not shown.
  EXPECT_EQ(logged("const o = Object.create({inherited: 1}); o.b = 2; o[1] = 'one';"
                   "Object.defineProperty(o, 'hidden', {value: 3}); o[Symbol('k')] = 4; log(o)"),
            R"({"1":"one","b":2})");
  EXPECT_EQ(logged("log([], {})"), "[] {}");
}

TEST(Format, FunctionsErrorsAndBuiltins) {
  EXPECT_EQ(logged("function foo() {} log(foo, () => 1, class Point {})"),
            "[Function: foo] [Function (anonymous)] [Function: Point]");
  EXPECT_EQ(logged("log(new TypeError('bad input'))"), "TypeError: bad input");
  EXPECT_EQ(logged("log(new Error())"), "Error");
  EXPECT_EQ(logged("log({e: new RangeError('r')})"), R"({"e":[RangeError: r]})");
  EXPECT_EQ(logged("class MyError extends Error { get name() { return 'Mine'; } } log(new MyError('m'))"),
            "Mine: m");
  EXPECT_EQ(logged("log(new Date(0), {d: new Date(86400000)})"),
            R"(1970-01-01T00:00:00.000Z {"d":"1970-01-02T00:00:00.000Z"})");
  EXPECT_EQ(logged("log(new Uint8Array([1, 2, 255]), new Float64Array([0.5]), new BigInt64Array(1))"),
            "Uint8Array(3) [1,2,255] Float64Array(1) [0.5] BigInt64Array(1) [0n]");
  EXPECT_EQ(logged("log(new ArrayBuffer(8), new DataView(new ArrayBuffer(2)))"),
            "[ArrayBuffer: 8 bytes] [DataView]");
  EXPECT_EQ(logged("log(new Map([[1, 2]]), new Set([1]), new WeakMap(), new WeakSet(), Promise.resolve(1))"),
            "[Map] [Set] [WeakMap] [WeakSet] [Promise]");
  EXPECT_EQ(logged("log(/a+b/gi)"), "/a+b/gi");
}

TEST(Format, StringsAreWellFormedUtf8) {
  EXPECT_EQ(logged("log('\\u00e9\\u4e2d\\ud83d\\ude00')"), "\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80");
  // A lone surrogate cannot be encoded: it becomes U+FFFD, at the top level and inside containers.
  EXPECT_EQ(logged("log('a\\ud800b', ['\\udc00'])"),
            "a\xEF\xBF\xBD"
            "b [\"\xEF\xBF\xBD\"]");
}

TEST(Format, ConsoleSubstitutions) {
  EXPECT_EQ(logged("log('%s is %d years, %i%%', 'Bob', 42, 4.7)"), "Bob is 42 years, 4%");
  EXPECT_EQ(logged("log('%f|%d|%d|%d', '1.5', {}, 7n, 'x')"), "1.5|NaN|7n|NaN");
  EXPECT_EQ(logged("log('%o and %j', {a: 1}, ['s'])"), R"({"a":1} and ["s"])");
  EXPECT_EQ(logged("log('%cstyled', 'color: red')"), "styled");
  EXPECT_EQ(logged("log('%s and %s', 'one')"), "one and %s");  // no argument left
  EXPECT_EQ(logged("log('%x %', 1)"), "%x % 1");               // unknown directive; extra argument
  EXPECT_EQ(logged("log('%s', {toString() { return 'never called'; }})"),  // no implicit toString
            R"({"toString":[Function: toString]})");
  EXPECT_EQ(logged("log(1, '%s', 2)"), "1 %s 2");  // only a first string is a format
}

TEST(Format, CyclesAreMarkedAndSharedReferencesAreNot) {
  EXPECT_EQ(logged("const a = {x: 1}; a.self = a; log(a)"), R"({"x":1,"self":[Circular]})");
  EXPECT_EQ(logged("const b = [1]; b.push(b); log(b)"), "[1,[Circular]]");
  EXPECT_EQ(logged("const p = {}; const c = {p}; p.c = c; log([p])"), R"([{"c":{"p":[Circular]}}])");
  EXPECT_EQ(logged("const s = {v: 1}; log([s, s, {s}])"), R"([{"v":1},{"v":1},{"s":{"v":1}}])");
}

TEST(Format, DepthAndEntryCaps) {
  EXPECT_EQ(logged("let o = {}; for (let i = 0; i < 10; i++) o = {a: o}; log(o)"),
            R"({"a":{"a":{"a":{"a":{"a":{"a":[Object]}}}}}})");
  EXPECT_EQ(logged("log([[[[[[[1]]]]]]])"), "[[[[[[[Array]]]]]]]");

  const std::string many = logged("log(Array.from({length: 150}, (_, i) => i))");
  EXPECT_EQ(many.substr(0, 6), "[0,1,2");
  EXPECT_NE(many.find(",99,... 50 more items]"), std::string::npos) << many;

  const std::string keys = logged("const o = {}; for (let i = 0; i < 150; i++) o['k' + i] = i; log(o)");
  EXPECT_NE(keys.find(R"("k99":99,... 50 more keys})"), std::string::npos) << keys;

  // A huge sparse array shows 100 holes and counts the rest; nothing walks a billion elements.
  const std::string sparse = logged("const a = []; a[1e9] = 1; log(a)");
  EXPECT_EQ(sparse.substr(0, 20), "[undefined,undefined");
  EXPECT_NE(sparse.find(",... 999999901 more items]"), std::string::npos) << sparse;
  EXPECT_EQ(logged("log(new Uint8Array(1000))").size(),
            std::string("Uint8Array(1000) [").size() + 200 + std::string("... 900 more items]").size());
}

TEST(Format, OutputStopsJustPastTheByteCap) {
  const size_t cap = log_format_limits().max_bytes;
  const std::string big = logged("log('x'.repeat(1 << 20))");
  EXPECT_EQ(big.size(), cap + 1);
  EXPECT_EQ(big, std::string(cap + 1, 'x'));

  // Cut on a character boundary: three-byte characters overshoot by at most three bytes.
  const std::string wide = logged("log('\\u4e2d'.repeat(1 << 18))");
  EXPECT_GT(wide.size(), cap);
  EXPECT_LE(wide.size(), cap + 3);
  EXPECT_EQ(wide.size() % 3, 0u);

  // Only the shown prefix of a huge string is converted, with the original String.prototype.slice.
  EXPECT_EQ(logged("String.prototype.slice = () => 'replaced'; log('y'.repeat(1 << 20))"),
            std::string(cap + 1, 'y'));
  EXPECT_EQ(logged("log({s: 'z'.repeat(1 << 20)})"), "{\"s\":\"" + std::string(cap + 1 - 6, 'z'));
  // A surrogate pair is never split into a replacement character.
  const std::string emoji = logged("log('\\ud83d\\ude00'.repeat(1 << 16))");
  EXPECT_EQ(emoji.size(), cap + 4 - (cap % 4));
  EXPECT_EQ(emoji.find("\xEF\xBF\xBD"), std::string::npos);

  // Many small values: formatting stops, it does not build the whole structure.
  const std::string nested = logged("log(Array.from({length: 100}, () => Array(100).fill('abcdefgh')))");
  EXPECT_GT(nested.size(), cap);
  EXPECT_LE(nested.size(), cap + 4);
}

TEST(Format, ExponentialSharingIsBounded) {
  // 2^40 paths to the leaves: depth, entry and byte caps keep the work small.
  const std::string text = logged("let a = [1]; for (let i = 0; i < 40; i++) a = [a, a]; log(a)");
  EXPECT_EQ(text.substr(0, 8), "[[[[[[[A");
  EXPECT_LE(text.size(), log_format_limits().max_bytes + 4);
}

TEST(Format, KeyListingBudgetStopsListingHugeObjects) {
  // Listing keys is native work the step limit cannot see; after 100,000 keys objects print [Object].
  const std::string text = logged(
      "const o = {}; for (let i = 0; i < 120000; i++) Object.defineProperty(o, 'k' + i, {value: i});"
      "log([o, o, o])");
  EXPECT_EQ(text, "[{},[Object],[Object]]");
}

TEST(Format, GettersRunAndTheirExceptionsAreShown) {
  EXPECT_EQ(logged("log({get x() { return 5; }})"), R"({"x":5})");
  EXPECT_EQ(logged("log({get x() { throw new Error('no'); }, y: 1})"), R"({"x":[Getter threw],"y":1})");
  EXPECT_EQ(logged("log({get x() { throw null; }})"), R"({"x":[Getter threw]})");
  EXPECT_EQ(logged("log([1, 2].map(() => ({ get v() { throw 1; } })))"),
            R"([{"v":[Getter threw]},{"v":[Getter threw]}])");
  // Each getter runs exactly once per message.
  JsHarness js;
  const testing::JsResult r = js.eval("let n = 0; log({get x() { return ++n; }}); n");
  EXPECT_EQ(r.value, "1");
  EXPECT_EQ(js.bridge.texts(), std::vector<std::string>{R"({"x":1})"});
}

TEST(Format, ToJsonIsCalledOnceAndCannotLoop) {
  EXPECT_EQ(logged("log({a: 1, toJSON() { return this; }})"), R"({"a":1,"toJSON":[Function: toJSON]})");
  EXPECT_EQ(logged("log({toJSON() { return {v: 2, toJSON() { return 'never'; }}; }})"),
            R"({"v":2,"toJSON":[Function: toJSON]})");
  EXPECT_EQ(logged("const o = {toJSON() { return [o]; }}; log(o)"), "[[Circular]]");
  EXPECT_EQ(logged("log({toJSON() { throw new Error('x'); }})"), "[toJSON threw]");
  EXPECT_EQ(logged("log({toJSON: 'not a function', k: 1})"), R"({"toJSON":"not a function","k":1})");
  EXPECT_EQ(logged("log({a: {toJSON(key) { return 'key=' + JSON.stringify(key); }}})"),
            R"({"a":"key=\"\""})");
}

TEST(Format, ProxiesAreReadThroughTheirTraps) {
  EXPECT_EQ(logged("log(new Proxy({a: 1}, {}))"), R"({"a":1})");
  EXPECT_EQ(logged("log(new Proxy([1, 2], {}))"), "[1,2]");
  EXPECT_EQ(logged("log(new Proxy({}, {ownKeys() { throw new Error('no keys'); }}))"), "[Keys threw]");
  EXPECT_EQ(logged("log(new Proxy({a: 1}, {get() { throw 1; }}))"), "[Getter threw]");
  EXPECT_EQ(logged("log(new Proxy({a: 1}, {get(t, k) { return k === 'a' ? 'trapped' : undefined; }}))"),
            R"({"a":"trapped"})");
  EXPECT_EQ(logged("const {proxy, revoke} = Proxy.revocable({}, {}); revoke(); log(proxy)"),
            "[Getter threw]");
  EXPECT_EQ(logged("log(new Proxy(function named() {}, {getOwnPropertyDescriptor() { throw 1; }}))"),
            "[Function (anonymous)]");
  // getPrototypeOf is never consulted.
  EXPECT_EQ(logged("function r() { return Object.getPrototypeOf(p); }"
                   "const p = new Proxy({z: 0}, {getPrototypeOf() { return r(); }}); log(p)"),
            R"({"z":0})");
}

TEST(Format, ErrorsWithHostileNameOrMessage) {
  EXPECT_EQ(
      logged("const e = new Error('m'); Object.defineProperty(e, 'name', {get() { throw 1; }}); log(e)"),
      "Error: m");
  EXPECT_EQ(logged("const e = new Error('m'); e.message = {}; e.name = 42; log(e)"), "Error");
}

}  // namespace
}  // namespace skillbox::bindings
