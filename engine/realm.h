// engine/realm.h — the JS realm a skill runs in: standard ECMAScript intrinsics and nothing else.
#pragma once

#include <quickjs.h>

namespace skillbox::engine {

/// Creates a context of `rt` from JS_NewContextRaw plus the standard intrinsics (ES2020 with BigInt).
/// Left out on purpose: BigFloat, BigDecimal and operator overloading (QuickJS extensions, not
/// ECMAScript); `Atomics` and `SharedArrayBuffer` (shared memory and blocking waits have no use in a
/// single-threaded sandbox and are a timing side channel); the engine's debugging helper `__date_clock`.
/// Returns nullptr if the heap limit is too small to build the realm.
JSContext* new_skill_context(JSRuntime* rt);

}  // namespace skillbox::engine
