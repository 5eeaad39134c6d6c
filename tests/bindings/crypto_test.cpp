// crypto.getRandomValues and crypto.randomUUID (Web Cryptography API).
#include "bindings/crypto.h"

#include <gtest/gtest.h>

#include <array>
#include <string>

#include "bindings/js_harness.h"
#include "bindings/owners.h"

namespace skillbox::bindings {
namespace {

class Crypto : public ::testing::Test {
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
  std::string error_shape(const std::string& call) {
    return value("try { " + call +
                 "; 'no throw' } catch (e) { [e.name, e.code, e instanceof Error,"
                 " Object.getPrototypeOf(e) === Error.prototype].join() }");
  }
  testing::JsHarness js;
};

TEST(FillRandom, FillsEveryByte) {
  // 4096 bytes all left at zero has probability 2^-32768: a failure means the buffer was not filled.
  std::array<uint8_t, 4096> a{};
  ASSERT_TRUE(fill_random(a.data(), a.size()));
  size_t zero = 0;
  for (uint8_t b : a) zero += b == 0 ? 1 : 0;
  EXPECT_LT(zero, 100u);  // about 16 expected
}

TEST_F(Crypto, GetRandomValuesFillsIntegerArraysInPlace) {
  EXPECT_EQ(value("const a = new Uint8Array(64); const r = crypto.getRandomValues(a); [r === a, a.some(x => "
                  "x !== 0)]"),
            "[true,true]");
  EXPECT_EQ(
      value("[Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,"
            " BigInt64Array, BigUint64Array].map(T => { const a = new T(8); crypto.getRandomValues(a);"
            " return a.some(x => x != 0); }).every(Boolean)"),
      "true");
  // Only the view's bytes are written.
  EXPECT_EQ(value("const a = new Uint8Array(32); crypto.getRandomValues(a.subarray(8, 16));"
                  "[a.slice(0, 8).every(x => x === 0), a.slice(16).every(x => x === 0), a.slice(8, "
                  "16).some(x => x)]"),
            "[true,true,true]");
  // 65,536 bytes: every byte value shows up (a missing one has probability about 256 * e^-256).
  EXPECT_EQ(value("const a = crypto.getRandomValues(new Uint8Array(65536)); new Set(a).size"), "256");
  EXPECT_EQ(value("crypto.getRandomValues(new Uint32Array(16384)).length"), "16384");
  EXPECT_EQ(value("crypto.getRandomValues(new Uint8Array(0)).length"), "0");
}

// crypto.cpp writes through the argument's ByteView (a const_cast): that memory is the ArrayBuffer's own
// storage from JS_GetArrayBuffer, seen by every view of the buffer, and a detached buffer has no bytes.
TEST_F(Crypto, GetRandomValuesWritesTheCallersBuffer) {
  EXPECT_EQ(
      value("const b = new ArrayBuffer(64); const v = new Uint8Array(b, 16, 32);"
            "const r = crypto.getRandomValues(v); const all = new Uint8Array(b); const dv = new DataView(b);"
            "[r === v, all.slice(0, 16).every(x => x === 0), all.slice(48).every(x => x === 0),"
            " dv.getUint32(16) !== 0 || dv.getUint32(20) !== 0, v.every((x, i) => x === all[16 + i])]"),
      "[true,true,true,true,true]");
  EXPECT_EQ(value("try { Object.freeze(new Uint8Array(1)); 'frozen' } catch (e) { e.constructor.name }"),
            "TypeError");  // no read-only typed arrays in this engine
  // Skills cannot detach buffers in this engine; the host can, and nothing may be written then.
  js.eval("globalThis.u = new Uint8Array(8)");
  const Value global(js.ctx(), JS_GetGlobalObject(js.ctx()));
  const Value u = property(js.ctx(), global.get(), "u");
  size_t offset = 0, length = 0, element = 0;
  const Value buffer(js.ctx(), JS_GetTypedArrayBuffer(js.ctx(), u.get(), &offset, &length, &element));
  JS_DetachArrayBuffer(js.ctx(), buffer.get());
  EXPECT_EQ(value("[crypto.getRandomValues(u) === u, u.length].join()"), "true,0");
}

TEST_F(Crypto, GetRandomValuesRefusals) {
  EXPECT_EQ(error_shape("crypto.getRandomValues(new Float32Array(4))"), "TypeMismatchError,17,true,true");
  EXPECT_EQ(error_shape("crypto.getRandomValues(new Float64Array(4))"), "TypeMismatchError,17,true,true");
  EXPECT_EQ(error_shape("crypto.getRandomValues(new DataView(new ArrayBuffer(4)))"),
            "TypeMismatchError,17,true,true");
  EXPECT_EQ(error_shape("crypto.getRandomValues(new Uint8Array(65537))"), "QuotaExceededError,22,true,true");
  EXPECT_EQ(error_shape("crypto.getRandomValues(new Uint32Array(16385))"), "QuotaExceededError,22,true,true");
  EXPECT_EQ(
      error("crypto.getRandomValues(new Uint8Array(65537))"),
      "QuotaExceededError: crypto.getRandomValues: the array's byte length (65537) exceeds the 65536 bytes "
      "one call may fill");
  EXPECT_EQ(error("crypto.getRandomValues([1, 2])"),
            "TypeError: crypto.getRandomValues: array must be an integer TypedArray, got array");
  EXPECT_EQ(error("crypto.getRandomValues(new ArrayBuffer(4))"),
            "TypeError: crypto.getRandomValues: array must be an integer TypedArray, got ArrayBuffer");
  EXPECT_EQ(error("crypto.getRandomValues()"),
            "TypeError: crypto.getRandomValues: 1 argument required, but only 0 present");
  EXPECT_EQ(error("crypto.getRandomValues(new Proxy(new Uint8Array(4), {}))"),
            "TypeError: crypto.getRandomValues: array must be an integer TypedArray, got object");
}

TEST_F(Crypto, RandomUuidIsVersion4) {
  EXPECT_EQ(value("const re = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;"
                  "const seen = new Set(); let ok = true;"
                  "for (let i = 0; i < 1000; i++) { const u = crypto.randomUUID(); ok = ok && re.test(u); "
                  "seen.add(u); }"
                  "[ok, seen.size, typeof crypto.randomUUID(1, 2)]"),
            R"([true,1000,"string"])");
}

TEST_F(Crypto, MethodsNeedNoReceiver) {
  EXPECT_EQ(
      value("const { getRandomValues, randomUUID } = crypto; [getRandomValues(new Uint8Array(2)).length,"
            " randomUUID().length]"),
      "[2,36]");
}

}  // namespace
}  // namespace skillbox::bindings
