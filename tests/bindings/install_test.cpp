// install_host_api: what it adds to the global object, and the "Host objects" cases of
// docs/security.md against every host function it installs.
#include "bindings/install.h"

#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "bindings/js_harness.h"

namespace skillbox::bindings {
namespace {

using testing::JsHarness;

// An expression listing every host function reachable from the host API.
constexpr const char* kHostFunctions = R"JS((() => {
  const getter = (o, k) => Object.getOwnPropertyDescriptor(o, k).get;
  return [log, console.log, console.info, console.warn, console.error, console.debug, atob, btoa,
    crypto.getRandomValues, crypto.randomUUID, TextEncoder, TextEncoder.prototype.encode,
    TextEncoder.prototype.encodeInto, getter(TextEncoder.prototype, 'encoding'), TextDecoder,
    TextDecoder.prototype.decode, getter(TextDecoder.prototype, 'encoding'), getter(TextDecoder.prototype, 'fatal'),
    getter(TextDecoder.prototype, 'ignoreBOM'), store.get, store.set, store.delete, store.keys, env.get,
    ...Object.values(Object.getOwnPropertyDescriptors(openhuman.fs)).map(d => d.value),
    ...Object.values(Object.getOwnPropertyDescriptors(openhuman.http)).map(d => d.value)];
})())JS";

TEST(Install, AddsExactlyTheHostApiGlobals) {
  JsHarness bare(/*install=*/false);
  JsHarness js;
  ASSERT_TRUE(js.installed());
  const std::string names = "Object.getOwnPropertyNames(globalThis).sort().join()";
  const std::string before = bare.eval(names).value;
  const std::string after = js.eval(names).value;
  EXPECT_EQ(js.eval("const before = new Set(" + std::string("'") + before +
                    "'.split(','));"
                    "Object.getOwnPropertyNames(globalThis).filter(n => !before.has(n)).sort().join()")
                .value,
            "TextDecoder,TextEncoder,atob,btoa,console,crypto,env,log,openhuman,store");
  // Nothing removed either.
  EXPECT_EQ(bare.eval("const after = new Set('" + after +
                      "'.split(','));"
                      "Object.getOwnPropertyNames(globalThis).filter(n => !after.has(n)).join()")
                .value,
            "");
}

TEST(Install, GlobalsHaveWebIdlAttributes) {
  JsHarness js;
  EXPECT_EQ(
      js.eval("['log', 'console', 'TextEncoder', 'TextDecoder', 'atob', 'btoa', 'crypto', 'openhuman', 'env',"
              " 'store']"
              ".map(n => { const d = Object.getOwnPropertyDescriptor(globalThis, n);"
              " return d.writable && d.configurable && !d.enumerable; }).every(Boolean)")
          .value,
      "true");
  EXPECT_EQ(js.eval("[typeof openhuman, Object.getOwnPropertyNames(openhuman).sort().join(),"
                    " Object.getPrototypeOf(openhuman) === Object.prototype, Object.keys(console).length,"
                    " ['env', 'store'].map(n => { const d = Object.getOwnPropertyDescriptor(openhuman, n);"
                    " return d.writable && d.configurable && !d.enumerable; }).every(Boolean)]")
                .value,
            R"(["object","env,fs,http,store",true,0,true])");
}

TEST(Install, SecurityEveryHostFunctionBelongsToTheSkillsRealm) {
  JsHarness js;
  EXPECT_EQ(
      js.eval(std::string("const fs = ") + kHostFunctions +
              "; [fs.length, fs.every(f => typeof f === 'function' && f.constructor === Function &&"
              " f.constructor.constructor === Function && Object.getPrototypeOf(f) === Function.prototype)]")
          .value,
      "[36,true]");
  // Prototypes and namespace objects inherit from this realm's Object.prototype.
  EXPECT_EQ(js.eval("[console, crypto, openhuman, TextEncoder.prototype, TextDecoder.prototype]"
                    ".every(o => Object.getPrototypeOf(o) === Object.prototype && o.constructor.constructor "
                    "=== Function)")
                .value,
            "true");
}

TEST(Install, SecurityHostileArgumentsToEveryHostFunction) {
  // Each function is called with each hostile value in each of its first three argument positions.
  // Allowed outcomes: a normal return, or a TypeError of the skill's own realm. Never a host crash,
  // a foreign object, another throw, or a call of toString/valueOf/toPrimitive.
  JsHarness js;
  // Store and env requests get the reply of an empty store / unset name.
  js.bridge.responder = [](const bus::Request& request) -> bus::Reply {
    if (std::holds_alternative<bus::StoreGetRequest>(request) ||
        std::holds_alternative<bus::EnvGetRequest>(request))
      return bus::OptionalStringReply{};
    if (std::holds_alternative<bus::StoreDeleteRequest>(request)) return bus::BoolReply{};
    if (std::holds_alternative<bus::StoreKeysRequest>(request)) return bus::StringListReply{};
    return bus::OkReply{};
  };
  const testing::JsResult r = js.eval(std::string(R"JS(
    let conversions = 0;
    const recurse = () => Object.getPrototypeOf(hostileProxy);
    const hostileProxy = new Proxy({}, {
      getPrototypeOf() { return recurse(); },
      get() { throw new Error('get trap'); },
      getOwnPropertyDescriptor() { throw 1; },
      has() { throw 1; }, ownKeys() { throw 1; },
    });
    const revocable = Proxy.revocable({}, {}); revocable.revoke();
    const converting = {
      toString() { conversions++; return 'utf-8'; }, valueOf() { conversions++; return 1; },
      [Symbol.toPrimitive]() { conversions++; return 'x'; },
    };
    const throwingGetters = { get fatal() { throw 2; }, get stream() { throw 3; }, get length() { throw 4; } };
    const hostile = [hostileProxy, revocable.proxy, converting, throwingGetters, Symbol('s'),
                     new Proxy(new Uint8Array(4), {}), new Proxy(function () {}, {})];
    const te = new TextEncoder(), td = new TextDecoder();
    const calls = [
      ['log', a => log(...a)], ['console.error', a => console.error(...a)], ['atob', a => atob(...a)],
      ['btoa', a => btoa(...a)], ['getRandomValues', a => crypto.getRandomValues(...a)],
      ['randomUUID', a => crypto.randomUUID(...a)], ['new TextEncoder', a => new TextEncoder(...a)],
      ['encode', a => te.encode(...a)], ['encodeInto', a => te.encodeInto(...a)],
      ['new TextDecoder', a => new TextDecoder(...a)], ['decode', a => td.decode(...a)],
      ['store.get', a => store.get(...a)], ['store.set', a => store.set(...a)],
      ['store.delete', a => store.delete(...a)], ['store.keys', a => store.keys(...a)], ['env.get', a => env.get(...a)],
    ];
    const bad = [];
    let returned = 0, threw = 0;
    for (const [name, call] of calls) for (const h of hostile) for (let pos = 0; pos < 3; pos++) {
      const args = ['utf8', new Uint8Array(4), {}]; args[pos] = h;  // 'utf8' is valid base64 and a label
      try { call(args); returned++; }
      catch (e) {
        threw++;
        const proto = typeof e === 'object' && e !== null ? Object.getPrototypeOf(e) : null;
        if (!(e instanceof TypeError) || proto !== TypeError.prototype)
          bad.push(name + ' arg ' + pos + ': ' + String(e && e.name) + ' ' + String(e && e.message));
      }
    }
    JSON.stringify({bad, conversions, returned: returned > 0, threw: threw > 0})
  )JS"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.value, R"({"bad":[],"conversions":0,"returned":true,"threw":true})");

  // The next invocation in the same process behaves normally.
  JsHarness next;
  EXPECT_EQ(
      next.eval("log('fine'); new TextDecoder().decode(new TextEncoder().encode('ok')) + btoa('a')").value,
      "okYQ==");
  EXPECT_EQ(next.bridge.texts(), std::vector<std::string>{"fine"});
}

TEST(Install, SecurityReplacedIntrinsicsDoNotAffectHostResults) {
  // A skill that replaces constructors and prototype accessors cannot make host functions run its code.
  JsHarness js;
  EXPECT_EQ(js.eval(R"JS(
    let ran = 0;
    globalThis.Uint8Array = function () { ran++; };
    Object.defineProperty(Object.getPrototypeOf(Int8Array.prototype), 'length', {get() { ran++; return 0; }});
    Object.defineProperty(DataView.prototype, 'byteLength', {get() { ran++; return 0; }});
    Object.defineProperty(Object.prototype, 'then', {get() { ran++; }});
    const bytes = new TextEncoder().encode('abc');
    const text = new TextDecoder().decode(new DataView(bytes.buffer));
    crypto.getRandomValues(new Int32Array(2));
    [ran, text, bytes.byteLength]
  )JS")
                .value,
            R"([0,"abc",3])");
}

TEST(Install, IsCheapEnoughToRunPerInvocationAndLeavesNothingBehind) {
  // Many fresh contexts in a row: each installs, is used, and is freed without leaking (QuickJS
  // asserts on leaked objects in debug builds when the runtime is freed).
  for (int i = 0; i < 200; ++i) {
    JsHarness js;
    ASSERT_TRUE(js.installed());
    ASSERT_EQ(
        js.eval("log(i => i); new TextDecoder('utf-8', {fatal: true}).decode(new Uint8Array([0x61]))").value,
        "a");
  }
}

}  // namespace
}  // namespace skillbox::bindings
