// bindings/http.h — `openhuman.http`: request/get/post, each a typed bus::HttpRequest.
#pragma once

#include <quickjs.h>

namespace skillbox::bindings {

/// Defines `openhuman.http` = {request, get, post} on `openhuman` (docs/http.md "JavaScript API").
/// The functions check and convert their arguments once (bindings/args.h), build a bus::HttpRequest and
/// return the promise of Bridge::call_async; every policy rule is the capability's
/// (capabilities/http/). Returns false with an exception pending (out of memory).
[[nodiscard]] bool install_http(JSContext* ctx, JSValueConst openhuman);

}  // namespace skillbox::bindings
