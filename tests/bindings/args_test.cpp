// The argument helpers, through small probe host functions written the way capability bindings
// will use them.
#include "bindings/args.h"

#include <gtest/gtest.h>

#include <string>

#include "bindings/function_list.h"
#include "bindings/js_harness.h"

namespace skillbox::bindings {
namespace {

using testing::JsHarness;

JSValue text_result(JSContext* ctx, const std::string& s) {
  return JS_NewStringLen(ctx, s.data(), s.size());
}

std::string bytes_text(const bus::Bytes& bytes) {
  std::string out;
  for (uint8_t b : bytes) out += (out.empty() ? "" : ",") + std::to_string(b);
  return out;
}

JSValue probe_string(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "probe.string", argc, argv);
  std::string s;
  if (!args.string(0, "value", s, {.max_bytes = 16})) return JS_EXCEPTION;
  return text_result(ctx, s);
}

JSValue probe_usv(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "probe.usv", argc, argv);
  std::string s;
  if (!args.string(0, "value", s, {.lone_surrogates = LoneSurrogates::replace})) return JS_EXCEPTION;
  return text_result(ctx, s);
}

JSValue probe_dom(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "probe.dom", argc, argv);
  std::string s;
  if (!args.string(0, "value", s, {.coerce_primitives = true})) return JS_EXCEPTION;
  return text_result(ctx, s);
}

JSValue probe_bytes(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "probe.bytes", argc, argv);
  bus::Bytes bytes;
  if (!args.bytes(0, "data", bytes, 8)) return JS_EXCEPTION;
  return text_result(ctx, bytes_text(bytes));
}

JSValue probe_data(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "probe.data", argc, argv);
  bus::Bytes bytes;
  if (!args.string_or_bytes(0, "data", bytes, 8)) return JS_EXCEPTION;
  return text_result(ctx, bytes_text(bytes));
}

JSValue probe_source(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "probe.source", argc, argv);
  ByteView view;
  if (!to_buffer_source(ctx, args[0], args.where("input"), view)) return JS_EXCEPTION;
  return text_result(ctx, bytes_text(bus::Bytes(view.data, view.data + view.size)));
}

JSValue probe_integer(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "probe.integer", argc, argv);
  int64_t n = 0;
  if (!args.integer(0, "n", -10, 1'000'000'000'000, n)) return JS_EXCEPTION;
  return text_result(ctx, std::to_string(n));
}

JSValue probe_int64(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "probe.int64", argc, argv);
  int64_t n = 0;
  if (!args.integer(0, "n", INT64_MIN, INT64_MAX, n)) return JS_EXCEPTION;
  return text_result(ctx, std::to_string(n));
}

JSValue probe_boolean(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "probe.boolean", argc, argv);
  bool b = false;
  if (!args.boolean(0, "flag", b)) return JS_EXCEPTION;
  return JS_NewBool(ctx, b);
}

enum class Mode : uint8_t { utf8, binary };

// Reads every kind of option once; returns what it read as text.
JSValue probe_options(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "probe.options", argc, argv);
  Options options;
  Mode mode = Mode::utf8;
  std::optional<int64_t> timeout;
  bool recursive = false;
  bool stream = false;
  std::optional<std::string> label;
  bus::Bytes body;
  if (!args.options(0, "options", options) ||
      !options.enumeration("encoding", {{"utf8", Mode::utf8}, {"binary", Mode::binary}}, mode) ||
      !options.integer("timeoutMs", 0, 600'000, timeout) || !options.boolean("recursive", recursive) ||
      !options.truthy("stream", stream) || !options.string("label", label) ||
      !options.string_or_bytes("body", body, 16))
    return JS_EXCEPTION;
  std::string out = mode == Mode::utf8 ? "utf8" : "binary";
  out += " timeout=" + (timeout ? std::to_string(*timeout) : std::string("none"));
  out += std::string(" recursive=") + (recursive ? "true" : "false");
  out += std::string(" stream=") + (stream ? "true" : "false");
  out += " label=" + label.value_or("none");
  out += " body=" + bytes_text(body);
  out += std::string(" empty=") + (options.empty() ? "true" : "false");
  return text_result(ctx, out);
}

JSValue probe_headers(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "probe.headers", argc, argv);
  std::vector<std::pair<std::string, std::string>> pairs;
  if (!to_string_pairs(ctx, args[0], args.where("headers"), pairs, 3)) return JS_EXCEPTION;
  std::string out;
  for (const auto& [k, v] : pairs) out += k + "=" + v + ";";
  return text_result(ctx, out);
}

JSValue probe_two(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "probe.two", argc, argv);
  if (!args.require(2)) return JS_EXCEPTION;
  return JS_UNDEFINED;
}

// A harness with a global `probe` object holding the functions above.
class ArgsTest : public ::testing::Test {
 protected:
  ArgsTest() {
    static const JSCFunctionListEntry kProbe[] = {
        list_function("string", 1, probe_string),   list_function("usv", 1, probe_usv),
        list_function("dom", 1, probe_dom),         list_function("bytes", 1, probe_bytes),
        list_function("data", 1, probe_data),       list_function("source", 1, probe_source),
        list_function("integer", 1, probe_integer), list_function("int64", 1, probe_int64),
        list_function("boolean", 1, probe_boolean), list_function("options", 1, probe_options),
        list_function("headers", 1, probe_headers), list_function("two", 2, probe_two),
    };
    JSValue probe = JS_NewObject(js.ctx());
    JS_SetPropertyFunctionList(js.ctx(), probe, kProbe, static_cast<int>(std::size(kProbe)));
    JSValue global = JS_GetGlobalObject(js.ctx());
    JS_SetPropertyStr(js.ctx(), global, "probe", probe);
    JS_FreeValue(js.ctx(), global);
  }

  std::string value(const std::string& source) {
    const testing::JsResult r = js.eval(source);
    EXPECT_TRUE(r.ok) << source << " threw " << r.error;
    return r.value;
  }
  std::string error(const std::string& source) {
    const testing::JsResult r = js.eval(source);
    EXPECT_FALSE(r.ok) << source << " returned " << r.value;
    return r.error;
  }
  // The thrown error's class as the skill sees it: checks it comes from the skill's own realm.
  std::string realm_class(const std::string& call) {
    return value("try { " + call +
                 "; 'no throw' } catch (e) { [TypeError, RangeError, Error].find(C => "
                 "Object.getPrototypeOf(e) === C.prototype && e instanceof C)?.name ?? 'foreign' }");
  }

  JsHarness js;
};

TEST_F(ArgsTest, StringsMustBeStringPrimitives) {
  EXPECT_EQ(value("probe.string('abc')"), "abc");
  EXPECT_EQ(value("probe.string('a\\0b').length"), "3");  // NUL kept; capabilities refuse it
  EXPECT_EQ(error("probe.string(1)"), "TypeError: probe.string: value must be a string, got number");
  EXPECT_EQ(error("probe.string()"), "TypeError: probe.string: value must be a string, got undefined");
  EXPECT_EQ(error("probe.string(new String('x'))"),
            "TypeError: probe.string: value must be a string, got object");
  EXPECT_EQ(error("probe.string(['a'])"), "TypeError: probe.string: value must be a string, got array");
  EXPECT_EQ(error("probe.string(Symbol())"), "TypeError: probe.string: value must be a string, got symbol");
  EXPECT_EQ(error("probe.string(() => 1)"), "TypeError: probe.string: value must be a string, got function");
  EXPECT_EQ(realm_class("probe.string({})"), "TypeError");
}

TEST_F(ArgsTest, NoImplicitConversionRunsSkillCode) {
  EXPECT_EQ(value("let calls = 0;"
                  "const o = {toString() { calls++; return 'x'; }, valueOf() { calls++; return 1; },"
                  "           [Symbol.toPrimitive]() { calls++; return 'p'; }};"
                  "const p = new Proxy({}, new Proxy({}, {get() { calls++; return () => { throw 1; }; }}));"
                  "for (const f of [probe.string, probe.bytes, probe.integer, probe.boolean, probe.data])"
                  "  for (const v of [o, p]) { try { f(v); } catch (e) {} }"
                  "calls"),
            "0");
}

TEST_F(ArgsTest, LoneSurrogatesAreRefusedOrReplaced) {
  EXPECT_EQ(error("probe.string('a\\ud800')"),
            "TypeError: probe.string: value must be well-formed Unicode (it contains a lone surrogate)");
  EXPECT_EQ(error("probe.string('\\udc00x')"),
            "TypeError: probe.string: value must be well-formed Unicode (it contains a lone surrogate)");
  EXPECT_EQ(value("probe.string('\\ud83d\\ude00')"), "\xF0\x9F\x98\x80");  // a pair is fine
  EXPECT_EQ(value("probe.usv('a\\ud800b\\udfff') === 'a\\ufffdb\\ufffd'"), "true");
  EXPECT_EQ(value("probe.usv('\\u00e9\\ud800')"), "\xC3\xA9\xEF\xBF\xBD");
}

TEST_F(ArgsTest, StringLengthIsCheckedInUtf8Bytes) {
  EXPECT_EQ(value("probe.string('x'.repeat(16))"), std::string(16, 'x'));
  EXPECT_EQ(error("probe.string('x'.repeat(17))"),
            "RangeError: probe.string: value is too large (17 bytes of UTF-8; the limit is 16)");
  EXPECT_EQ(error("probe.string('\\u00e9'.repeat(9))"),
            "RangeError: probe.string: value is too large (18 bytes of UTF-8; the limit is 16)");
  EXPECT_EQ(realm_class("probe.string('x'.repeat(17))"), "RangeError");
}

TEST_F(ArgsTest, PrimitivesCanBeCoercedWhereTheWebDoes) {
  EXPECT_EQ(value("[probe.dom(42), probe.dom(1.5), probe.dom(null), probe.dom(undefined), probe.dom(true),"
                  " probe.dom(10n), probe.dom('s')].join('|')"),
            "42|1.5|null|undefined|true|10|s");
  EXPECT_EQ(error("probe.dom({toString() { return 'x'; }})"),
            "TypeError: probe.dom: value must be a string, got object");
  EXPECT_EQ(error("probe.dom(Symbol('s'))"), "TypeError: probe.dom: value must be a string, got symbol");
}

TEST_F(ArgsTest, BytesMustBeAUint8ArrayByClass) {
  EXPECT_EQ(value("probe.bytes(new Uint8Array([1, 2, 255]))"), "1,2,255");
  EXPECT_EQ(value("probe.bytes(new Uint8Array([1, 2, 3, 4]).subarray(1, 3))"), "2,3");
  EXPECT_EQ(value("class Bytes extends Uint8Array {} probe.bytes(new Bytes([7]))"), "7");
  EXPECT_EQ(value("probe.bytes(new Uint8Array(0))"), "");
  // The class decides, not the prototype a skill can change.
  EXPECT_EQ(
      value("const u = new Uint8Array([9]); Object.setPrototypeOf(u, Int8Array.prototype); probe.bytes(u)"),
      "9");
  EXPECT_EQ(
      error("const i = new Int8Array(1); Object.setPrototypeOf(i, Uint8Array.prototype); probe.bytes(i)"),
      "TypeError: probe.bytes: data must be a Uint8Array, got Int8Array");
  EXPECT_EQ(error("probe.bytes(new ArrayBuffer(1))"),
            "TypeError: probe.bytes: data must be a Uint8Array, got ArrayBuffer");
  EXPECT_EQ(error("probe.bytes([1, 2])"), "TypeError: probe.bytes: data must be a Uint8Array, got array");
  EXPECT_EQ(error("probe.bytes('ab')"), "TypeError: probe.bytes: data must be a Uint8Array, got string");
  EXPECT_EQ(error("probe.bytes(new Proxy(new Uint8Array(1), {}))"),
            "TypeError: probe.bytes: data must be a Uint8Array, got object");
  EXPECT_EQ(error("probe.bytes(new Uint8Array(9))"),
            "RangeError: probe.bytes: data is too large (9 bytes; the limit is 8)");
}

TEST_F(ArgsTest, StringOrBytes) {
  EXPECT_EQ(value("probe.data('\\u00e9')"), "195,169");
  EXPECT_EQ(value("probe.data('\\ud800')"), "239,191,189");  // like TextEncoder
  EXPECT_EQ(value("probe.data(new Uint8Array([5]))"), "5");
  EXPECT_EQ(error("probe.data(5)"),
            "TypeError: probe.data: data must be a string or a Uint8Array, got number");
  EXPECT_EQ(error("probe.data('123456789')"),
            "RangeError: probe.data: data is too large (9 bytes of UTF-8; the limit is 8)");
}

TEST_F(ArgsTest, BufferSources) {
  EXPECT_EQ(value("probe.source(new Uint8Array([1, 2]).buffer)"), "1,2");
  EXPECT_EQ(value("probe.source(new Uint16Array([0x0201]))"), "1,2");
  EXPECT_EQ(value("probe.source(new DataView(new Uint8Array([1, 2, 3, 4]).buffer, 1, 2))"), "2,3");
  // A DataView is measured with the original getters, whatever the skill did to the prototype.
  EXPECT_EQ(value("Object.defineProperty(DataView.prototype, 'byteLength', {get() { return 1e9; }});"
                  "Object.defineProperty(DataView.prototype, 'byteOffset', {get() { return -5; }});"
                  "probe.source(new DataView(new Uint8Array([1, 2, 3]).buffer, 2))"),
            "3");
  EXPECT_EQ(error("probe.source('x')"),
            "TypeError: probe.source: input must be an ArrayBuffer, a TypedArray or a DataView, got string");
}

TEST_F(ArgsTest, DetachedBuffersAreEmpty) {
  // Skills cannot detach buffers in this engine; the host can, and the helpers must not read freed memory.
  js.eval("globalThis.u = new Uint8Array([1, 2, 3]); globalThis.dv = new DataView(u.buffer)");
  JSValue global = JS_GetGlobalObject(js.ctx());
  JSValue u = JS_GetPropertyStr(js.ctx(), global, "u");
  size_t off = 0, len = 0, bpe = 0;
  JSValue buffer = JS_GetTypedArrayBuffer(js.ctx(), u, &off, &len, &bpe);
  JS_DetachArrayBuffer(js.ctx(), buffer);
  JS_FreeValue(js.ctx(), buffer);
  JS_FreeValue(js.ctx(), u);
  JS_FreeValue(js.ctx(), global);
  EXPECT_EQ(value("probe.bytes(u)"), "");
  EXPECT_EQ(value("probe.data(u)"), "");
  EXPECT_EQ(value("probe.source(u)"), "");
  EXPECT_EQ(value("probe.source(u.buffer)"), "");
  EXPECT_EQ(value("probe.source(dv)"), "");
}

TEST_F(ArgsTest, IntegersAreNumbersInRange) {
  EXPECT_EQ(value("[probe.integer(5), probe.integer(-0), probe.integer(-10), probe.integer(1e12)].join()"),
            "5,0,-10,1000000000000");
  EXPECT_EQ(error("probe.integer(1.5)"),
            "TypeError: probe.integer: n must be an integer between -10 and 1000000000000, got 1.5");
  EXPECT_EQ(error("probe.integer(NaN)"),
            "TypeError: probe.integer: n must be an integer between -10 and 1000000000000, got NaN");
  EXPECT_EQ(error("probe.integer('5')"),
            "TypeError: probe.integer: n must be an integer between -10 and 1000000000000, got string");
  EXPECT_EQ(error("probe.integer(5n)"),
            "TypeError: probe.integer: n must be an integer between -10 and 1000000000000, got bigint");
  EXPECT_EQ(error("probe.integer(-11)"),
            "RangeError: probe.integer: n must be between -10 and 1000000000000, got -11");
  EXPECT_EQ(error("probe.integer(1e12 + 1)"),
            "RangeError: probe.integer: n must be between -10 and 1000000000000, got 1000000000001");
  EXPECT_EQ(error("probe.integer(Infinity)"),
            "TypeError: probe.integer: n must be an integer between -10 and 1000000000000, got Infinity");
  // The extremes of int64 do not overflow the conversion.
  EXPECT_EQ(value("probe.int64(-(2 ** 63))"), "-9223372036854775808");
  EXPECT_EQ(error("probe.int64(2 ** 63)").substr(0, 11), "RangeError:");
  EXPECT_EQ(error("probe.int64(1e300)").substr(0, 11), "RangeError:");
}

TEST_F(ArgsTest, BooleansAreStrict) {
  EXPECT_EQ(value("probe.boolean(true)"), "true");
  EXPECT_EQ(value("probe.boolean(false)"), "false");
  EXPECT_EQ(error("probe.boolean(1)"), "TypeError: probe.boolean: flag must be a boolean, got number");
  EXPECT_EQ(error("probe.boolean(new Boolean(true))"),
            "TypeError: probe.boolean: flag must be a boolean, got object");
}

TEST_F(ArgsTest, OptionsDefaultsAndValues) {
  const std::string defaults = "utf8 timeout=none recursive=false stream=false label=none body= empty=true";
  EXPECT_EQ(value("probe.options()"), defaults);
  EXPECT_EQ(value("probe.options(null)"), defaults);
  EXPECT_EQ(value("probe.options({})"),
            "utf8 timeout=none recursive=false stream=false label=none body= empty=false");
  EXPECT_EQ(value("probe.options({encoding: 'binary', timeoutMs: 250, recursive: true, stream: 'yes',"
                  " label: 'L', body: 'hi'})"),
            "binary timeout=250 recursive=true stream=true label=L body=104,105 empty=false");
  // undefined members are absent; inherited members count (Web IDL dictionaries read with [[Get]]).
  EXPECT_EQ(value("probe.options(Object.create({encoding: 'binary'}, {timeoutMs: {value: undefined}}))"),
            "binary timeout=none recursive=false stream=false label=none body= empty=false");
  EXPECT_EQ(error("probe.options('utf8')"),
            "TypeError: probe.options: options must be an object, got string");
  EXPECT_EQ(error("probe.options({encoding: 'latin1'})"),
            "TypeError: probe.options: options.encoding must be one of \"utf8\", \"binary\", got \"latin1\"");
  EXPECT_EQ(error("probe.options({encoding: 1})"),
            "TypeError: probe.options: options.encoding must be a string, got number");
  EXPECT_EQ(error("probe.options({timeoutMs: -1})"),
            "RangeError: probe.options: options.timeoutMs must be between 0 and 600000, got -1");
  EXPECT_EQ(error("probe.options({recursive: 'yes'})"),
            "TypeError: probe.options: options.recursive must be a boolean, got string");
  EXPECT_EQ(error("probe.options({body: 'x'.repeat(17)})"),
            "RangeError: probe.options: options.body is too large (17 bytes of UTF-8; the limit is 16)");
  EXPECT_EQ(
      error("probe.options({encoding: 'a'.repeat(100)})").size(),
      std::string("TypeError: probe.options: options.encoding must be one of \"utf8\", \"binary\", got \"")
              .size() +
          40 + 4);  // the skill's string is quoted shortened
}

TEST_F(ArgsTest, OptionsAreReadOnceEachInOrder) {
  EXPECT_EQ(
      value(
          "const seen = [];"
          "const o = new Proxy({encoding: 'utf8', timeoutMs: 1}, {get(t, k) { seen.push(k); return t[k]; }});"
          "probe.options(o); seen.join()"),
      "encoding,timeoutMs,recursive,stream,label,body");
  EXPECT_EQ(value("let n = 0; probe.options({get label() { n++; return 'x'; }}); n"), "1");
}

TEST_F(ArgsTest, OptionGettersThatThrowBecomeTypeErrors) {
  EXPECT_EQ(error("probe.options({get timeoutMs() { throw 42; }})"),
            "TypeError: probe.options: reading options.timeoutMs threw an exception");
  EXPECT_EQ(value("try { probe.options({get label() { throw 42; }}) } catch (e) { e.cause }"), "42");
  EXPECT_EQ(realm_class("probe.options({get label() { throw null; }})"), "TypeError");
  EXPECT_EQ(realm_class("probe.options(new Proxy({}, {get() { throw new RangeError('r'); }}))"), "TypeError");
}

TEST_F(ArgsTest, SecurityAnInterruptedOptionGetterPropagates) {
  js.set_step_limit(20);
  const testing::JsResult r =
      js.eval("try { probe.options({get encoding() { for (;;) {} }}) } catch (e) { 'swallowed' }");
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.interrupted) << r.error;
}

TEST_F(ArgsTest, StringRecords) {
  EXPECT_EQ(value("probe.headers({'content-type': 'text/plain', 'x-id': '7'})"),
            "content-type=text/plain;x-id=7;");
  EXPECT_EQ(value("probe.headers({})"), "");
  EXPECT_EQ(error("probe.headers({a: '1', b: 2})"),
            "TypeError: probe.headers: headers[\"b\"] must be a string, got number");
  EXPECT_EQ(error("probe.headers({a: '', b: '', c: '', d: ''})"),
            "RangeError: probe.headers: headers is too large (4 entries; the limit is 3)");
  EXPECT_EQ(error("probe.headers('a=b')"),
            "TypeError: probe.headers: headers must be an object of strings, got string");
  EXPECT_EQ(error("probe.headers({get a() { throw 1; }})"),
            "TypeError: probe.headers: headers could not be read (reading \"a\" threw an exception)");
  EXPECT_EQ(error("probe.headers(new Proxy({}, {ownKeys() { throw 1; }}))"),
            "TypeError: probe.headers: headers could not be read (listing its keys threw an exception)");
}

TEST_F(ArgsTest, ArgumentCount) {
  EXPECT_EQ(error("probe.two('a')"), "TypeError: probe.two: 2 arguments required, but only 1 present");
  EXPECT_EQ(value("probe.two(undefined, undefined)"), "undefined");
}

TEST_F(ArgsTest, SecurityHostileProxyWithRecursingGetPrototypeOf) {
  // The docs/security.md argument: no trap of it may run, and every probe answers with a TypeError of
  // the skill's realm.
  js.eval(
      "globalThis.hostile = new Proxy({}, {getPrototypeOf() { return Object.getPrototypeOf(hostile); },"
      " get() { throw 1; }, ownKeys() { for (;;) {} }})");
  for (const char* f : {"string", "usv", "dom", "bytes", "data", "source", "integer", "boolean", "headers"}) {
    const std::string call = std::string("probe.") + f + "(hostile)";
    if (std::string(f) == "headers") continue;  // a record is read through its traps (next test)
    EXPECT_EQ(realm_class(call), "TypeError") << call;
  }
  EXPECT_EQ(realm_class("probe.options(hostile)"), "TypeError");  // the get trap throws
}

TEST_F(ArgsTest, SecurityLoopingOwnKeysOfARecordIsInterrupted) {
  js.set_step_limit(20);
  const testing::JsResult r = js.eval("probe.headers(new Proxy({}, {ownKeys() { for (;;) {} }}))");
  EXPECT_TRUE(r.interrupted) << r.error;
}

}  // namespace
}  // namespace skillbox::bindings
