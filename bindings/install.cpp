// bindings/install.cpp — putting the host API on a fresh context's global object.
#include "bindings/install.h"

#include "bindings/base64.h"
#include "bindings/console.h"
#include "bindings/context_state.h"
#include "bindings/crypto.h"
#include "bindings/env.h"
#include "bindings/fs.h"
#include "bindings/http.h"
#include "bindings/owners.h"
#include "bindings/store.h"
#include "bindings/text_codec.h"

namespace skillbox::bindings {
namespace {

// The `openhuman` namespace object. Capability bindings add their members here, each from its own
// file, e.g. install_fs(ctx, openhuman) -> openhuman.fs, install_http(ctx, openhuman) ->
// openhuman.http; the store and env bindings also define the globals `store`/`env` and alias them
// as openhuman.store/openhuman.env (docs/architecture.md "Contracts").
bool install_openhuman(JSContext* ctx, JSValueConst global) {
  Value openhuman(ctx, JS_NewObject(ctx));
  if (openhuman.is_exception()) return false;
  bool ok = true;
  ok = ok && install_fs(ctx, openhuman.get());
  ok = ok && install_http(ctx, openhuman.get());
  ok = ok && install_store(ctx, global, openhuman.get());
  ok = ok && install_env(ctx, global, openhuman.get());
  if (!ok) return false;
  return JS_DefinePropertyValueStr(ctx, global, "openhuman", openhuman.release(),
                                   JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) >= 0;
}

}  // namespace

bool install_host_api(JSContext* ctx) {
  if (!init_context_state(ctx)) return false;
  const Value global(ctx, JS_GetGlobalObject(ctx));
  install_base64(ctx, global.get());
  return install_console(ctx, global.get()) && install_text_codec(ctx, global.get()) &&
         install_crypto(ctx, global.get()) && install_openhuman(ctx, global.get());
}

}  // namespace skillbox::bindings
