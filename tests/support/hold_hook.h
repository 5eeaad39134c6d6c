// tests/support/hold_hook.h — a native call that cannot be interrupted, for runner tests.
//
// While a HoldHook lives, every invocation of every InProcessRunner has a global `hold()` that blocks
// in C++ until the test calls HoldHook::release(): it neither allocates nor ticks, like the native
// operations docs/limits.md lists as "not charged", but for as long as the test wants (those are
// bounded by the heap limit and too short to rely on). Installed through runner/testing_hooks.h.
#pragma once

#include <chrono>

namespace skillbox::testing {

class HoldHook {
 public:
  HoldHook();   // installs hold(), with the gate closed
  ~HoldHook();  // releases every hold() and removes the global
  HoldHook(const HoldHook&) = delete;
  HoldHook& operator=(const HoldHook&) = delete;

  /// Lets every blocked and later hold() return. (hold() also returns by itself after 60 s, so a
  /// failing test cannot hang the suite.)
  static void release();
  /// Waits up to `limit` until `n` hold() calls are blocked; returns whether they were.
  static bool wait_holding(int n, std::chrono::milliseconds limit);
};

}  // namespace skillbox::testing
