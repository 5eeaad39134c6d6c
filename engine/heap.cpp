#include "engine/heap.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace skillbox::engine {
namespace {

// Bookkeeping overhead QuickJS's own allocator adds per block (MALLOC_OVERHEAD in quickjs.c); kept so
// that malloc_size, which drives QuickJS's GC threshold, means what the engine expects.
constexpr size_t kMallocOverhead = 8;

size_t usable_size(const void* ptr) {
  return ptr == nullptr ? 0 : malloc_usable_size(const_cast<void*>(ptr));
}

HeapAccount& account(JSMallocState* s) {
  return *static_cast<HeapAccount*>(s->opaque);
}

std::atomic<bool> g_track_blocks{false};

}  // namespace

void testing::track_heap_blocks(bool on) {
  g_track_blocks.store(on);
}

HeapAccount::HeapAccount(Limiter& limiter, bus::MemoryBudget* budget) : limiter_(limiter), budget_(budget) {
  if (g_track_blocks.load()) blocks_ = std::make_unique<std::unordered_set<void*>>();
}

size_t HeapAccount::block_bytes(const void* p) {
  return usable_size(p);
}

void HeapAccount::remember(void* p) {
  if (!blocks_) return;
  try {
    blocks_->insert(p);
  } catch (const std::bad_alloc&) {  // tests only; a block left out is a scan that sees less
  }
}

void HeapAccount::forget(void* p) {
  if (blocks_) blocks_->erase(p);
}

const JSMallocFunctions HeapAccount::kFunctions = {
    &HeapAccount::js_malloc,
    &HeapAccount::js_free,
    &HeapAccount::js_realloc,
    &usable_size,
};

bool HeapAccount::admit(JSMallocState* s, size_t grow) {
  if (!enforcing_) return true;
  // After the deadline nothing more is allocated: a native loop that builds a string or an array
  // fails at its next allocation even though it never reaches the interrupt handler.
  if (limiter_.deadline_flagged()) {
    limiter_.trip(LimitKind::timeout);
    return false;
  }
  // The limit applies to the bytes we count (usable sizes), so heap_peak_bytes can be compared with it,
  // and to the host buffers held for the invocation (its MemoryBudget) together with them.
  const uint64_t host = budget_ == nullptr ? 0 : budget_->host_bytes();
  if (current_ + grow + host > s->malloc_limit) {
    limiter_.trip(LimitKind::memory);
    return false;
  }
  return true;
}

void HeapAccount::added(JSMallocState* s, size_t bytes) {
  s->malloc_count++;
  s->malloc_size += bytes + kMallocOverhead;
  current_ += bytes;
  if (current_ > peak_) peak_ = current_;
  if (budget_ != nullptr) budget_->set_engine_bytes(current_);
}

void HeapAccount::removed(JSMallocState* s, size_t bytes) {
  s->malloc_count--;
  s->malloc_size -= bytes + kMallocOverhead;
  current_ -= bytes;
  if (budget_ != nullptr) budget_->set_engine_bytes(current_);
}

void* HeapAccount::js_malloc(JSMallocState* s, size_t size) {
  HeapAccount& h = account(s);
  if (size == 0) return nullptr;  // QuickJS never asks for 0 bytes expecting a block
  if (!h.admit(s, size)) return nullptr;
  void* p = std::malloc(size);  // NOLINT(cppcoreguidelines-no-malloc): QuickJS frees with js_free
  if (p == nullptr) {
    h.limiter_.trip(LimitKind::memory);  // the host itself is out of memory
    return nullptr;
  }
  h.added(s, usable_size(p));
  h.remember(p);
  return p;
}

void HeapAccount::js_free(JSMallocState* s, void* ptr) {
  if (ptr == nullptr) return;
  account(s).removed(s, usable_size(ptr));
  account(s).forget(ptr);
  std::free(ptr);  // NOLINT(cppcoreguidelines-no-malloc)
}

void* HeapAccount::js_realloc(JSMallocState* s, void* ptr, size_t size) {
  HeapAccount& h = account(s);
  if (ptr == nullptr) return size == 0 ? nullptr : js_malloc(s, size);
  const size_t old_size = usable_size(ptr);
  if (size == 0) {
    js_free(s, ptr);
    return nullptr;
  }
  if (size > old_size && !h.admit(s, size - old_size)) return nullptr;
  h.forget(ptr);                      // before realloc, which may free it
  void* p = std::realloc(ptr, size);  // NOLINT(cppcoreguidelines-no-malloc)
  if (p == nullptr) {
    h.remember(ptr);
    h.limiter_.trip(LimitKind::memory);
    return nullptr;  // the old block is untouched and still counted
  }
  h.removed(s, old_size);
  h.added(s, usable_size(p));
  h.remember(p);
  return p;
}

}  // namespace skillbox::engine
