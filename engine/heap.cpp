#include "engine/heap.h"

namespace skillbox::engine {
namespace {

// Bookkeeping overhead QuickJS's own allocator adds per block (MALLOC_OVERHEAD in quickjs.c); kept so
// that malloc_size, which drives QuickJS's GC threshold, means what the engine expects.
constexpr size_t kMallocOverhead = 8;

HeapAccount& account(JSMallocState* s) {
  return *static_cast<HeapAccount*>(s->opaque);
}

}  // namespace

HeapAccount::HeapAccount(Limiter& limiter, bus::MemoryBudget* budget) : limiter_(&limiter), budget_(budget) {}

void HeapAccount::rebind(Limiter& limiter, bus::MemoryBudget* budget) {
  limiter_ = &limiter;
  budget_ = budget;
  enforcing_ = false;
  suspended_ = false;
  current_ = arena_.footprint();
  peak_ = current_;
  if (budget_ != nullptr) budget_->set_engine_bytes(current_);
}

size_t HeapAccount::js_usable_size(const void* ptr) {
  return BlockArena::usable_size(ptr);
}

const JSMallocFunctions HeapAccount::kFunctions = {
    &HeapAccount::js_malloc,
    &HeapAccount::js_free,
    &HeapAccount::js_realloc,
    &HeapAccount::js_usable_size,
};

void HeapAccount::resume_enforcement() {
  suspended_ = false;
  const uint64_t host = budget_ == nullptr ? 0 : budget_->host_bytes();
  if (enforcing_ && current_ + host > limiter_->limits().memory_bytes) limiter_->trip(LimitKind::memory);
}

inline bool HeapAccount::admit_now() {
  if (!enforcing_ || suspended_) return true;
  // After the deadline nothing more is allocated: a native loop that builds a string or an array
  // fails at its next allocation even though it never reaches the interrupt handler.
  if (limiter_->deadline_flagged()) {
    limiter_->trip(LimitKind::timeout);
    return false;
  }
  return true;
}

inline uint64_t HeapAccount::room(const JSMallocState* s) const {
  if (!enforcing_ || suspended_) return UINT64_MAX;
  // The limit applies to the footprint together with the host buffers held for the invocation (its
  // MemoryBudget), so heap_peak_bytes can be compared with it.
  const uint64_t used = current_ + (budget_ == nullptr ? 0 : budget_->host_bytes());
  return used >= s->malloc_limit ? 0 : s->malloc_limit - used;
}

inline void HeapAccount::count_footprint() {
  const uint64_t f = arena_.footprint();
  if (f == current_) return;
  current_ = f;
  if (current_ > peak_) peak_ = current_;
  if (budget_ != nullptr) budget_->set_engine_bytes(current_);
}

// malloc_count/malloc_size are QuickJS's own statistics; malloc_size drives its GC threshold.
inline void HeapAccount::added(JSMallocState* s, size_t bytes) {
  s->malloc_count++;
  s->malloc_size += bytes + kMallocOverhead;
}

inline void HeapAccount::removed(JSMallocState* s, size_t bytes) {
  s->malloc_count--;
  s->malloc_size -= bytes + kMallocOverhead;
}

void* HeapAccount::js_malloc(JSMallocState* s, size_t size) {
  HeapAccount& h = account(s);
  if (size == 0) return nullptr;  // QuickJS never asks for 0 bytes expecting a block
  if (!h.admit_now()) return nullptr;
  BlockArena::Refusal why{};
  void* p = h.arena_.allocate(size, h.room(s), why);
  if (p == nullptr) {
    h.limiter_->trip(LimitKind::memory);  // over the limit, or the host itself out of memory
    return nullptr;
  }
  h.added(s, BlockArena::usable_size(p));
  h.count_footprint();
  return p;
}

void HeapAccount::js_free(JSMallocState* s, void* ptr) {
  if (ptr == nullptr) return;
  HeapAccount& h = account(s);
  h.removed(s, BlockArena::usable_size(ptr));
  h.arena_.release(ptr);
  h.count_footprint();
}

void* HeapAccount::js_realloc(JSMallocState* s, void* ptr, size_t size) {
  HeapAccount& h = account(s);
  if (ptr == nullptr) return size == 0 ? nullptr : js_malloc(s, size);
  if (size == 0) {
    js_free(s, ptr);
    return nullptr;
  }
  const size_t old_size = BlockArena::usable_size(ptr);
  if (size > old_size && !h.admit_now()) return nullptr;
  BlockArena::Refusal why{};
  void* p = h.arena_.resize(ptr, size, h.room(s), why);
  if (p == nullptr) {
    h.limiter_->trip(LimitKind::memory);
    return nullptr;  // the old block is untouched and still counted
  }
  h.removed(s, old_size);
  h.added(s, BlockArena::usable_size(p));
  h.count_footprint();
  return p;
}

}  // namespace skillbox::engine
