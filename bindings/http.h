// bindings/http.h — `openhuman.http`: request/get/post, each a typed bus::HttpRequest.
#pragma once

#include <quickjs.h>

namespace skillbox::bindings {

/// Defines `openhuman.http` = {request, get, post} on `openhuman` (docs/http.md "JavaScript API").
/// The functions check and convert their arguments once (bindings/args.h), build a bus::HttpRequest and
/// return the promise of Bridge::call_async; every policy rule is the capability's
/// (capabilities/http/). Returns false with an exception pending (out of memory).
[[nodiscard]] bool install_http(JSContext* ctx, JSValueConst openhuman);

/// A JSCFunction taking the options object of `openhuman.http.request` (same checks, same copy) that
/// blocks until the response arrives (Bridge::call_blocking) and returns {status, statusText, headers,
/// body, url} with a text body, or throws the host error. Not installed by install_http: compat/ puts
/// it behind the synchronous `net.fetch` of OpenHuman bundles.
JSValue http_request_blocking(JSContext* ctx, JSValueConst this_val, int argc, JSValueConst* argv);

/// `openhuman.http.request` under the name "fetch" (in its error messages): what the fetch glue
/// (bindings/fetch_glue.h) sends every request through. Same checks, same copy, same promise.
JSValue http_request_for_fetch(JSContext* ctx, JSValueConst this_val, int argc, JSValueConst* argv);

}  // namespace skillbox::bindings
