// compat/bundle_flavor.cpp — the OpenHuman bundle flavor: native helpers, the JS glue, the lifecycle.
//
// What the bundle sees is built by the glue (compat/bundle_glue.h) from two kinds of parts, both
// reaching the host only as bus requests through the Bridge:
//  - the v1 bindings (store, env, console, timers, TextEncoder/Decoder, atob/btoa) and the WHATWG
//    fetch with its classes (bindings/fetch.h), captured by the glue before any bundle code runs; the
//    v1-only ones are then taken off the global object;
//  - the natives below, for what v1 has no binding of: synchronous workspace reads and writes (data),
//    synchronous http (net.fetch), events, the skill's database, credentials with placeholders.
// Every native checks its arguments as the v1 bindings do (bindings/args.h: types first, one
// conversion, the checks on the converted copy). Nothing here touches a file, socket or secret.
#include "compat/bundle_flavor.h"

#include <string>
#include <utility>
#include <variant>

#include "bindings/args.h"
#include "bindings/bridge.h"
#include "bindings/errors.h"
#include "bindings/fetch.h"
#include "bindings/function_list.h"
#include "bindings/http.h"
#include "bindings/owners.h"
#include "bindings/values.h"
#include "compat/bundle_glue.h"

namespace skillbox::compat {
namespace {

using bindings::Args;
using bindings::Value;

// Copy bounds; the capabilities apply the real limits with their own messages.
constexpr size_t kMaxPathCopyBytes = 64 * 1024;
constexpr size_t kMaxTextCopyBytes = 256u << 20;
constexpr size_t kMaxSqlCopyBytes = 1u << 20;
constexpr size_t kMaxEventCopyBytes = 1u << 20;

JSValue unexpected(JSContext* ctx, const char* fn) {
  return JS_ThrowInternalError(ctx, "%s: the host returned an unexpected reply", fn);
}

/// data.read(name): the workspace file as text (invalid UTF-8 becomes U+FFFD). A missing file throws
/// NotFound.
JSValue js_read(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "data.read", argc, argv);
  bus::FsReadFileRequest request;
  request.encoding = bus::FsEncoding::utf8;
  if (!args.require(1) || !args.string(0, "name", request.path, {.max_bytes = kMaxPathCopyBytes}))
    return JS_EXCEPTION;
  bus::Reply reply = bindings::bridge(ctx).call(std::move(request));
  if (const auto* e = std::get_if<bus::ErrorReply>(&reply)) return bindings::throw_host_error(ctx, *e);
  const auto* bytes = std::get_if<bus::BytesReply>(&reply);
  if (bytes == nullptr) return unexpected(ctx, "data.read");
  // The bindings' decoder: no host copy for valid text, and the U+FFFD expansion of invalid bytes is
  // charged to the heap as it grows (a leading BOM is dropped, as before).
  return bindings::new_string_from_bytes(ctx, bytes->data.data(), bytes->data.size(), /*ignore_bom=*/false);
}

/// data.write(name, text): replaces the workspace file atomically (fs capability, quotas).
JSValue js_write(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "data.write", argc, argv);
  bus::FsWriteFileRequest request;
  std::string text;
  if (!args.require(2) || !args.string(0, "name", request.path, {.max_bytes = kMaxPathCopyBytes}) ||
      !args.string(1, "text", text, {.max_bytes = kMaxTextCopyBytes}))
    return JS_EXCEPTION;
  request.data.assign(text.begin(), text.end());
  bus::Reply reply = bindings::bridge(ctx).call(std::move(request));
  if (const auto* e = std::get_if<bus::ErrorReply>(&reply)) return bindings::throw_host_error(ctx, *e);
  if (!std::holds_alternative<bus::OkReply>(reply)) return unexpected(ctx, "data.write");
  return JS_UNDEFINED;
}

/// event(type, dataJson): one RunResult event. The glue makes dataJson with JSON.stringify.
JSValue js_event(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "event", argc, argv);
  bus::EventRequest request;
  if (!args.require(2) || !args.string(0, "type", request.type, {.max_bytes = 64}) ||
      !args.string(1, "data", request.data_json, {.max_bytes = kMaxEventCopyBytes}))
    return JS_EXCEPTION;
  bus::Reply reply = bindings::bridge(ctx).call(std::move(request));
  if (const auto* e = std::get_if<bus::ErrorReply>(&reply)) return bindings::throw_host_error(ctx, *e);
  return JS_UNDEFINED;
}

/// db(op, sql, paramsJson) -> JSON text of the result (bus::DbRequest).
JSValue js_db(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "db", argc, argv);
  bus::DbRequest request;
  int64_t op = 0;
  if (!args.require(3) || !args.integer(0, "op", 0, 2, op) ||
      !args.string(1, "sql", request.sql, {.max_bytes = kMaxSqlCopyBytes}) ||
      !args.string(2, "params", request.params_json, {.max_bytes = kMaxTextCopyBytes}))
    return JS_EXCEPTION;
  request.op = static_cast<bus::DbOp>(op);
  bus::Reply reply = bindings::bridge(ctx).call(std::move(request));
  if (const auto* e = std::get_if<bus::ErrorReply>(&reply)) return bindings::throw_host_error(ctx, *e);
  const auto* text = std::get_if<bus::OptionalStringReply>(&reply);
  if (text == nullptr || !text->value) return unexpected(ctx, "db");
  return bindings::new_string(ctx, *text->value);
}

/// credential(kind, revoke) -> JSON text with placeholders, or null (bus::CredentialRequest).
JSValue js_credential(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
  const Args args(ctx, "credential", argc, argv);
  bus::CredentialRequest request;
  int64_t kind = 0;
  bool revoke = false;
  if (!args.require(2) || !args.integer(0, "kind", 0, 1, kind) || !args.boolean(1, "revoke", revoke))
    return JS_EXCEPTION;
  request.kind = static_cast<bus::CredentialKind>(kind);
  request.revoke = revoke;
  bus::Reply reply = bindings::bridge(ctx).call(std::move(request));
  if (const auto* e = std::get_if<bus::ErrorReply>(&reply)) return bindings::throw_host_error(ctx, *e);
  if (std::holds_alternative<bus::OkReply>(reply)) return JS_NULL;
  const auto* text = std::get_if<bus::OptionalStringReply>(&reply);
  if (text == nullptr) return unexpected(ctx, "credential");
  if (!text->value) return JS_NULL;
  return bindings::new_string(ctx, *text->value);
}

const JSCFunctionListEntry kNatives[] = {
    bindings::list_function("read", 1, js_read),
    bindings::list_function("write", 2, js_write),
    bindings::list_function("event", 2, js_event),
    bindings::list_function("db", 3, js_db),
    bindings::list_function("credential", 2, js_credential),
    bindings::list_function("fetchSync", 1, bindings::http_request_blocking),
};

class BundleFlavor final : public engine::Flavor {
 public:
  bool install(JSContext* ctx, const engine::Call& call, Value& state) const override {
    // The bundle's fetch is built on the WHATWG one (docs/openhuman.md), which the glue captures.
    if (!bindings::install_fetch(ctx)) return false;
    Value natives(ctx, JS_NewObject(ctx));
    if (natives.is_exception()) return false;
    JS_SetPropertyFunctionList(ctx, natives.get(), kNatives, static_cast<int>(std::size(kNatives)));
    const std::string& id = call.skill_id;
    if (JS_DefinePropertyValueStr(ctx, natives.get(), "skillId", bindings::new_string(ctx, id),
                                  JS_PROP_C_W_E) < 0)
      return false;
    // The glue is host code, compiled from a constant; it evaluates to a function of (natives,
    // global) that builds the bundle API and returns the driver {drive, failed}, kept out of the
    // bundle's reach.
    Value factory(ctx,
                  JS_Eval(ctx, kBundleGlue, sizeof(kBundleGlue) - 1, "<openhuman>", JS_EVAL_TYPE_GLOBAL));
    if (factory.is_exception()) return false;
    Value global(ctx, JS_GetGlobalObject(ctx));
    JSValue argv[] = {natives.get(), global.get()};
    Value driver(ctx, JS_Call(ctx, factory.get(), JS_UNDEFINED, 2, argv));
    if (driver.is_exception()) return false;
    state = std::move(driver);
    return true;
  }

  JSValue call(JSContext* ctx, const engine::Call& call, JSValueConst state,
               JSValueConst input) const override {
    const auto target = parse_bundle_target(call.export_name);
    if (!target) return JS_ThrowTypeError(ctx, "%s", target.error().message.c_str());
    Value kind(ctx, bindings::new_string(ctx, target->kind));
    Value name(ctx, bindings::new_string(ctx, target->name));
    if (kind.is_exception() || name.is_exception()) return JS_EXCEPTION;
    Value drive(ctx, JS_GetPropertyStr(ctx, state, "drive"));
    if (drive.is_exception()) return JS_EXCEPTION;
    JSValue argv[] = {kind.get(), name.get(), input};
    return JS_Call(ctx, drive.get(), JS_UNDEFINED, 3, argv);
  }

  // docs/openhuman.md "The lifecycle": a failing tool call still has its ToolResult (is_error: true),
  // and a sequence its results so far.
  JSValue value_on_error(JSContext* ctx, JSValueConst state, const ErrorInfo& error) const override {
    Value failed(ctx, JS_GetPropertyStr(ctx, state, "failed"));
    if (failed.is_exception()) return JS_EXCEPTION;
    Value message(ctx, bindings::new_string(ctx, error.message));
    if (message.is_exception()) return JS_EXCEPTION;
    JSValue argv[] = {message.get()};
    return JS_Call(ctx, failed.get(), JS_UNDEFINED, 1, argv);
  }
};

}  // namespace

Result<BundleTarget> parse_bundle_target(std::string_view export_name) {
  if (export_name.empty()) return BundleTarget{"sequence", ""};
  if (export_name == "tools") return BundleTarget{"tools", ""};
  for (const char* prefix : {"tool:", "hook:"}) {
    const std::string_view p(prefix);
    if (export_name.starts_with(p) && export_name.size() > p.size())
      return BundleTarget{std::string(p.substr(0, p.size() - 1)), std::string(export_name.substr(p.size()))};
  }
  return Error{
      "an OpenHuman bundle is called by \"tool:NAME\", \"hook:NAME\", \"tools\" or an empty name (a "
      "sequence given as the input); got \"" +
      std::string(export_name.substr(0, 64)) + "\""};
}

std::shared_ptr<const engine::Flavor> bundle_flavor() {
  static const std::shared_ptr<const engine::Flavor> flavor = std::make_shared<BundleFlavor>();
  return flavor;
}

}  // namespace skillbox::compat
