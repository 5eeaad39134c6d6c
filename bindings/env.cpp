// bindings/env.cpp — `env.get(name)`: a name in, a granted value (or undefined) out.
#include "bindings/env.h"

#include <iterator>
#include <string>
#include <utility>
#include <variant>

#include "bindings/args.h"
#include "bindings/bridge.h"
#include "bindings/function_list.h"
#include "bindings/owners.h"

namespace skillbox::bindings {
namespace {

JSValue js_env_get(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv) {
  const Args args(ctx, "env.get", argc, argv);
  bus::EnvGetRequest request;
  // A string primitive only: no toString/valueOf/Proxy runs. NUL and '=' are the capability's to refuse.
  if (!args.require(1) || !args.string(0, "name", request.name)) return JS_EXCEPTION;
  bus::Reply reply = bridge(ctx).call(std::move(request));
  if (const auto* e = std::get_if<bus::ErrorReply>(&reply)) return throw_host_error(ctx, *e);
  const auto* value = std::get_if<bus::OptionalStringReply>(&reply);
  if (value == nullptr) return JS_ThrowInternalError(ctx, "env.get: the host returned an unexpected reply");
  if (!value->value) return JS_UNDEFINED;
  return JS_NewStringLen(ctx, value->value->data(), value->value->size());
}

const JSCFunctionListEntry kEnvFunctions[] = {
    list_function("get", 1, js_env_get),
};

}  // namespace

bool install_env(JSContext* ctx, JSValueConst global, JSValueConst openhuman) {
  Value env(ctx, JS_NewObject(ctx));
  if (env.is_exception()) return false;
  JS_SetPropertyFunctionList(ctx, env.get(), kEnvFunctions, static_cast<int>(std::size(kEnvFunctions)));
  // One object under two names: `env === openhuman.env`.
  if (JS_DefinePropertyValueStr(ctx, openhuman, "env", env.dup(), JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) <
      0)
    return false;
  return JS_DefinePropertyValueStr(ctx, global, "env", env.release(),
                                   JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) >= 0;
}

}  // namespace skillbox::bindings
