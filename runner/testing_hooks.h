// runner/testing_hooks.h — test-only hooks into InProcessRunner. Not part of the public API.
//
// Some runner behaviour can only be shown with a native call that runs past the deadline without
// polling (abandoned runs): the engine's own such calls are bounded by the heap limit and too short
// to rely on (docs/limits.md). A test installs a native function through this hook instead.
#pragma once

#include <functional>

struct JSContext;  // QuickJS (quickjs.h declares it the same way)

namespace skillbox::runner::testing {

/// Tests only: `install` is called on the JS thread of every later invocation of every
/// InProcessRunner, after the host API is installed (engine::SessionParams::install_extra_api). An
/// empty function removes the hook. Thread-safe; invocations already started keep the hook they had.
void set_extra_api(std::function<void(JSContext*)> install);

}  // namespace skillbox::runner::testing
