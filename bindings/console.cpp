// bindings/console.cpp — `log(...args)` and `console.{log,info,warn,error,debug}`.
#include "bindings/console.h"

#include <iterator>
#include <new>
#include <string>
#include <utility>
#include <variant>

#include "bindings/bridge.h"
#include "bindings/context_state.h"
#include "bindings/function_list.h"
#include "bindings/owners.h"
#include "bus/limits.h"

namespace skillbox::bindings {
namespace {

JSValue js_log(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv, int magic) {
  ContextState& state = context_state(ctx);  // lives as long as ctx
  if (state.log_closed) return JS_UNDEFINED;
  try {
    std::string text;
    if (!format_log_message(ctx, argc, argv, log_format_limits(), text)) return JS_EXCEPTION;
    bridge(ctx).rewrite_log_text(text);
    bus::Reply reply = bridge(ctx).call(bus::LogRequest{static_cast<bus::LogLevel>(magic), std::move(text)});
    if (const auto* error = std::get_if<bus::ErrorReply>(&reply);
        error != nullptr && error->code == bus::ErrorCode::QuotaExceeded)
      state.log_closed = true;
    return JS_UNDEFINED;
  } catch (const std::bad_alloc&) {
    return JS_ThrowOutOfMemory(ctx);  // no C++ exception may unwind through QuickJS
  }
}

constexpr int16_t level(bus::LogLevel l) {
  return static_cast<int16_t>(l);
}

const JSCFunctionListEntry kGlobalFunctions[] = {
    list_function_magic("log", 0, js_log, level(bus::LogLevel::info)),
};

const JSCFunctionListEntry kConsoleFunctions[] = {
    list_function_magic("log", 0, js_log, level(bus::LogLevel::info)),
    list_function_magic("info", 0, js_log, level(bus::LogLevel::info)),
    list_function_magic("warn", 0, js_log, level(bus::LogLevel::warn)),
    list_function_magic("error", 0, js_log, level(bus::LogLevel::error)),
    list_function_magic("debug", 0, js_log, level(bus::LogLevel::debug)),
};

}  // namespace

FormatLimits log_format_limits() {
  FormatLimits limits;
  limits.max_bytes = bus::kMaxLogMessageBytes;
  return limits;
}

bool install_console(JSContext* ctx, JSValueConst global) {
  // Function-list entries (the `console` object too, list_object) are created lazily by QuickJS on
  // first access: installing is cheap.
  static const JSCFunctionListEntry kConsoleObject[] = {
      list_object("console", kConsoleFunctions, static_cast<int>(std::size(kConsoleFunctions))),
  };
  JS_SetPropertyFunctionList(ctx, global, kGlobalFunctions, static_cast<int>(std::size(kGlobalFunctions)));
  JS_SetPropertyFunctionList(ctx, global, kConsoleObject, 1);
  return true;
}

}  // namespace skillbox::bindings
