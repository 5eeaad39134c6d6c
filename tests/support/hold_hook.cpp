#include "support/hold_hook.h"

#include <quickjs.h>

#include <condition_variable>
#include <mutex>

#include "runner/testing_hooks.h"

namespace skillbox::testing {
namespace {

struct Gate {
  std::mutex mutex;
  std::condition_variable cv;
  bool open = false;
  int holding = 0;  // hold() calls blocked now
};

Gate& gate() {
  static Gate g;
  return g;
}

JSValue js_hold(JSContext* /*ctx*/, JSValueConst /*this_val*/, int /*argc*/, JSValueConst* /*argv*/) {
  Gate& g = gate();
  std::unique_lock<std::mutex> lock(g.mutex);
  ++g.holding;
  g.cv.notify_all();
  g.cv.wait_for(lock, std::chrono::seconds(60), [&] { return g.open; });
  --g.holding;
  g.cv.notify_all();
  return JS_UNDEFINED;
}

}  // namespace

HoldHook::HoldHook() {
  {
    std::lock_guard<std::mutex> lock(gate().mutex);
    gate().open = false;
  }
  runner::testing::set_extra_api([](JSContext* ctx) {
    JSValue global = JS_GetGlobalObject(ctx);
    JS_SetPropertyStr(ctx, global, "hold", JS_NewCFunction(ctx, js_hold, "hold", 0));
    JS_FreeValue(ctx, global);
  });
}

HoldHook::~HoldHook() {
  release();
  runner::testing::set_extra_api({});
}

void HoldHook::release() {
  std::lock_guard<std::mutex> lock(gate().mutex);
  gate().open = true;
  gate().cv.notify_all();
}

bool HoldHook::wait_holding(int n, std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(gate().mutex);
  return gate().cv.wait_for(lock, limit, [&] { return gate().holding >= n; });
}

}  // namespace skillbox::testing
