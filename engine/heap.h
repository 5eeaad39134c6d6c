// engine/heap.h — the one allocator of a skill's runtime.
//
// Every byte QuickJS allocates for a runtime goes through these JSMallocFunctions (JS_NewRuntime2), so
// this is the single choke point for memory: it counts current and peak bytes, enforces the heap limit
// itself (QuickJS leaves the check of JSMallocState::malloc_limit to custom allocators), and refuses
// every allocation once the deadline has passed, which is what stops native loops that allocate but
// never reach the interrupt handler (`new Array(1e9) + ''`). Each refusal is reported to the Limiter,
// so the outcome is memory_limit/timeout whatever the skill does with the resulting exception.
//
// The blocks themselves come from the runtime's own BlockArena (engine/arena.h), and the bytes counted
// are its footprint: every block carved for the runtime, in use or on a free list, plus its large
// blocks. That is what the runtime holds of the host's memory, so it is what the limit bounds.
#pragma once

#include <quickjs.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "bus/memory_budget.h"
#include "engine/arena.h"
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

  /// Makes the account count for another invocation (a runtime restored from an image, engine/pristine.h):
  /// its limiter and budget from now on, enforcement off until enforce(), and current and peak bytes
  /// starting at the arena's footprint now, the restored runtime's, which counts as a fresh build does.
  void rebind(Limiter& limiter, bus::MemoryBudget* budget);

  /// The allocator functions to pass to JS_NewRuntime2 together with a HeapAccount* as opaque.
  static const JSMallocFunctions kFunctions;

  /// Starts enforcing the heap limit and the deadline. Until then every allocation is granted: QuickJS
  /// aborts the process if building the realm fails half-way (JS_SetPropertyFunctionList defines a
  /// property twice when an atom cannot be allocated), so the realm and the host API are built first
  /// — a bounded, skill-independent amount of memory that still counts against the limit.
  void enforce() { enforcing_ = true; }

  /// Around building a part of the realm on first use (engine/realm.cpp, lazy intrinsics): for the
  /// same reason as above every allocation is granted in between (a bounded, skill-independent
  /// amount, still counted); when it ends, a footprint past the limit trips memory_limit.
  void suspend_enforcement() { suspended_ = true; }
  void resume_enforcement();

  /// Bytes the runtime holds now (its arena's footprint, see the file comment), and the most ever.
  [[nodiscard]] uint64_t current_bytes() const { return current_; }
  [[nodiscard]] uint64_t peak_bytes() const { return peak_; }

  /// The arena behind the runtime (engine/pristine.cpp reserves its region and saves and restores it).
  BlockArena& arena() { return arena_; }

  /// Tests only: calls `f(region, bytes)` for every block the runtime holds, in use or free, headers
  /// included (BlockArena::for_each_block), so a test can scan all the memory of a runtime.
  template <class F>
  void for_each_block(F&& f) const {
    arena_.for_each_block(std::forward<F>(f));
  }

 private:
  static void* js_malloc(JSMallocState* s, size_t size);
  static void js_free(JSMallocState* s, void* ptr);
  static void* js_realloc(JSMallocState* s, void* ptr, size_t size);
  static size_t js_usable_size(const void* ptr);
  bool admit_now();
  [[nodiscard]] uint64_t room(const JSMallocState* s) const;
  void added(JSMallocState* s, size_t bytes);
  void removed(JSMallocState* s, size_t bytes);
  void count_footprint();

  Limiter* limiter_;
  bus::MemoryBudget* budget_;
  BlockArena arena_;
  bool enforcing_ = false;
  bool suspended_ = false;
  uint64_t current_ = 0;
  uint64_t peak_ = 0;
};

}  // namespace skillbox::engine
