// bindings/owners.h — single ownership of QuickJS values, C strings, atoms and property lists.
//
// Every JSValue that skillbox holds with a reference lives in exactly one owner from the moment QuickJS
// hands it over, and that owner frees it on every path (QuickJS's own rule: every failure path frees
// what it took). Handing a value to a QuickJS call that consumes it (JS_DefinePropertyValue*,
// JS_SetProperty*, JS_Throw, JS_SetClassProto, JS_EvalFunction) or returning it from a host function is
// spelled `v.release()`, so each transfer of ownership is visible where it happens. Borrowed values
// (JSValueConst arguments, `get()`) are never freed.
//
// These owners are the bottom of the ownership story and need nothing but quickjs.h: bindings/ uses
// them directly, and engine/handles.h re-exports them for the engine beside the runtime and context
// owners. The owners are not thread-safe, like the JSContext they belong to.
#pragma once

#include <quickjs.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace skillbox::bindings {

/// An owned JSValue of one context. Move-only; frees the value when destroyed, reset or assigned over.
class Value {
 public:
  /// Holds undefined and belongs to no context: there is nothing to free.
  Value() = default;
  /// Takes ownership of `v`, a value QuickJS returned with a reference for the caller. JS_EXCEPTION
  /// and other values without a reference count are accepted too (freeing them is a no-op).
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

  /// The borrowed value (still owned by this): for calls that take a JSValueConst.
  [[nodiscard]] JSValueConst get() const { return v_; }
  /// A new reference, for a call that consumes its argument while this keeps its own.
  [[nodiscard]] JSValue dup() const { return JS_DupValue(ctx_, v_); }
  /// Gives up ownership: the caller (a consuming QuickJS call, a host function's return) owns the
  /// value now, and this holds undefined.
  [[nodiscard]] JSValue release() {
    JSValue v = v_;
    v_ = JS_UNDEFINED;
    return v;
  }
  /// Frees the value now; this holds undefined afterwards.
  void reset() {
    if (ctx_ != nullptr) JS_FreeValue(ctx_, v_);
    v_ = JS_UNDEFINED;
  }

  [[nodiscard]] JSContext* context() const { return ctx_; }
  [[nodiscard]] bool is_exception() const { return JS_IsException(v_); }
  [[nodiscard]] bool is_undefined() const { return JS_IsUndefined(v_); }
  [[nodiscard]] bool is_object() const { return JS_IsObject(v_); }
  [[nodiscard]] bool is_string() const { return JS_IsString(v_); }

 private:
  JSContext* ctx_ = nullptr;
  JSValue v_ = JS_UNDEFINED;
};

/// `obj[name]`, `obj[atom]` and `obj[index]` with [[Get]]: getters and Proxy traps run (skill code,
/// under the step limit). The result is owned; it is JS_EXCEPTION (pending) when the read threw.
inline Value property(JSContext* ctx, JSValueConst obj, const char* name) {
  return {ctx, JS_GetPropertyStr(ctx, obj, name)};
}
inline Value property(JSContext* ctx, JSValueConst obj, JSAtom atom) {
  return {ctx, JS_GetProperty(ctx, obj, atom)};
}
inline Value element(JSContext* ctx, JSValueConst obj, uint32_t index) {
  return {ctx, JS_GetPropertyUint32(ctx, obj, index)};
}

/// A JSValue held by a structure that a finalizer destroys (the state behind a host object or a
/// context): a finalizer sees only the JSRuntime, so this keeps the runtime instead of a context.
/// Move-only. The structure's gc_mark hook must call mark() so the GC sees the reference.
class RuntimeValue {
 public:
  RuntimeValue() = default;
  /// Takes ownership of `v` away from its Value owner, for the runtime of v's context.
  explicit RuntimeValue(Value&& v) : rt_(JS_GetRuntime(v.context())), v_(v.release()) {}

  RuntimeValue(RuntimeValue&& o) noexcept : rt_(o.rt_), v_(o.v_) { o.v_ = JS_UNDEFINED; }
  RuntimeValue& operator=(RuntimeValue&& o) noexcept {
    if (this != &o) {
      reset();
      rt_ = o.rt_;
      v_ = o.v_;
      o.v_ = JS_UNDEFINED;
    }
    return *this;
  }
  RuntimeValue(const RuntimeValue&) = delete;
  RuntimeValue& operator=(const RuntimeValue&) = delete;
  ~RuntimeValue() { reset(); }

  [[nodiscard]] JSValueConst get() const { return v_; }
  /// Reports the reference to the cycle collector (call from the owning class's gc_mark).
  void mark(JSRuntime* rt, JS_MarkFunc* mark_func) const { JS_MarkValue(rt, v_, mark_func); }
  void reset() {
    if (rt_ != nullptr) JS_FreeValueRT(rt_, v_);
    v_ = JS_UNDEFINED;
  }

 private:
  JSRuntime* rt_ = nullptr;
  JSValue v_ = JS_UNDEFINED;
};

/// The UTF-8 bytes of a value from JS_ToCStringLen (QuickJS's own buffer, read-only: lone surrogates
/// are in it as their 3-byte WTF-8 form), freed on destruction. Move-only.
class CString {
 public:
  /// Holds no string (ok() is false, view() is empty).
  CString() = default;
  /// Converts `v` with ToString: native for primitives; an object's toString/valueOf run as skill
  /// code. ok() is false (and an exception pending) if the conversion threw or ran out of memory.
  CString(JSContext* ctx, JSValueConst v) : ctx_(ctx), s_(JS_ToCStringLen(ctx, &len_, v)) {}

  CString(CString&& o) noexcept : ctx_(o.ctx_), len_(o.len_), s_(o.s_) {
    o.s_ = nullptr;
    o.len_ = 0;
  }
  CString& operator=(CString&& o) noexcept {
    if (this != &o) {
      reset();
      ctx_ = o.ctx_;
      s_ = o.s_;
      len_ = o.len_;
      o.s_ = nullptr;
      o.len_ = 0;
    }
    return *this;
  }
  CString(const CString&) = delete;
  CString& operator=(const CString&) = delete;
  ~CString() { reset(); }

  /// The bytes (NUL-terminated; may contain NULs), or null when !ok().
  [[nodiscard]] const char* data() const { return s_; }
  [[nodiscard]] size_t size() const { return len_; }
  [[nodiscard]] std::string_view view() const { return {s_, len_}; }
  [[nodiscard]] bool ok() const { return s_ != nullptr; }
  /// Frees the string now; this holds none afterwards.
  void reset() {
    if (s_ != nullptr) JS_FreeCString(ctx_, s_);
    s_ = nullptr;
    len_ = 0;
  }

 private:
  JSContext* ctx_ = nullptr;
  size_t len_ = 0;  // before s_: the constructor's conversion writes it
  const char* s_ = nullptr;
};

/// An owned JSAtom (a property key). Move-only; frees the atom when destroyed.
class Atom {
 public:
  Atom() = default;
  /// The atom of the property name `name` (UTF-8). ok() is false (out of memory pending) on failure.
  Atom(JSContext* ctx, std::string_view name)
      : ctx_(ctx), atom_(JS_NewAtomLen(ctx, name.data(), name.size())) {}
  /// The atom of a property key value (JS_ValueToAtom: a symbol is its own atom; other values are
  /// converted with ToPropertyKey, which may run JS for objects).
  static Atom of_value(JSContext* ctx, JSValueConst key) {
    Atom a;
    a.ctx_ = ctx;
    a.atom_ = JS_ValueToAtom(ctx, key);
    return a;
  }

  Atom(Atom&& o) noexcept : ctx_(o.ctx_), atom_(o.atom_) { o.atom_ = JS_ATOM_NULL; }
  Atom& operator=(Atom&& o) noexcept {
    if (this != &o) {
      reset();
      ctx_ = o.ctx_;
      atom_ = o.atom_;
      o.atom_ = JS_ATOM_NULL;
    }
    return *this;
  }
  Atom(const Atom&) = delete;
  Atom& operator=(const Atom&) = delete;
  ~Atom() { reset(); }

  [[nodiscard]] JSAtom get() const { return atom_; }
  [[nodiscard]] bool ok() const { return atom_ != JS_ATOM_NULL; }
  void reset() {
    if (atom_ != JS_ATOM_NULL) JS_FreeAtom(ctx_, atom_);
    atom_ = JS_ATOM_NULL;
  }

 private:
  JSContext* ctx_ = nullptr;
  JSAtom atom_ = JS_ATOM_NULL;
};

/// The own property keys of an object (JS_GetOwnPropertyNames), each atom and the array freed on
/// destruction. Not movable: fill it in place with list().
class PropertyNames {
 public:
  PropertyNames() = default;
  PropertyNames(const PropertyNames&) = delete;
  PropertyNames& operator=(const PropertyNames&) = delete;
  ~PropertyNames() { reset(); }

  /// Lists the own keys of `obj` selected by `flags` (JS_GPN_*), replacing any earlier list. A Proxy's
  /// ownKeys/getOwnPropertyDescriptor traps run. Returns false with an exception pending when `obj`
  /// is not an object, a trap threw or memory ran out; the list is then empty.
  [[nodiscard]] bool list(JSContext* ctx, JSValueConst obj, int flags);

  [[nodiscard]] uint32_t size() const { return count_; }
  /// Entry i (i < size()): its atom stays owned by this list.
  [[nodiscard]] const JSPropertyEnum& operator[](uint32_t i) const { return props_[i]; }
  void reset();

 private:
  JSContext* ctx_ = nullptr;
  JSPropertyEnum* props_ = nullptr;
  uint32_t count_ = 0;
};

/// An own property's descriptor, its three values owned (unused ones hold undefined).
struct PropertyDescriptor {
  int flags = 0;  // JS_PROP_*: JS_PROP_GETSET set for an accessor
  Value value;
  Value getter;
  Value setter;
};

/// JS_GetOwnProperty(obj, atom) into `out`: 1 when `obj` has the own property (out filled), 0 when it
/// has not (out untouched), -1 with an exception pending (a Proxy's getOwnPropertyDescriptor threw).
[[nodiscard]] int own_property(JSContext* ctx, JSValueConst obj, JSAtom atom, PropertyDescriptor& out);

}  // namespace skillbox::bindings
