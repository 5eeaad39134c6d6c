// bindings/context_state.h — what the host API remembers per JSContext (one context = one invocation).
//
// The context opaque belongs to the engine (it holds the Bridge), so bindings keep their own state in
// an object of a private class, stored as that class's prototype slot of the context
// (JS_SetClassProto). No JS object has that prototype, so skills can never reach it; the context frees
// it with everything else.
//
// The state also holds intrinsics captured before any skill code could touch them: a skill may
// replace `Uint8Array`, `String.prototype.slice` or `DataView.prototype.byteLength`, but host
// functions must keep using the originals (creating a Uint8Array for a result, taking the shown
// prefix of a huge string, measuring a DataView argument). `String.prototype.slice` is captured at
// install time; the typed arrays are built on first use (engine/realm.h), and their originals are
// captured the moment they are built (on_intrinsics_built), before the access that built them returns.
#pragma once

#include <quickjs.h>

#include "bindings/owners.h"

namespace skillbox::bindings {

struct ContextState {
  /// The run's log budget is used up: log/console return at once without formatting anything.
  bool log_closed = false;
  RuntimeValue uint8_array;               // %Uint8Array%
  RuntimeValue string_slice;              // %String.prototype.slice%
  RuntimeValue dataview_buffer;           // getter of %DataView.prototype%.buffer
  RuntimeValue dataview_byte_offset;      // getter of %DataView.prototype%.byteOffset
  RuntimeValue dataview_byte_length;      // getter of %DataView.prototype%.byteLength
  bool typed_arrays_captured = false;     // the four above are set
  bool typed_arrays_unavailable = false;  // capturing them when they were built failed: never retried
};

/// Creates ctx's state and captures the intrinsics (registering the private class with ctx's runtime
/// first if needed). Call once per context, before any skill code runs. Returns false with an
/// exception pending on failure (out of memory, or a context built without typed arrays).
[[nodiscard]] bool init_context_state(JSContext* ctx);

/// The state of ctx. Precondition: init_context_state(ctx) succeeded.
ContextState& context_state(JSContext* ctx);

/// Called by the engine right after it built a group of intrinsics lazily (engine/realm.cpp): captures
/// the typed-array originals into ctx's state if it has one and they are new. Never runs JS code.
void on_intrinsics_built(JSContext* ctx);

/// The state of ctx with the typed-array originals captured, building the typed arrays first if no
/// access has yet. Null with an exception pending if they could not be built or captured.
ContextState* context_state_with_typed_arrays(JSContext* ctx);

/// Allocates a process-wide class id once (JS_NewClassID is not thread-safe in this QuickJS version;
/// every class id of skillbox is allocated through here, under one lock).
JSClassID new_class_id();

/// Registers `def` under `id` with ctx's runtime unless the runtime has it already (classes are per
/// runtime; a fresh runtime per invocation registers again). Returns false with an exception pending.
[[nodiscard]] bool ensure_class(JSContext* ctx, JSClassID id, const JSClassDef& def);

}  // namespace skillbox::bindings
