// bindings/function_list.h — QuickJS function-list entries, spelled for C++.
//
// QuickJS's JS_CFUNC_DEF-style macros mix positional and designated initializers, which C++20
// rejects. These build the same JSCFunctionListEntry values. Entries must have static storage
// duration: QuickJS keeps a pointer to each entry until the property is first read. Function-list
// members become
// properties with the attributes of built-in methods (writable, configurable, not enumerable) and
// are created lazily on first access, which keeps installing the host API cheap.
#pragma once

#include <quickjs.h>

#include <cstdint>

namespace skillbox::bindings {

/// A method `name` with `length` formal parameters.
inline JSCFunctionListEntry list_function(const char* name, uint8_t length, JSCFunction* fn) {
  JSCFunctionListEntry e{};
  e.name = name;
  e.prop_flags = JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE;
  e.def_type = JS_DEF_CFUNC;
  e.u.func.length = length;
  e.u.func.cproto = JS_CFUNC_generic;
  e.u.func.cfunc.generic = fn;
  return e;
}

/// A method that receives `magic` as its last argument (one C function behind several methods).
inline JSCFunctionListEntry list_function_magic(const char* name, uint8_t length, JSCFunctionMagic* fn,
                                                int16_t magic) {
  JSCFunctionListEntry e{};
  e.name = name;
  e.prop_flags = JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE;
  e.def_type = JS_DEF_CFUNC;
  e.magic = magic;
  e.u.func.length = length;
  e.u.func.cproto = JS_CFUNC_generic_magic;
  e.u.func.cfunc.generic_magic = fn;
  return e;
}

/// A read-only accessor `name` (configurable, not enumerable, like Web IDL attributes).
inline JSCFunctionListEntry list_getter(const char* name, JSValue (*getter)(JSContext*, JSValueConst)) {
  JSCFunctionListEntry e{};
  e.name = name;
  e.prop_flags = JS_PROP_CONFIGURABLE;
  e.def_type = JS_DEF_CGETSET;
  e.u.getset.get.getter = getter;
  return e;
}

/// A string-valued data property, e.g. list_string("[Symbol.toStringTag]", "TextEncoder").
inline JSCFunctionListEntry list_string(const char* name, const char* value,
                                        uint8_t flags = JS_PROP_CONFIGURABLE) {
  JSCFunctionListEntry e{};
  e.name = name;
  e.prop_flags = flags;
  e.def_type = JS_DEF_PROP_STRING;
  e.u.str = value;
  return e;
}

/// A namespace object `name` holding the members `tab[0..len)` (writable, configurable, not
/// enumerable). Like a method it is created lazily, on first access: a skill that never touches it
/// never pays for its object, shape and property table. `tab` must have static storage duration.
inline JSCFunctionListEntry list_object(const char* name, const JSCFunctionListEntry* tab, int len) {
  JSCFunctionListEntry e{};
  e.name = name;
  e.prop_flags = JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE;
  e.def_type = JS_DEF_OBJECT;
  e.u.prop_list.tab = tab;
  e.u.prop_list.len = len;
  return e;
}

}  // namespace skillbox::bindings
