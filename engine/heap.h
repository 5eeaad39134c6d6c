// engine/heap.h — the one allocator of a skill's runtime.
//
// Every byte QuickJS allocates for a runtime goes through these JSMallocFunctions (JS_NewRuntime2), so
// this is the single choke point for memory: it counts current and peak bytes, enforces the heap limit
// itself (QuickJS leaves the check of JSMallocState::malloc_limit to custom allocators), and refuses
// every allocation once the deadline has passed, which is what stops native loops that allocate but
// never reach the interrupt handler (`new Array(1e9) + ''`). Each refusal is reported to the Limiter,
// so the outcome is memory_limit/timeout whatever the skill does with the resulting exception.
#pragma once

#include <quickjs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_set>

#include "bus/memory_budget.h"
#include "engine/limiter.h"

namespace skillbox::engine {

class HeapAccount {
 public:
  /// Counters of `limiter`'s invocation. The byte limit is JSMallocState::malloc_limit, which
  /// JS_SetMemoryLimit sets; QuickJS keeps JSMallocState::malloc_size (used by its GC trigger) too.
  /// With a `budget` (the invocation's, bus/memory_budget.h), the host bytes held for the invocation
  /// count against the same limit: an allocation is refused when heap + host bytes would pass it, and
  /// every change of the heap is published to the budget, so host reservations see it.
  explicit HeapAccount(Limiter& limiter, bus::MemoryBudget* budget = nullptr);
  HeapAccount(const HeapAccount&) = delete;
  HeapAccount& operator=(const HeapAccount&) = delete;

  /// The allocator functions to pass to JS_NewRuntime2 together with a HeapAccount* as opaque.
  static const JSMallocFunctions kFunctions;

  /// Starts enforcing the heap limit and the deadline. Until then every allocation is granted: QuickJS
  /// aborts the process if building the realm fails half-way (JS_SetPropertyFunctionList defines a
  /// property twice when an atom cannot be allocated), so the realm and the host API are built first
  /// — a bounded, skill-independent amount of memory that still counts against the limit.
  void enforce() { enforcing_ = true; }

  /// Bytes currently allocated (usable sizes as reported by malloc), and the most ever at once.
  [[nodiscard]] uint64_t current_bytes() const { return current_; }
  [[nodiscard]] uint64_t peak_bytes() const { return peak_; }

  /// Tests only (testing::track_heap_blocks): calls `f(block, usable bytes)` for every block of the
  /// runtime still allocated, so a test can scan the whole live heap. Does nothing for an account made
  /// while tracking was off (production: no set is kept, one untaken branch per allocation).
  template <class F>
  void for_each_live_block(F&& f) const {
    if (blocks_)
      for (void* p : *blocks_) f(static_cast<const unsigned char*>(p), block_bytes(p));
  }

 private:
  static void* js_malloc(JSMallocState* s, size_t size);
  static void js_free(JSMallocState* s, void* ptr);
  static void* js_realloc(JSMallocState* s, void* ptr, size_t size);
  bool admit(JSMallocState* s, size_t grow);
  void added(JSMallocState* s, size_t bytes);
  void removed(JSMallocState* s, size_t bytes);
  static size_t block_bytes(const void* p);
  void remember(void* p);
  void forget(void* p);

  Limiter& limiter_;
  bus::MemoryBudget* budget_;
  bool enforcing_ = false;
  uint64_t current_ = 0;
  uint64_t peak_ = 0;
  std::unique_ptr<std::unordered_set<void*>> blocks_;  // tests only, see for_each_live_block
};

namespace testing {
/// Tests only: HeapAccounts made while this is on remember their live blocks (for_each_live_block).
/// Thread-safe; accounts already made keep what they had.
void track_heap_blocks(bool on);
}  // namespace testing

}  // namespace skillbox::engine
