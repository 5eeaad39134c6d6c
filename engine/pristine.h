// engine/pristine.h — the runtime every invocation starts from, built once and restored per run.
//
// Building a runtime, its realm and the host API costs about as much as the raw engine's whole
// lifecycle, and every invocation builds the same thing. A PristineRealm builds it once — runtime,
// context, intrinsics, host API, timers and (for its variant) fetch, before any skill code exists —
// with the runtime's arena in a region of its own (BlockArena::reserve_region), then keeps an image:
// the region's used bytes and the arena's bookkeeping, in a separate mapping made read-only. An
// invocation runs on the live region; afterwards release() frees what the run allocated outside the
// region and copies the image back over it, at the same address, so no pointer needs fixing: the
// next run sees exactly the runtime that was saved (freshness: a new JSRuntime + JSContext in effect).
//
// What differs between runs is not in the image: the stack top, the limits, the interrupt handler,
// the runtime, context and module-loader opaques (all set by the Session per run) and the Math.random
// state (seeded per run from the OS CSPRNG, JS_SetRandomSeed). The only host pointers stored in the
// runtime are to this object's HeapAccount, which stays where it is; HeapAccount::rebind points it at
// the run's limiter and memory budget and starts its counts at the restored footprint.
//
// One PristineRealm per thread and variant (thread_realm); a worker child inherits the zygote's,
// already clean, through fork. It is not reentrant: a Session on a thread whose realm is in use
// (a nested run) builds a fresh runtime instead.
#pragma once

#include <quickjs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "engine/heap.h"
#include "engine/limiter.h"

namespace skillbox::engine {

class PristineRealm {
 public:
  /// Address space reserved per realm in a pool thread: runs that need more take malloc'd chunks
  /// beyond it, freed at release().
  static constexpr size_t kRegionBytes = 64ull * 1024 * 1024;
  /// Committed region pages kept mapped past the image after a run (reused without a page fault by
  /// the next runs); the rest of what a big run touched is returned (MADV_DONTNEED), so that one
  /// large run does not pin its memory to the thread.
  static constexpr size_t kKeptBytes = 8ull * 1024 * 1024;

  /// Builds the realm for `fetch` (bindings::install_fetch or not) in a region of `region_bytes`.
  /// Null when an image cannot be made (no region, or the build failed): build a fresh runtime then.
  static std::unique_ptr<PristineRealm> build(bool fetch, size_t region_bytes = kRegionBytes);
  ~PristineRealm();
  PristineRealm(const PristineRealm&) = delete;
  PristineRealm& operator=(const PristineRealm&) = delete;

  /// Takes the realm for one run: false if it is in use already (a nested run on this thread).
  [[nodiscard]] bool acquire();
  /// Ends the run: frees its memory outside the region and restores the image.
  void release();

  [[nodiscard]] JSRuntime* runtime() const { return rt_; }
  [[nodiscard]] JSContext* context() const { return ctx_; }
  HeapAccount& heap() { return heap_; }

  // Tests.
  /// The image (read-only) and the live region it is restored into.
  [[nodiscard]] std::span<const unsigned char> image() const { return {image_, image_bytes_}; }
  [[nodiscard]] unsigned char* region() { return heap_.arena().region_base(); }
  /// FNV-1a of the image and its saved bookkeeping.
  [[nodiscard]] uint64_t image_checksum() const;

 private:
  PristineRealm();
  bool make(bool fetch, size_t region_bytes);
  bool snapshot();

  DeadlineFlag flag_;  // the build's: never raised
  Limiter limiter_;    // the build's; a run rebinds heap_ to its own
  HeapAccount heap_;
  JSRuntime* rt_ = nullptr;
  JSContext* ctx_ = nullptr;
  unsigned char* image_ = nullptr;  // mapping: image_bytes_ of region, then the Bookkeeping
  size_t image_bytes_ = 0;
  size_t image_map_bytes_ = 0;
  const BlockArena::Bookkeeping* saved_ = nullptr;
  bool in_use_ = false;
};

/// This thread's realm for `fetch`, built on first use; null if one cannot be made (each thread tries
/// once per variant). `region_bytes` applies to the build only.
PristineRealm* thread_realm(bool fetch, size_t region_bytes = PristineRealm::kRegionBytes);

}  // namespace skillbox::engine
