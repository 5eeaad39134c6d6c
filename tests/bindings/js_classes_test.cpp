// The QuickJS class ids the bindings rely on, checked against live objects of this engine build.
#include "bindings/js_classes.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "bindings/js_harness.h"

namespace skillbox::bindings {
namespace {

using testing::JsHarness;

struct Case {
  const char* source;
  JSClassID id;
};

const Case kCases[] = {
    {"new ArrayBuffer(1)", js_class::kArrayBuffer},
    {"new Uint8ClampedArray(1)", js_class::kUint8ClampedArray},
    {"new Int8Array(1)", js_class::kInt8Array},
    {"new Uint8Array(1)", js_class::kUint8Array},
    {"new Uint8Array(0)", js_class::kUint8Array},
    {"new Int16Array(1)", js_class::kInt16Array},
    {"new Uint16Array(1)", js_class::kUint16Array},
    {"new Int32Array(1)", js_class::kInt32Array},
    {"new Uint32Array(1)", js_class::kUint32Array},
    {"new BigInt64Array(1)", js_class::kBigInt64Array},
    {"new BigUint64Array(1)", js_class::kBigUint64Array},
    {"new Float32Array(1)", js_class::kFloat32Array},
    {"new Float64Array(1)", js_class::kFloat64Array},
    {"new DataView(new ArrayBuffer(1))", js_class::kDataView},
    {"/x/", js_class::kRegExp},
    {"new Map()", js_class::kMap},
    {"new Set()", js_class::kSet},
    {"new WeakMap()", js_class::kWeakMap},
    {"new WeakSet()", js_class::kWeakSet},
    {"new Proxy({}, {})", js_class::kProxy},
    {"Promise.resolve()", js_class::kPromise},
};

const JSClassID kAllIds[] = {js_class::kArrayBuffer,   js_class::kUint8ClampedArray,
                             js_class::kInt8Array,     js_class::kUint8Array,
                             js_class::kInt16Array,    js_class::kUint16Array,
                             js_class::kInt32Array,    js_class::kUint32Array,
                             js_class::kBigInt64Array, js_class::kBigUint64Array,
                             js_class::kFloat32Array,  js_class::kFloat64Array,
                             js_class::kDataView,      js_class::kRegExp,
                             js_class::kMap,           js_class::kSet,
                             js_class::kWeakMap,       js_class::kWeakSet,
                             js_class::kProxy,         js_class::kPromise};

TEST(JsClasses, EachIdMatchesItsBuiltInAndNoOther) {
  JsHarness js(/*install=*/false);
  for (const Case& c : kCases) {
    JSValue v = JS_Eval(js.ctx(), c.source, std::strlen(c.source), "<t>", JS_EVAL_TYPE_GLOBAL);
    ASSERT_TRUE(JS_IsObject(v)) << c.source;
    for (JSClassID id : kAllIds)
      EXPECT_EQ(js_class::has_class(v, id), id == c.id) << c.source << " id " << id;
    JS_FreeValue(js.ctx(), v);
  }
}

TEST(JsClasses, PlainValuesHaveNoneOfTheClasses) {
  JsHarness js(/*install=*/false);
  for (const char* source : {"({})", "[1]", "'s'", "1", "(function () {})", "new Error('x')", "new Date(0)",
                             "new Number(0)", "Object.create(Uint8Array.prototype)"}) {
    JSValue v = JS_Eval(js.ctx(), source, std::strlen(source), "<t>", JS_EVAL_TYPE_GLOBAL);
    for (JSClassID id : kAllIds) EXPECT_FALSE(js_class::has_class(v, id)) << source << " id " << id;
    EXPECT_EQ(js_class::typed_array_class(v), 0u) << source;
    JS_FreeValue(js.ctx(), v);
  }
}

TEST(JsClasses, ErrorClassProtoIsTheRealmsErrorPrototype) {
  JsHarness js(/*install=*/false);
  JSValue proto = JS_GetClassProto(js.ctx(), js_class::kError);
  JSValue global = JS_GetGlobalObject(js.ctx());
  JS_SetPropertyStr(js.ctx(), global, "p", proto);
  JS_FreeValue(js.ctx(), global);
  EXPECT_EQ(js.eval("p === Error.prototype").value, "true");
}

TEST(JsClasses, TypedArrayNames) {
  EXPECT_STREQ(js_class::typed_array_name(js_class::kUint8Array), "Uint8Array");
  EXPECT_STREQ(js_class::typed_array_name(js_class::kBigUint64Array), "BigUint64Array");
  EXPECT_STREQ(js_class::typed_array_name(js_class::kFloat64Array), "Float64Array");
}

}  // namespace
}  // namespace skillbox::bindings
