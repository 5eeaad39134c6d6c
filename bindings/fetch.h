// bindings/fetch.h — the WHATWG fetch for skills whose manifest asks for it (permissions.http.fetch).
#pragma once

#include <quickjs.h>

namespace skillbox::bindings {

/// Defines `fetch`, `Headers`, `Request`, `Response`, `AbortController` and `AbortSignal` on ctx's
/// global object (docs/http.md "fetch"). Every request goes through the same C++ function and http
/// capability as `openhuman.http.request` (http_request_for_fetch): same allowlist, methods, caps,
/// timeouts, redirect checks and secrets at egress; fetch adds no way onto the network.
///
/// Preconditions: install_host_api has run (the glue captures TextEncoder, TextDecoder, setTimeout
/// and queueMicrotask) and no skill code has run yet. Unlike install_host_api it evaluates JS source
/// (bindings/fetch_glue.h, about 20 KB), so it costs a compile per invocation: the runners call it only
/// when the manifest sets permissions.http.fetch.
///
/// Returns false with an exception pending (out of memory).
[[nodiscard]] bool install_fetch(JSContext* ctx);

}  // namespace skillbox::bindings
