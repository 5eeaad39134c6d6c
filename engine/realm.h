// engine/realm.h — the JS realm a skill runs in: standard ECMAScript intrinsics and nothing else.
#pragma once

#include <quickjs.h>

#include "engine/heap.h"

namespace skillbox::engine {

/// Creates a context of `rt` from JS_NewContextRaw plus the standard intrinsics (ES2020 with BigInt).
/// Left out on purpose: BigFloat, BigDecimal and operator overloading (QuickJS extensions, not
/// ECMAScript); `Atomics` and `SharedArrayBuffer` (shared memory and blocking waits have no use in a
/// single-threaded sandbox and are a timing side channel); the engine's debugging helper `__date_clock`.
///
/// Date, Map/Set/WeakMap/WeakSet and the typed arrays (with ArrayBuffer and DataView) are built on first
/// access to any of their globals (engine patch 0016): a third of the realm's cost, which most skills
/// never touch. Their globals are present from the start and behave as ordinary data properties. `heap`
/// (the runtime's account) lifts its limit while a group is built, and the host API captures its
/// originals right then (bindings::on_intrinsics_built), before any skill code can see them.
/// Returns nullptr if the heap limit is too small to build the realm.
JSContext* new_skill_context(JSRuntime* rt, HeapAccount& heap);

}  // namespace skillbox::engine
