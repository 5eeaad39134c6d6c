// engine/handles.h — RAII ownership of QuickJS runtimes, contexts and values.
//
// Every JSValue skillbox holds is owned by exactly one Value, which frees it on every path. A
// Runtime/Context pair is created per invocation and destroyed with it (never reused).
#pragma once

#include <quickjs.h>

#include <memory>
#include <utility>

namespace skillbox::engine {

struct RuntimeDeleter {
  void operator()(JSRuntime* rt) const { JS_FreeRuntime(rt); }
};
struct ContextDeleter {
  void operator()(JSContext* ctx) const { JS_FreeContext(ctx); }
};
using RuntimePtr = std::unique_ptr<JSRuntime, RuntimeDeleter>;
using ContextPtr = std::unique_ptr<JSContext, ContextDeleter>;

/// An owned JSValue of one context. Move-only; frees the value when destroyed or reset.
class Value {
 public:
  Value() = default;
  /// Takes ownership of `v` (a value returned by QuickJS with a reference for us).
  Value(JSContext* ctx, JSValue v) : ctx_(ctx), v_(v) {}
  /// A new reference to a borrowed value.
  static Value dup(JSContext* ctx, JSValueConst v) { return {ctx, JS_DupValue(ctx, v)}; }

  Value(Value&& o) noexcept : ctx_(o.ctx_), v_(o.release()) {}
  Value& operator=(Value&& o) noexcept {
    if (this != &o) {
      reset();
      ctx_ = o.ctx_;
      v_ = o.release();
    }
    return *this;
  }
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;
  ~Value() { reset(); }

  /// The borrowed value (still owned by this).
  [[nodiscard]] JSValueConst get() const { return v_; }
  /// Gives up ownership: the caller now owns the returned value.
  JSValue release() {
    JSValue v = v_;
    v_ = JS_UNDEFINED;
    return v;
  }
  void reset() {
    if (ctx_ != nullptr) JS_FreeValue(ctx_, v_);
    v_ = JS_UNDEFINED;
  }

  [[nodiscard]] bool is_exception() const { return JS_IsException(v_); }
  [[nodiscard]] bool is_undefined() const { return JS_IsUndefined(v_); }
  [[nodiscard]] bool is_object() const { return JS_IsObject(v_); }

 private:
  JSContext* ctx_ = nullptr;
  JSValue v_ = JS_UNDEFINED;
};

/// A C string from JS_ToCStringLen, freed on scope exit. `data()` is null if the conversion threw.
class CString {
 public:
  CString(JSContext* ctx, JSValueConst v) : ctx_(ctx), s_(JS_ToCStringLen(ctx, &len_, v)) {}
  ~CString() {
    if (s_ != nullptr) JS_FreeCString(ctx_, s_);
  }
  CString(const CString&) = delete;
  CString& operator=(const CString&) = delete;

  [[nodiscard]] const char* data() const { return s_; }
  [[nodiscard]] size_t size() const { return len_; }
  [[nodiscard]] bool ok() const { return s_ != nullptr; }

 private:
  JSContext* ctx_;
  size_t len_ = 0;
  const char* s_;
};

}  // namespace skillbox::engine
