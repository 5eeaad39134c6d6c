// bindings/install.cpp — putting the host API on a fresh context's global object.
#include "bindings/install.h"

#include "bindings/base64.h"
#include "bindings/console.h"
#include "bindings/context_state.h"
#include "bindings/crypto.h"
#include "bindings/env.h"
#include "bindings/fs.h"
#include "bindings/http.h"
#include "bindings/store.h"
#include "bindings/text_codec.h"

namespace skillbox::bindings {
namespace {

// The `openhuman` namespace object. Capability bindings add their members here, each from its own
// file, e.g. install_fs(ctx, openhuman) -> openhuman.fs, install_http(ctx, openhuman) ->
// openhuman.http; the store and env bindings also define the globals `store`/`env` and alias them
// as openhuman.store/openhuman.env (DESIGN.md).
bool install_openhuman(JSContext* ctx, JSValueConst global) {
  JSValue openhuman = JS_NewObject(ctx);
  if (JS_IsException(openhuman)) return false;
  bool ok = true;
  ok = ok && install_fs(ctx, openhuman);
  ok = ok && install_http(ctx, openhuman);
  ok = ok && install_store(ctx, global, openhuman);
  ok = ok && install_env(ctx, global, openhuman);
  if (!ok) {
    JS_FreeValue(ctx, openhuman);
    return false;
  }
  return JS_DefinePropertyValueStr(ctx, global, "openhuman", openhuman,
                                   JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) >= 0;
}

}  // namespace

bool install_host_api(JSContext* ctx) {
  if (!init_context_state(ctx)) return false;
  JSValue global = JS_GetGlobalObject(ctx);
  install_base64(ctx, global);
  const bool ok = install_console(ctx, global) && install_text_codec(ctx, global) &&
                  install_crypto(ctx, global) && install_openhuman(ctx, global);
  JS_FreeValue(ctx, global);
  return ok;
}

}  // namespace skillbox::bindings
