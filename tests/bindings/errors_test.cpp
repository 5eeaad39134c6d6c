// Errors the host API throws: bus errors (make_host_error/throw_host_error), argument errors and
// DOMException stand-ins, all of the skill's realm.
#include "bindings/errors.h"

#include <gtest/gtest.h>

#include <string>

#include "bindings/bridge.h"
#include "bindings/function_list.h"
#include "bindings/js_harness.h"

namespace skillbox::bindings {
namespace {

using testing::JsHarness;

// A host function failing the way store/env bindings will: throw_host_error of a bus reply.
JSValue failing_host_call(JSContext* ctx, JSValueConst, int, JSValueConst*) {
  return throw_host_error(ctx,
                          bus::ErrorReply{bus::ErrorCode::PermissionDenied,
                                          "env.get: \"HOME\" is not granted; add it to permissions.env"});
}

JSValue long_type_error(JSContext* ctx, JSValueConst, int, JSValueConst*) {
  return throw_type_error(ctx, std::string(1000, 'm') + "\xE4\xB8\xAD");
}

// Function-list entries must outlive the context: QuickJS keeps a pointer to create the function lazily.
const JSCFunctionListEntry kTestFunctions[] = {
    list_function("hostCall", 0, failing_host_call),
    list_function("longError", 0, long_type_error),
};

void define_test_functions(JsHarness& js) {
  JSValue global = JS_GetGlobalObject(js.ctx());
  JS_SetPropertyFunctionList(js.ctx(), global, kTestFunctions, static_cast<int>(std::size(kTestFunctions)));
  JS_FreeValue(js.ctx(), global);
}

TEST(HostErrors, MakeHostErrorHasNameCodeMessageAndNothingElse) {
  JsHarness js;
  JSValue err = make_host_error(js.ctx(), bus::ErrorReply{bus::ErrorCode::QuotaExceeded, "store is full"});
  ASSERT_FALSE(JS_IsException(err));
  JSValue global = JS_GetGlobalObject(js.ctx());
  JS_SetPropertyStr(js.ctx(), global, "hostError", err);
  JS_FreeValue(js.ctx(), global);
  EXPECT_EQ(
      js.eval("const e = hostError; [e.name, e.code, e.message, String(e), e instanceof Error,"
              " Object.getPrototypeOf(e) === Error.prototype, Object.keys(e).length, typeof e.stack,"
              " Object.getOwnPropertyNames(e).sort().join()]")
          .value,
      R"(["QuotaExceeded","EQUOTA","store is full","QuotaExceeded: store is full",true,true,0,"string",)"
      R"("code,message,name,stack"])");
}

TEST(HostErrors, EveryCodeHasItsStableNameAndErrno) {
  JsHarness js;
  const std::pair<bus::ErrorCode, const char*> codes[] = {
      {bus::ErrorCode::PermissionDenied, "PermissionDenied EACCES"},
      {bus::ErrorCode::NotFound, "NotFound ENOENT"},
      {bus::ErrorCode::QuotaExceeded, "QuotaExceeded EQUOTA"},
      {bus::ErrorCode::InvalidArgument, "InvalidArgument EINVAL"},
      {bus::ErrorCode::PayloadTooLarge, "PayloadTooLarge E2BIG"},
      {bus::ErrorCode::Timeout, "Timeout ETIMEDOUT"},
      {bus::ErrorCode::NetworkError, "NetworkError ENET"},
      {bus::ErrorCode::AlreadyExists, "AlreadyExists EEXIST"},
      {bus::ErrorCode::NotEmpty, "NotEmpty ENOTEMPTY"},
      {bus::ErrorCode::IoError, "IoError EIO"},
  };
  for (const auto& [code, expected] : codes) {
    JSValue err = make_host_error(js.ctx(), bus::ErrorReply{code, "m"});
    JSValue global = JS_GetGlobalObject(js.ctx());
    JS_SetPropertyStr(js.ctx(), global, "e", err);
    JS_FreeValue(js.ctx(), global);
    EXPECT_EQ(js.eval("e.name + ' ' + e.code").value, expected);
  }
}

TEST(HostErrors, ThrownFromAHostFunctionWithTheSkillsStack) {
  JsHarness js;
  define_test_functions(js);
  EXPECT_EQ(
      js.eval("function skillCode() { hostCall(); }"
              "try { skillCode(); } catch (e) { [e.name, e.code, e instanceof Error, "
              "e.stack.includes('skillCode'),"
              " e.message] }")
          .value,
      R"(["PermissionDenied","EACCES",true,true,"env.get: \"HOME\" is not granted; add it to permissions.env"])");
}

TEST(HostErrors, TypeErrorMessagesAreNotTruncated) {
  // QuickJS's own JS_ThrowTypeError formats into 256 bytes; ours keeps the whole message.
  JsHarness js;
  define_test_functions(js);
  EXPECT_EQ(js.eval("try { longError() } catch (e) { [e instanceof TypeError, e.message.length, "
                    "e.message[e.message.length - 1]] }")
                .value,
            "[true,1001,\"\xE4\xB8\xAD\"]");
}

TEST(HostErrors, UncatchableExceptionsAreNeverTaken) {
  JsHarness js;
  js.set_step_limit(5);
  JSValue v = JS_Eval(js.ctx(), "for (;;) {}", 11, "<t>", JS_EVAL_TYPE_GLOBAL);
  ASSERT_TRUE(JS_IsException(v));
  Value taken;
  EXPECT_FALSE(take_catchable_exception(js.ctx(), &taken));
  EXPECT_TRUE(JS_IsUndefined(taken.get()));
  JSValue still = JS_GetException(js.ctx());  // left pending, unchanged
  EXPECT_TRUE(JS_IsUncatchableError(js.ctx(), still));
  JS_FreeValue(js.ctx(), still);
}

TEST(HostErrors, CatchableExceptionsAreTaken) {
  JsHarness js;
  JSValue v = JS_Eval(js.ctx(), "throw 7", 7, "<t>", JS_EVAL_TYPE_GLOBAL);
  ASSERT_TRUE(JS_IsException(v));
  Value taken;
  ASSERT_TRUE(take_catchable_exception(js.ctx(), &taken));
  EXPECT_EQ(JS_VALUE_GET_INT(taken.get()), 7);
  EXPECT_TRUE(JS_IsNull(JS_GetException(js.ctx())));  // nothing pending any more
}

}  // namespace
}  // namespace skillbox::bindings
