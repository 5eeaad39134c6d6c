// engine/handles.h — RAII ownership of QuickJS runtimes, contexts and values.
//
// Every JSValue skillbox holds is owned by exactly one Value, which frees it on every path. A
// Runtime/Context pair is created per invocation and destroyed with it (never reused). The value-level
// owners live in bindings/owners.h (the layer below, which needs them too) and are re-exported here
// so that engine code names them as engine::Value and engine::CString.
#pragma once

#include <quickjs.h>

#include <memory>
#include <utility>

#include "bindings/owners.h"

namespace skillbox::engine {

struct RuntimeDeleter {
  void operator()(JSRuntime* rt) const { JS_FreeRuntime(rt); }
};
struct ContextDeleter {
  void operator()(JSContext* ctx) const { JS_FreeContext(ctx); }
};
using RuntimePtr = std::unique_ptr<JSRuntime, RuntimeDeleter>;
using ContextPtr = std::unique_ptr<JSContext, ContextDeleter>;

/// An owned JSValue of one context (bindings::Value).
using Value = bindings::Value;
/// A C string from JS_ToCStringLen, freed on scope exit (bindings::CString).
using CString = bindings::CString;

}  // namespace skillbox::engine
