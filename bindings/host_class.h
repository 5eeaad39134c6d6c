// bindings/host_class.h — defining a class of the host API (constructor + prototype) in C.
//
// A host class looks like a built-in one to the skill: a constructor that requires `new`, a
// `prototype` (non-writable) whose `constructor` points back, methods/getters from a QuickJS function
// list (created lazily on first access), instances of a private QuickJS class whose opaque pointer is
// the brand that methods check. Everything is created in the skill's context: no object of another
// realm or of the host is reachable, and `C.constructor.constructor === Function`.
#pragma once

#include <quickjs.h>

#include <string_view>

namespace skillbox::bindings {

struct HostClass {
  const char* name;                   // global name and class name: "TextEncoder"
  JSClassID id;                       // from new_class_id()
  const JSClassDef* def;              // finalizer etc.; registered per runtime
  JSCFunction* constructor;           // called with this = new.target
  int length;                         // constructor.length
  const JSCFunctionListEntry* proto;  // prototype members
  int proto_count;
};

/// Registers the class with ctx's runtime if needed, creates constructor and prototype, stores the
/// prototype as the class prototype of ctx and defines `global[name]` (writable, configurable, not
/// enumerable). Returns false with an exception pending.
[[nodiscard]] bool define_host_class(JSContext* ctx, JSValueConst global, const HostClass& cls);

/// For a constructor: a new object of class `id` whose prototype is new.target.prototype (so
/// subclasses work), or ctx's prototype of the class when that is not an object. If reading it
/// throws (a Proxy as new.target), the result is a TypeError of ctx naming `name`.
JSValue new_instance(JSContext* ctx, JSValueConst new_target, JSClassID id, std::string_view name);

/// Throws "<cls>.<member>: Illegal invocation (the receiver is not a <cls>)", Web IDL's TypeError for
/// a method or getter called on the wrong object. Returns JS_EXCEPTION.
JSValue throw_illegal_invocation(JSContext* ctx, std::string_view cls, std::string_view member);

}  // namespace skillbox::bindings
