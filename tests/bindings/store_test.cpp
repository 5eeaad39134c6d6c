// The `store` binding: what reaches the bus for each call, how replies come back, and hostile arguments.
// A FakeBridge stands in for the capability (tests/bindings/js_harness.h), so every request can be
// inspected; tests/bindings/store_runner_test.cpp runs the same API end to end.
#include "bindings/store.h"

#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "bindings/js_harness.h"

namespace skillbox::bindings {
namespace {

class StoreBinding : public ::testing::Test {
 protected:
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
  /// The last request sent, which must be a T (a default T and a failure otherwise).
  template <typename T>
  T last() const {
    const T* r = js.bridge.requests.empty() ? nullptr : std::get_if<T>(&js.bridge.requests.back());
    if (r == nullptr) {
      ADD_FAILURE() << "the last request is not of the expected type";
      return T{};
    }
    return *r;
  }
  testing::JsHarness js;
};

TEST_F(StoreBinding, InstallsOneObjectUnderTwoNames) {
  ASSERT_TRUE(js.installed());
  EXPECT_EQ(value("[typeof store, store === openhuman.store, Object.keys(store).length,"
                  " ['get', 'set', 'delete', 'keys'].map(n => typeof store[n] + store[n].length).join()]"),
            R"(["object",true,0,"function1,function2,function1,function0"])");
  // Host functions lead back to the skill's own Function, nowhere else.
  EXPECT_EQ(
      value("['get', 'set', 'delete', 'keys'].every(n => store[n].constructor.constructor === Function)"),
      "true");
}

TEST_F(StoreBinding, SetSendsTheValuesJson) {
  EXPECT_EQ(value("store.set('k', {a: 1, b: [true, null, 'x'], c: {d: -2.5}})"), "undefined");
  const auto set = last<bus::StoreSetRequest>();
  EXPECT_EQ(set.key, "k");
  EXPECT_EQ(set.value_json, R"({"a":1,"b":[true,null,"x"],"c":{"d":-2.5}})");
  // JSON.stringify semantics: toJSON, NaN -> null, undefined members dropped, in arrays null.
  value(
      "store.set('k', {when: new Date(0), n: NaN, u: undefined, arr: [undefined, () => 1],"
      " t: {toJSON() { return 'custom' }}})");
  EXPECT_EQ(last<bus::StoreSetRequest>().value_json,
            R"({"when":"1970-01-01T00:00:00.000Z","n":null,"arr":[null,null],"t":"custom"})");
  value("store.set('s', 'héllo ✓'); store.set('n', 0); store.set('z', null)");
  EXPECT_EQ(last<bus::StoreSetRequest>().value_json, "null");
}

TEST_F(StoreBinding, KeysReachTheCapabilityByteForByte) {
  js.bridge.responder = [](const bus::Request&) { return bus::Reply{bus::OptionalStringReply{}}; };
  value("store.get('notes.txt\\0/../../x')");
  EXPECT_EQ(last<bus::StoreGetRequest>().key, std::string("notes.txt\0/../../x", 18))
      << "NUL kept: the capability refuses it";
  value("store.get('é😀')");
  EXPECT_EQ(last<bus::StoreGetRequest>().key, "é😀");
}

TEST_F(StoreBinding, ValuesWithoutAJsonFormAreTypeErrors) {
  const size_t before = js.bridge.requests.size();
  EXPECT_EQ(error("store.set('k', undefined)"),
            "TypeError: store.set: value must be a value JSON can represent, got undefined");
  EXPECT_EQ(error("store.set('k', () => 1)"),
            "TypeError: store.set: value must be a value JSON can represent, got function");
  EXPECT_EQ(error("store.set('k', Symbol('s'))"),
            "TypeError: store.set: value must be a value JSON can represent, got symbol");
  // Cycles and BigInts: the engine's own JSON error becomes the cause.
  EXPECT_EQ(value("const o = {}; o.self = o; try { store.set('k', o) } catch (e) {"
                  " [e.name, e instanceof TypeError, e.message, e.cause instanceof TypeError].join('|') }"),
            "TypeError|true|store.set: value cannot be stored as JSON (see the cause)|true");
  EXPECT_EQ(
      value("try { store.set('k', {n: 10n}) } catch (e) { [e.name, e.cause instanceof TypeError].join() }"),
      "TypeError,true");
  // Fewer than two arguments is not "set to undefined".
  EXPECT_EQ(error("store.set('k')").rfind("TypeError: store.set: 2 arguments required", 0), 0u);
  EXPECT_EQ(js.bridge.requests.size(), before) << "nothing reached the store";
}

TEST_F(StoreBinding, HostileValuesRunOnlyAsSkillCode) {
  const size_t before = js.bridge.requests.size();
  // A throwing toJSON, getter or Proxy trap: a TypeError whose cause is what the skill threw.
  EXPECT_EQ(value("const boom = new RangeError('mine');"
                  "const cases = [{toJSON() { throw boom }}, {get x() { throw boom }},"
                  " new Proxy({}, {ownKeys() { throw boom }}), new Proxy({}, {get() { throw boom }}),"
                  " new Proxy({}, {getPrototypeOf() { throw boom }})];"
                  "cases.map(v => { try { store.set('k', v); return 'stored' }"
                  " catch (e) { return e.name + ':' + (e.cause === boom) } }).join()"),
            "TypeError:true,TypeError:true,TypeError:true,TypeError:true,stored");
  // The Proxy whose getPrototypeOf throws is still serialised (JSON.stringify never asks for it): as {}.
  EXPECT_EQ(js.bridge.requests.size(), before + 1);
  EXPECT_EQ(last<bus::StoreSetRequest>().value_json, "{}");
  // A thrown null is still a cause, not mistaken for anything else.
  EXPECT_EQ(value("try { store.set('k', {toJSON() { throw null }}) } catch (e) { [e.name, e.cause === "
                  "null].join() }"),
            "TypeError,true");
}

TEST_F(StoreBinding, KeysMustBeStringPrimitivesAndNoConversionRuns) {
  js.bridge.responder = [](const bus::Request&) { return bus::Reply{bus::OptionalStringReply{}}; };
  const size_t before = js.bridge.requests.size();
  EXPECT_EQ(
      value(
          "globalThis.ran = 0;"
          "const sneaky = {toString() { ran++; return 'k' }, valueOf() { ran++; return 'k' },"
          " [Symbol.toPrimitive]() { ran++; return 'k' }};"
          "const proxy = new Proxy({}, {get() { ran++; return () => 'k' }, getPrototypeOf() { ran++; }});"
          "const keys = [1, null, undefined, true, 10n, Symbol('k'), sneaky, proxy, new String('k'), ['k']];"
          "const fns = [k => store.get(k), k => store.set(k, 1), k => store.delete(k), k => store.keys(k)];"
          "const names = [];"
          "for (const f of fns) for (const k of keys) {"
          " if (f === fns[3] && k === undefined) continue;"
          " try { f(k); names.push('none') } catch (e) { names.push(e instanceof TypeError ? 'T' : e.name) } "
          "}"
          "[ran, [...new Set(names)].join()]"),
      R"([0,"T"])");
  EXPECT_EQ(js.bridge.requests.size(), before) << "no request for a key that is not a string";
  EXPECT_EQ(error("store.get(42)"), "TypeError: store.get: key must be a string, got number");
  EXPECT_EQ(error("store.keys({})"), "TypeError: store.keys: prefix must be a string, got object");
  EXPECT_EQ(error("store.get()").rfind("TypeError: store.get: 1 argument", 0), 0u);
  // A lone surrogate cannot become a key: two different JS strings must never name the same key.
  EXPECT_EQ(error("store.get('a\\uD800')").rfind("TypeError: store.get: key must be well-formed Unicode", 0),
            0u);
}

TEST_F(StoreBinding, GetParsesAFreshCopyEachTime) {
  js.bridge.responder = [](const bus::Request& r) {
    if (std::holds_alternative<bus::StoreGetRequest>(r))
      return bus::Reply{bus::OptionalStringReply{R"({"list":[1,2],"s":"é"})"}};
    return bus::Reply{bus::OkReply{}};
  };
  EXPECT_EQ(value("const a = store.get('k'); a.list.push(3); const b = store.get('k');"
                  "[a !== b, b.list.length, b.s, Object.getPrototypeOf(b) === Object.prototype]"),
            R"([true,2,"é",true])");
}

TEST_F(StoreBinding, RepliesBecomeValues) {
  js.bridge.responder = [](const bus::Request& r) -> bus::Reply {
    if (std::holds_alternative<bus::StoreGetRequest>(r)) return bus::OptionalStringReply{};
    if (const auto* d = std::get_if<bus::StoreDeleteRequest>(&r)) return bus::BoolReply{d->key == "there"};
    if (const auto* k = std::get_if<bus::StoreKeysRequest>(&r))
      return bus::StringListReply{{k->prefix + "1", k->prefix + "2"}};
    return bus::OkReply{};
  };
  EXPECT_EQ(value("[store.get('missing') === undefined, store.delete('there'), store.delete('gone')]"),
            "[true,true,false]");
  EXPECT_EQ(value("store.keys()"), R"(["1","2"])");
  EXPECT_EQ(last<bus::StoreKeysRequest>().prefix, "");
  EXPECT_EQ(value("store.keys(undefined).length"), "2");
  EXPECT_EQ(value("store.keys('p/')"), R"(["p/1","p/2"])");
  EXPECT_EQ(value("Array.isArray(store.keys())"), "true");
}

TEST_F(StoreBinding, ErrorRepliesAreHostErrorsOfTheSkillRealm) {
  js.bridge.responder = [](const bus::Request&) {
    return bus::Reply{
        bus::ErrorReply{bus::ErrorCode::QuotaExceeded, "store quota exceeded: 3 keys (limit is 2)"}};
  };
  EXPECT_EQ(value("try { store.set('k', 1) } catch (e) {"
                  " [e.name, e.code, e.message, e instanceof Error].join('|') }"),
            "QuotaExceeded|EQUOTA|store quota exceeded: 3 keys (limit is 2)|true");
  js.bridge.responder = [](const bus::Request&) {
    return bus::Reply{bus::ErrorReply{bus::ErrorCode::InvalidArgument, "store key contains a NUL character"}};
  };
  EXPECT_EQ(value("try { store.get('a\\0') } catch (e) { [e.name, e.code].join() }"),
            "InvalidArgument,EINVAL");
  // A reply of the wrong type (a host bug) is an InternalError, never a crash.
  js.bridge.responder = [](const bus::Request&) { return bus::Reply{bus::BytesReply{}}; };
  EXPECT_EQ(error("store.get('k')"), "InternalError: store.get: the host returned an unexpected reply");
  EXPECT_EQ(error("store.keys()"), "InternalError: store.keys: the host returned an unexpected reply");
}

TEST_F(StoreBinding, InvalidJsonFromTheHostIsASyntaxErrorNotAValue) {
  js.bridge.responder = [](const bus::Request&) { return bus::Reply{bus::OptionalStringReply{"{oops"}}; };
  EXPECT_EQ(error("store.get('k')").rfind("SyntaxError", 0), 0u);
  EXPECT_EQ(value("1 + 1"), "2") << "the context keeps working";
}

TEST_F(StoreBinding, AnInterruptedToJsonStopsTheRun) {
  js.set_step_limit(50);
  const size_t before = js.bridge.requests.size();
  const testing::JsResult r =
      js.eval("try { store.set('k', {toJSON() { for (;;) {} }}) } catch (e) { 'caught' }");
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.interrupted) << "the uncatchable interrupt propagates unchanged, not as a TypeError";
  EXPECT_EQ(js.bridge.requests.size(), before);
}

}  // namespace
}  // namespace skillbox::bindings
