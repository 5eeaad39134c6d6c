// bindings/store.cpp — `store.get/set/delete/keys/increment/compareAndSet`: JS arguments to typed store
// requests and back.
//
// Values cross as JSON text. `set` (and compareAndSet's expected and new value) serialises with the engine's
// own JSON.stringify algorithm (JS_JSONStringify: toJSON, getters and Proxy traps run as skill code under the
// step limit); a value with no JSON form is a TypeError. `get` parses with JS_ParseJSON, never JS_ReadObject:
// bytes a skill stored are never read as bytecode.
#include "bindings/store.h"

#include <cmath>
#include <iterator>
#include <string>
#include <utility>
#include <variant>

#include "bindings/args.h"
#include "bindings/bridge.h"
#include "bindings/errors.h"
#include "bindings/function_list.h"
#include "bindings/owners.h"

namespace skillbox::bindings {
namespace {

/// Throws the reply's host error if it is one; true when it was.
bool thrown(JSContext* ctx, const bus::Reply& reply) {
  if (const auto* e = std::get_if<bus::ErrorReply>(&reply)) {
    throw_host_error(ctx, *e);
    return true;
  }
  return false;
}

/// A reply of an unexpected type: a host bug, reported as an InternalError (never crashes the host).
JSValue unexpected_reply(JSContext* ctx, const char* function) {
  return JS_ThrowInternalError(ctx, "%s: the host returned an unexpected reply", function);
}

JSValue js_store_get(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv) {
  const Args args(ctx, "store.get", argc, argv);
  bus::StoreGetRequest request;
  if (!args.require(1) || !args.string(0, "key", request.key)) return JS_EXCEPTION;
  bus::Reply reply = bridge(ctx).call(std::move(request));
  if (thrown(ctx, reply)) return JS_EXCEPTION;
  const auto* value = std::get_if<bus::OptionalStringReply>(&reply);
  if (value == nullptr) return unexpected_reply(ctx, "store.get");
  if (!value->value) return JS_UNDEFINED;
  // JSON text checked by the capability; parsed afresh on every get, so each get returns a new copy.
  const std::string& text = *value->value;
  return JS_ParseJSON(ctx, text.c_str(), text.size(), "store");
}

/// The JSON text of argument `index` (`what` in messages), as JSON.stringify makes it in the skill's
/// realm (toJSON, getters and Proxy traps run as skill code under the step limit). A value with no
/// JSON form is a TypeError. False with an exception pending when it failed.
bool json_argument(JSContext* ctx, const Args& args, int index, const char* what, std::string& out) {
  Value json(ctx, JS_JSONStringify(ctx, args[index], JS_UNDEFINED, JS_UNDEFINED));
  if (json.is_exception()) {
    Value cause;
    // A cycle, a BigInt, or an exception from the skill's own toJSON/getter/Proxy trap. The uncatchable
    // exception of an interrupted run stays pending unchanged.
    if (!take_catchable_exception(ctx, &cause)) return false;
    (void)throw_type_error(
        ctx,
        std::string(args.where(what).function) + ": " + what + " cannot be stored as JSON (see the cause)",
        std::move(cause));
    return false;
  }
  if (!json.is_string()) {  // undefined, a function or a symbol: JSON.stringify gives undefined
    (void)throw_wrong_type(ctx, args.where(what), "a value JSON can represent", args[index]);
    return false;
  }
  return to_string(ctx, json.get(), args.where(what), out);
}

JSValue js_store_set(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv) {
  const Args args(ctx, "store.set", argc, argv);
  bus::StoreSetRequest request;
  if (!args.require(2) || !args.string(0, "key", request.key)) return JS_EXCEPTION;
  // The one conversion of the value: JSON.stringify semantics, in the skill's realm.
  if (!json_argument(ctx, args, 1, "value", request.value_json)) return JS_EXCEPTION;
  bus::Reply reply = bridge(ctx).call(std::move(request));
  if (thrown(ctx, reply)) return JS_EXCEPTION;
  if (!std::holds_alternative<bus::OkReply>(reply)) return unexpected_reply(ctx, "store.set");
  return JS_UNDEFINED;
}

// store.increment(key, delta = 1): no conversion of delta (a string "1" would make `+` concatenate in
// the skill's own code; here it is a TypeError); NaN and the infinities are a RangeError.
JSValue js_store_increment(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv) {
  const Args args(ctx, "store.increment", argc, argv);
  bus::StoreIncrementRequest request;
  if (!args.require(1) || !args.string(0, "key", request.key)) return JS_EXCEPTION;
  if (args.present(1)) {
    if (!JS_IsNumber(args[1])) return throw_wrong_type(ctx, args.where("delta"), "a number", args[1]);
    if (JS_ToFloat64(ctx, &request.delta, args[1]) < 0) return JS_EXCEPTION;
    if (!std::isfinite(request.delta))
      return throw_range_error(ctx, "store.increment: delta must be a finite number");
  }
  bus::Reply reply = bridge(ctx).call(std::move(request));
  if (thrown(ctx, reply)) return JS_EXCEPTION;
  const auto* sum = std::get_if<bus::NumberReply>(&reply);
  if (sum == nullptr) return unexpected_reply(ctx, "store.increment");
  return JS_NewFloat64(ctx, sum->value);
}

// store.compareAndSet(key, expected, value): `undefined` as expected means "the key must not exist",
// as value "delete the key". All three arguments must be passed, so that a delete is always spelled.
JSValue js_store_compare_and_set(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv) {
  const Args args(ctx, "store.compareAndSet", argc, argv);
  bus::StoreCompareAndSetRequest request;
  if (!args.require(3) || !args.string(0, "key", request.key)) return JS_EXCEPTION;
  if (args.present(1)) {
    std::string expected;
    if (!json_argument(ctx, args, 1, "expected", expected)) return JS_EXCEPTION;
    request.expected_json = std::move(expected);
  }
  if (args.present(2)) {
    std::string value;
    if (!json_argument(ctx, args, 2, "value", value)) return JS_EXCEPTION;
    request.value_json = std::move(value);
  }
  bus::Reply reply = bridge(ctx).call(std::move(request));
  if (thrown(ctx, reply)) return JS_EXCEPTION;
  const auto* wrote = std::get_if<bus::BoolReply>(&reply);
  if (wrote == nullptr) return unexpected_reply(ctx, "store.compareAndSet");
  return JS_NewBool(ctx, wrote->value);
}

JSValue js_store_delete(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv) {
  const Args args(ctx, "store.delete", argc, argv);
  bus::StoreDeleteRequest request;
  if (!args.require(1) || !args.string(0, "key", request.key)) return JS_EXCEPTION;
  bus::Reply reply = bridge(ctx).call(std::move(request));
  if (thrown(ctx, reply)) return JS_EXCEPTION;
  const auto* existed = std::get_if<bus::BoolReply>(&reply);
  if (existed == nullptr) return unexpected_reply(ctx, "store.delete");
  return JS_NewBool(ctx, existed->value);
}

JSValue js_store_keys(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv) {
  const Args args(ctx, "store.keys", argc, argv);
  bus::StoreKeysRequest request;  // prefix "" = every key
  if (args.present(0) && !args.string(0, "prefix", request.prefix)) return JS_EXCEPTION;
  bus::Reply reply = bridge(ctx).call(std::move(request));
  if (thrown(ctx, reply)) return JS_EXCEPTION;
  const auto* keys = std::get_if<bus::StringListReply>(&reply);
  if (keys == nullptr) return unexpected_reply(ctx, "store.keys");
  Value array(ctx, JS_NewArray(ctx));
  if (array.is_exception()) return JS_EXCEPTION;
  uint32_t i = 0;
  for (const std::string& key : keys->values) {
    Value k(ctx, JS_NewStringLen(ctx, key.data(), key.size()));
    if (k.is_exception() || JS_SetPropertyUint32(ctx, array.get(), i++, k.release()) < 0) return JS_EXCEPTION;
  }
  return array.release();
}

const JSCFunctionListEntry kStoreFunctions[] = {
    list_function("get", 1, js_store_get),
    list_function("set", 2, js_store_set),
    list_function("delete", 1, js_store_delete),
    list_function("keys", 0, js_store_keys),
    list_function("increment", 1, js_store_increment),
    list_function("compareAndSet", 3, js_store_compare_and_set),
};

}  // namespace

bool install_store(JSContext* ctx, JSValueConst global, JSValueConst openhuman) {
  Value store(ctx, JS_NewObject(ctx));
  if (store.is_exception()) return false;
  JS_SetPropertyFunctionList(ctx, store.get(), kStoreFunctions, static_cast<int>(std::size(kStoreFunctions)));
  // One object under two names: `store === openhuman.store`.
  if (JS_DefinePropertyValueStr(ctx, openhuman, "store", store.dup(),
                                JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0)
    return false;
  return JS_DefinePropertyValueStr(ctx, global, "store", store.release(),
                                   JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) >= 0;
}

}  // namespace skillbox::bindings
