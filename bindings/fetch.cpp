// bindings/fetch.cpp — compiling the fetch glue and handing it the request function and the global.
#include "bindings/fetch.h"

#include <iterator>

#include "bindings/fetch_glue.h"
#include "bindings/http.h"
#include "bindings/owners.h"

namespace skillbox::bindings {

bool install_fetch(JSContext* ctx) {
  // Host code from a constant: it evaluates to a function of (request, global) that defines the fetch
  // globals; nothing of it stays reachable but what it defines.
  Value factory(ctx, JS_Eval(ctx, kFetchGlue, sizeof(kFetchGlue) - 1, "<fetch>", JS_EVAL_TYPE_GLOBAL));
  if (factory.is_exception()) return false;
  Value request(ctx, JS_NewCFunction(ctx, http_request_for_fetch, "request", 1));
  if (request.is_exception()) return false;
  Value global(ctx, JS_GetGlobalObject(ctx));
  JSValue argv[] = {request.get(), global.get()};
  Value done(ctx, JS_Call(ctx, factory.get(), JS_UNDEFINED, static_cast<int>(std::size(argv)), argv));
  return !done.is_exception();
}

}  // namespace skillbox::bindings
