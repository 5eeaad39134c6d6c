// bindings/store.h — the `store` global (and `openhuman.store`): the skill's persistent key-value store.
#pragma once

#include <quickjs.h>

namespace skillbox::bindings {

/// Defines the global `store` with `get`, `set`, `delete`, `keys`, and `openhuman.store` as the same
/// object. Every call is a synchronous bus request (capabilities/store/); see docs/store.md.
/// Returns false with an exception pending on failure (out of memory).
[[nodiscard]] bool install_store(JSContext* ctx, JSValueConst global, JSValueConst openhuman);

}  // namespace skillbox::bindings
