// bindings/install.h — putting the host API on a fresh context's global object.
#pragma once

#include <quickjs.h>

namespace skillbox::bindings {

/// Installs the host API on ctx's global object: `log`, `console`, `TextEncoder`, `TextDecoder`,
/// `atob`, `btoa`, `crypto` and the `openhuman` namespace (capability bindings add to it).
///
/// Preconditions: the engine has set the invocation's Bridge as ctx's opaque, ctx has the standard
/// intrinsics (typed arrays included), and no skill code has run yet: install captures intrinsics
/// that later host calls rely on (bindings/context_state.h). Call exactly once per context.
///
/// Returns false with an exception pending (out of memory, or a context missing intrinsics); the
/// context must then not be used for the skill.
///
/// Cost: it runs on every invocation, so it evaluates no JS source and creates most functions lazily
/// (QuickJS function lists materialise a function on first access).
[[nodiscard]] bool install_host_api(JSContext* ctx);

}  // namespace skillbox::bindings
