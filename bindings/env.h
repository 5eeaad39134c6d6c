// bindings/env.h — the `env` global (and `openhuman.env`): allowlisted host environment values.
#pragma once

#include <quickjs.h>

namespace skillbox::bindings {

/// Defines the global `env` with `get`, and `openhuman.env` as the same object. See docs/env.md.
/// Returns false with an exception pending on failure (out of memory).
[[nodiscard]] bool install_env(JSContext* ctx, JSValueConst global, JSValueConst openhuman);

}  // namespace skillbox::bindings
