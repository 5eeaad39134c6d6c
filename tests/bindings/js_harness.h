// tests/bindings/js_harness.h — a raw QuickJS context with the host API and a recording Bridge.
//
// The engine is not involved: each JsHarness makes its own runtime and context, sets a FakeBridge as
// the context opaque (as the engine does with its real Bridge), installs the host API and evaluates
// snippets. A simple interrupt handler stands in for the engine's step limit: after `step_limit`
// polls it interrupts, and keeps interrupting (as the engine does once a limit is hit).
#pragma once

#include <quickjs.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "bindings/bridge.h"
#include "bindings/install.h"
#include "bindings/js_classes.h"
#include "bus/messages.h"

namespace skillbox::testing {

class FakeBridge final : public bindings::Bridge {
 public:
  /// Every request received, in order.
  std::vector<bus::Request> requests;
  /// Computes the reply of call(); OkReply when unset.
  std::function<bus::Reply(const bus::Request&)> responder;

  bus::Reply call(bus::Request request) override {
    requests.push_back(std::move(request));
    return responder ? responder(requests.back()) : bus::Reply{bus::OkReply{}};
  }
  JSValue call_async(JSContext* ctx, bus::Request request, bindings::ReplyDecoder /*decode*/) override {
    requests.push_back(std::move(request));
    return JS_ThrowInternalError(ctx, "call_async is not used by these bindings");
  }

  /// The LogRequests received, in order.
  [[nodiscard]] std::vector<bus::LogRequest> logs() const {
    std::vector<bus::LogRequest> out;
    for (const bus::Request& r : requests)
      if (const auto* log = std::get_if<bus::LogRequest>(&r)) out.push_back(*log);
    return out;
  }
  /// Texts of the LogRequests received.
  [[nodiscard]] std::vector<std::string> texts() const {
    std::vector<std::string> out;
    for (const bus::LogRequest& log : logs()) out.push_back(log.text);
    return out;
  }
};

/// Outcome of evaluating a snippet.
struct JsResult {
  bool ok = false;           // no exception
  std::string value;         // a string result as is; anything else as JSON.stringify shows it
  std::string error;         // "<name>: <message>" of the exception
  bool interrupted = false;  // the exception was the uncatchable one of an interrupted run
};

class JsHarness {
 public:
  explicit JsHarness(bool install = true, uint64_t memory_limit = 256u << 20) {
    rt_ = JS_NewRuntime();
    JS_SetMemoryLimit(rt_, memory_limit);
    JS_SetInterruptHandler(rt_, &JsHarness::on_interrupt, this);
    ctx_ = JS_NewContext(rt_);
    JS_SetContextOpaque(ctx_, static_cast<bindings::Bridge*>(&bridge));
    if (install) installed_ = bindings::install_host_api(ctx_);
  }
  ~JsHarness() {
    JS_FreeContext(ctx_);
    JS_FreeRuntime(rt_);
  }
  JsHarness(const JsHarness&) = delete;
  JsHarness& operator=(const JsHarness&) = delete;

  [[nodiscard]] JSContext* ctx() const { return ctx_; }
  [[nodiscard]] bool installed() const { return installed_; }

  /// Interrupt once this many interrupt-handler polls have happened (QuickJS polls about every
  /// 10,000 bytecode branches and calls). The engine's step limit, in miniature.
  void set_step_limit(uint64_t polls) { step_limit_ = polls; }
  [[nodiscard]] uint64_t polls() const { return polls_; }

  /// Evaluates `source` as a global script inside a block, so that each snippet's `const`s are its
  /// own (use globalThis to share values between snippets). The result is the completion value.
  JsResult eval(std::string_view source) {
    const std::string code = "{\n" + std::string(source) + "\n}";
    JSValue v = JS_Eval(ctx_, code.c_str(), code.size(), "<test>", JS_EVAL_TYPE_GLOBAL);
    return take(v);
  }

  /// Converts `v` (consumed) into a JsResult; JS_EXCEPTION reads the pending exception.
  JsResult take(JSValue v) {
    JsResult r;
    if (JS_IsException(v)) {
      JSValue e = JS_GetException(ctx_);
      r.interrupted = JS_IsUncatchableError(ctx_, e);
      r.error = describe_error(e);
      JS_FreeValue(ctx_, e);
      return r;
    }
    r.ok = true;
    r.value = to_text(v);
    JS_FreeValue(ctx_, v);
    return r;
  }

 private:
  static int on_interrupt(JSRuntime* /*rt*/, void* opaque) {
    auto* self = static_cast<JsHarness*>(opaque);
    return ++self->polls_ > self->step_limit_ ? 1 : 0;
  }

  std::string to_text(JSValueConst v) {
    if (JS_IsString(v)) return c_string(v);
    if (JS_IsUndefined(v)) return "undefined";
    JSValue json = JS_JSONStringify(ctx_, v, JS_UNDEFINED, JS_UNDEFINED);
    std::string out = JS_IsString(json) ? c_string(json) : "<not JSON>";
    if (JS_IsException(json)) JS_FreeValue(ctx_, JS_GetException(ctx_));
    JS_FreeValue(ctx_, json);
    return out;
  }

  std::string c_string(JSValueConst v) {
    size_t len = 0;
    const char* s = JS_ToCStringLen(ctx_, &len, v);
    if (s == nullptr) {
      JS_FreeValue(ctx_, JS_GetException(ctx_));
      return "<unprintable>";
    }
    std::string out(s, len);
    JS_FreeCString(ctx_, s);
    return out;
  }

  std::string describe_error(JSValueConst e) {
    if (!JS_IsObject(e)) return "<thrown " + to_text(e) + ">";
    JSValue name = JS_GetPropertyStr(ctx_, e, "name");
    JSValue message = JS_GetPropertyStr(ctx_, e, "message");
    std::string out = to_text(name) + ": " + to_text(message);
    JS_FreeValue(ctx_, name);
    JS_FreeValue(ctx_, message);
    return out;
  }

  JSRuntime* rt_ = nullptr;
  JSContext* ctx_ = nullptr;
  bool installed_ = false;
  uint64_t step_limit_ = std::numeric_limits<uint64_t>::max();
  uint64_t polls_ = 0;

 public:
  FakeBridge bridge;
};

}  // namespace skillbox::testing
