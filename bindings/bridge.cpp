// bindings/bridge.cpp — finding the invocation's Bridge from a JSContext.
#include "bindings/bridge.h"

#include <cassert>

namespace skillbox::bindings {

// The engine stores the Bridge itself (a `Bridge*`, not a derived pointer) as the context opaque before
// installing any binding, and keeps it alive until the context is freed.
Bridge& bridge(JSContext* ctx) {
  void* opaque = JS_GetContextOpaque(ctx);
  assert(opaque != nullptr && "the engine sets the Bridge as context opaque before install_host_api");
  return *static_cast<Bridge*>(opaque);
}

}  // namespace skillbox::bindings
