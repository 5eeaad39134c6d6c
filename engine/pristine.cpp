#include "engine/pristine.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "bindings/fetch.h"
#include "bindings/install.h"
#include "engine/realm.h"
#include "engine/timers.h"

namespace skillbox::engine {
namespace {

size_t page_size() {
  return static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

size_t round_to_pages(size_t n) {
  const size_t page = page_size();
  return (n + page - 1) / page * page;
}

}  // namespace

PristineRealm::PristineRealm() : limiter_(Limits{}, Clock::time_point::max(), flag_), heap_(limiter_) {}

PristineRealm::~PristineRealm() {
  // The runtime is not freed value by value: all its memory is the arena's, which heap_ unmaps.
  if (image_ != nullptr) munmap(image_, image_map_bytes_);
}

std::unique_ptr<PristineRealm> PristineRealm::build(bool fetch, size_t region_bytes) {
  std::unique_ptr<PristineRealm> realm(new PristineRealm());
  if (!realm->make(fetch, region_bytes)) return nullptr;
  return realm;
}

bool PristineRealm::make(bool fetch, size_t region_bytes) {
  BlockArena& arena = heap_.arena();
  if (!arena.reserve_region(region_bytes)) return false;
  // Every block of the build, large ones included, lives in the region: the image is then complete.
  arena.large_blocks_in_region(true);
  rt_ = JS_NewRuntime2(&HeapAccount::kFunctions, &heap_);
  if (rt_ != nullptr) ctx_ = new_skill_context(rt_, heap_);
  bool ok = ctx_ != nullptr && bindings::install_host_api(ctx_) && install_timers(ctx_);
  if (ok && fetch) ok = bindings::install_fetch(ctx_);
  if (ctx_ != nullptr) {
    const JSValue exc = JS_GetException(ctx_);
    ok = ok && JS_IsNull(exc);
    JS_FreeValue(ctx_, exc);
  }
  if (ok) JS_RunGC(rt_);  // the build's garbage would otherwise be copied into every run
  arena.large_blocks_in_region(false);
  return ok && arena.self_contained() && snapshot();
}

bool PristineRealm::snapshot() {
  const BlockArena& arena = heap_.arena();
  image_bytes_ = arena.region_used();
  image_map_bytes_ = round_to_pages(image_bytes_ + sizeof(BlockArena::Bookkeeping));
  void* m = mmap(nullptr, image_map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return false;
  image_ = static_cast<unsigned char*>(m);
  std::memcpy(image_, arena.region_base(), image_bytes_);
  const BlockArena::Bookkeeping saved = arena.save();
  std::memcpy(image_ + image_bytes_, &saved, sizeof saved);
  saved_ = reinterpret_cast<const BlockArena::Bookkeeping*>(image_ + image_bytes_);
  // Read-only from here on: a run, whatever it corrupts in the live heap, cannot change the image.
  return mprotect(image_, image_map_bytes_, PROT_READ) == 0;
}

bool PristineRealm::acquire() {
  if (in_use_) return false;
  in_use_ = true;
  return true;
}

void PristineRealm::release() {
  heap_.arena().restore(*saved_, image_, kKeptBytes);
  in_use_ = false;
}

uint64_t PristineRealm::image_checksum() const {
  uint64_t h = 0xcbf2'9ce4'8422'2325ULL;
  for (size_t i = 0; i < image_bytes_ + sizeof(BlockArena::Bookkeeping); ++i) {
    h ^= image_[i];
    h *= 0x100'0000'01b3ULL;
  }
  return h;
}

namespace {

struct Slot {
  std::unique_ptr<PristineRealm> realm;
  bool tried = false;
};

std::array<Slot, 2>& thread_slots() {
  thread_local std::array<Slot, 2> slots;
  return slots;
}

}  // namespace

PristineRealm* thread_realm(bool fetch, size_t region_bytes) {
  Slot& slot = thread_slots()[fetch ? 1 : 0];
  if (!slot.tried) {
    slot.tried = true;
    slot.realm = PristineRealm::build(fetch, region_bytes);
  }
  return slot.realm.get();
}

}  // namespace skillbox::engine
