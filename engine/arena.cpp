#include "engine/arena.h"

#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace skillbox::engine {
namespace {

static_assert(BlockArena::kMaxSmallBlockBytes % 256 == 0);

uintptr_t make_secret() {
  uintptr_t s = 0;
  if (getrandom(&s, sizeof s, 0) != static_cast<ssize_t>(sizeof s))
    s = reinterpret_cast<uintptr_t>(&s) * 0x9e37'79b9'7f4a'7c15ULL;  // still per-process (ASLR)
  return s;
}

[[noreturn]] void corrupted(const char* what) {
  std::fprintf(stderr, "skillbox: JS heap corruption detected (%s); aborting\n", what);
  std::abort();
}

}  // namespace

const uintptr_t BlockArena::secret_ = make_secret();

void BlockArena::bad_free_list() {
  corrupted("a free list is damaged");
}

void BlockArena::bad_release(uint64_t header) {
  corrupted((header & kFreeFlag) != 0 && header >> 32 == kMagic ? "a block was freed twice"
                                                                : "a freed block has no valid header");
}

struct BlockArena::Outside {
  Outside* prev;
  Outside* next;
  size_t size;      // payload bytes
  uint64_t header;  // header_word(kOutsideUnits, false), just before the payload like any block
};
BlockArena::BlockArena() {
  static_assert(sizeof(Outside) == kOutsidePrefixBytes);
  static_assert(kFirstBlockOffset % kFineStep == kHeaderBytes);
  static_assert(class_bytes(class_of(1)) == 16);
  static_assert(class_bytes(class_of(kFineLimit - kHeaderBytes)) == kFineLimit);
  static_assert(class_bytes(class_of(kFineLimit - kHeaderBytes + 1)) == kFineLimit + kCoarseStep);
  static_assert(class_bytes(class_of(kMaxSmallBlockBytes - kHeaderBytes)) == kMaxSmallBlockBytes);
  static_assert(class_of(kMaxSmallBlockBytes - kHeaderBytes) < kClasses);
}

BlockArena::~BlockArena() {
  if (region_ == nullptr) {
    drop_run_memory();
    for (unsigned char* c = last_chunk_; c != nullptr;) {
      auto* next = const_cast<unsigned char*>(chunk_next(c));
      std::free(c);  // NOLINT(cppcoreguidelines-no-malloc)
      c = next;
    }
    return;
  }
  drop_run_memory();
  munmap(region_, region_bytes_);
}

// Frees what a restore cannot bring back: every outside block, and the chunks carved from malloc after
// the region filled up (always the newest ones, so they head the chunk list).
void BlockArena::drop_run_memory() {
  for (Outside* o = outside_; o != nullptr;) {
    Outside* next = o->next;
    std::free(o);  // NOLINT(cppcoreguidelines-no-malloc): the arena's own memory
    o = next;
  }
  outside_ = nullptr;
  outside_bytes_ = 0;
  if (region_ == nullptr) return;
  // Listed apart, not found by walking the chunk list: that list runs through the region, which a
  // corrupted heap may have overwritten.
  for (unsigned char* c : overflow_chunks_) std::free(c);  // NOLINT(cppcoreguidelines-no-malloc)
  overflow_chunks_.clear();
  last_chunk_ = nullptr;
  bump_ = bump_end_ = nullptr;
}

bool BlockArena::reserve_region(size_t bytes) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  bytes = (bytes + kCommitStep - 1) / kCommitStep * kCommitStep;
  if (region_ != nullptr || last_chunk_ != nullptr || outside_ != nullptr || kCommitStep % page != 0)
    return false;
  // PROT_NONE until committed: reserved address space costs no memory and counts against no RLIMIT_DATA.
  void* r = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED) return false;
  region_ = static_cast<unsigned char*>(r);
  region_bytes_ = bytes;
  region_next_ = region_;
  region_committed_ = region_;
  return true;
}

// `bytes` (a multiple of kUnit) from the region, committing more of it if needed; null when full.
unsigned char* BlockArena::carve_region(size_t bytes) {
  if (region_ == nullptr || bytes > static_cast<size_t>(region_ + region_bytes_ - region_next_))
    return nullptr;
  unsigned char* end = region_next_ + bytes;
  if (end > region_committed_) {
    const size_t more =
        (static_cast<size_t>(end - region_committed_) + kCommitStep - 1) / kCommitStep * kCommitStep;
    const size_t grant = std::min(more, static_cast<size_t>(region_ + region_bytes_ - region_committed_));
    if (mprotect(region_committed_, grant, PROT_READ | PROT_WRITE) != 0) return nullptr;
    region_committed_ += grant;
  }
  unsigned char* p = region_next_;
  region_next_ = end;
  return p;
}

bool BlockArena::self_contained() const {
  return outside_ == nullptr && overflow_chunks_.empty();
}

BlockArena::Bookkeeping BlockArena::save() const {
  Bookkeeping b;
  b.carved = carved_;
  b.outside_bytes = outside_bytes_;
  b.bump = bump_;
  b.bump_end = bump_end_;
  b.last_chunk = last_chunk_;
  b.region_next = region_next_;
  b.region_blocks = region_blocks_;
  b.free = free_;
  b.nonempty = nonempty_;
  return b;
}

void BlockArena::restore(const Bookkeeping& saved, const unsigned char* image, size_t keep_bytes) {
  drop_run_memory();
  // Pages past what is kept go back to the system: one large run does not pin its memory.
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t keep =
      (std::max(keep_bytes, static_cast<size_t>(saved.region_next - region_)) + page - 1) / page * page;
  const size_t used = (region_used() + page - 1) / page * page;
  if (used > keep) madvise(region_ + keep, used - keep, MADV_DONTNEED);
  // What the run carved past the image is cleared: the next run's blocks hold nothing of this one's,
  // even in bytes the engine has not written yet.
  unsigned char* image_end = saved.region_next;
  unsigned char* dirty_end = std::min(region_next_, region_ + keep);
  if (dirty_end > image_end) std::memset(image_end, 0, static_cast<size_t>(dirty_end - image_end));
  std::memcpy(region_, image, static_cast<size_t>(saved.region_next - region_));
  carved_ = saved.carved;
  outside_bytes_ = saved.outside_bytes;
  bump_ = saved.bump;
  bump_end_ = saved.bump_end;
  last_chunk_ = saved.last_chunk;
  region_next_ = saved.region_next;
  region_blocks_ = saved.region_blocks;
  free_ = saved.free;
  nonempty_ = saved.nonempty;
}

void* BlockArena::take_region_block(size_t size, uint64_t room, Refusal& why) {
  if (size > region_bytes_) return take_outside(size, room, why);
  const size_t bytes = (size + kOutsidePrefixBytes + kUnit - 1) / kUnit * kUnit;
  if (bytes > room) {
    why = Refusal::limit;
    return nullptr;
  }
  unsigned char* at = carve_region(bytes);
  if (at == nullptr) return take_outside(size, room, why);
  auto* o = reinterpret_cast<Outside*>(at);
  *o = Outside{nullptr, reinterpret_cast<Outside*>(region_blocks_), bytes - kOutsidePrefixBytes,
               header_word(kRegionUnits, false)};
  region_blocks_ = at;
  carved_ += bytes;
  return o + 1;
}

const unsigned char* BlockArena::chunk_next(const unsigned char* c) {
  return *reinterpret_cast<unsigned char* const*>(c);
}

const unsigned char* BlockArena::chunk_end(const unsigned char* c) {
  return *reinterpret_cast<unsigned char* const*>(c + sizeof(void*));
}

size_t BlockArena::block_bytes_at(const unsigned char* header) {
  return units_in(*reinterpret_cast<const uint64_t*>(header)) * kUnit;
}

const BlockArena::Outside* BlockArena::outside_next(const Outside* o) {
  return o->next;
}

size_t BlockArena::outside_bytes(const Outside* o) {
  return o->size + kOutsidePrefixBytes;
}

bool BlockArena::carve_chunk() {
  unsigned char* c = carve_region(kChunkBytes);
  if (c == nullptr) {
    c = static_cast<unsigned char*>(std::malloc(kChunkBytes));  // NOLINT(cppcoreguidelines-no-malloc)
    if (c == nullptr) return false;
    if (region_ != nullptr) {  // a full region: the chunk is freed at the next restore
      try {
        overflow_chunks_.push_back(c);
      } catch (const std::bad_alloc&) {
        std::free(c);  // NOLINT(cppcoreguidelines-no-malloc)
        return false;
      }
    }
  }
  if (last_chunk_ != nullptr) *reinterpret_cast<unsigned char**>(last_chunk_ + sizeof(void*)) = bump_;
  *reinterpret_cast<unsigned char**>(c) = last_chunk_;
  last_chunk_ = c;
  bump_ = c + kFirstBlockOffset;
  bump_end_ = c + kChunkBytes;
  return true;
}

void* BlockArena::take_small(unsigned cls, uint64_t room, Refusal& why) {
  const size_t bytes = class_bytes(cls);
  const auto units = static_cast<unsigned>(bytes / kUnit);
  // The smallest free block of a larger class, split: the front serves, the rest stays free. Memory
  // freed in one size then serves others, which keeps the footprint near what is live.
  for (unsigned w = (cls + 1) / 64; w < nonempty_.size(); ++w) {
    uint64_t bits = nonempty_[w];
    if (w == (cls + 1) / 64) bits &= ~uint64_t{0} << ((cls + 1) % 64);
    if (bits == 0) continue;
    const auto larger = static_cast<unsigned>(w * 64 + static_cast<unsigned>(__builtin_ctzll(bits)));
    void* p = pop(larger);
    const unsigned rest = units_in(header_of(p)) - units;
    header_of(p) = header_word(units, false);
    void* tail = static_cast<unsigned char*>(p) + bytes;
    header_of(tail) = header_word(rest, true);
    push(list_of(rest), tail);
    return p;
  }
  if (bytes > room) {
    why = Refusal::limit;
    return nullptr;
  }
  if (static_cast<size_t>(bump_end_ - bump_) < bytes && !carve_chunk()) {
    why = Refusal::host_out_of_memory;
    return nullptr;
  }
  unsigned char* block = bump_;
  bump_ += bytes;
  carved_ += bytes;
  *reinterpret_cast<uint64_t*>(block) = header_word(units, false);
  return block + kHeaderBytes;
}

void* BlockArena::take_outside(size_t size, uint64_t room, Refusal& why) {
  if (size > std::numeric_limits<size_t>::max() - kOutsidePrefixBytes || size + kOutsidePrefixBytes > room) {
    why = Refusal::limit;
    return nullptr;
  }
  auto* o =
      static_cast<Outside*>(std::malloc(size + kOutsidePrefixBytes));  // NOLINT(cppcoreguidelines-no-malloc)
  if (o == nullptr) {
    why = Refusal::host_out_of_memory;
    return nullptr;
  }
  *o = Outside{nullptr, outside_, size, header_word(kOutsideUnits, false)};
  if (outside_ != nullptr) outside_->prev = o;
  outside_ = o;
  outside_bytes_ += size + kOutsidePrefixBytes;
  return o + 1;
}

size_t BlockArena::outside_size(const void* p) {
  return (static_cast<const Outside*>(p) - 1)->size;
}

void BlockArena::release_outside(void* p) {
  Outside* o = static_cast<Outside*>(p) - 1;
  if (o->prev != nullptr)
    o->prev->next = o->next;
  else
    outside_ = o->next;
  if (o->next != nullptr) o->next->prev = o->prev;
  outside_bytes_ -= o->size + kOutsidePrefixBytes;
  std::free(o);  // NOLINT(cppcoreguidelines-no-malloc)
}

void* BlockArena::resize(void* p, size_t size, uint64_t room, Refusal& why) {
  why = Refusal::none;
  if (p == nullptr) return allocate(size, room, why);
  const uint64_t h = header_of(p);
  const unsigned units = units_in(h);
  if (h != header_word(units, false) || units == 0 ||
      (units > kMaxUnits && units != kOutsideUnits && units != kRegionUnits))
    corrupted("a resized block has no valid header");
  // A block that keeps its place whenever the new size fits (shrinking included: moving it would free
  // nothing, the old block staying carved, and could carve another), else moves to a new one.
  const auto in_place_or_moved = [&](size_t capacity) -> void* {
    if (size <= capacity) return p;
    void* q = allocate(size, room, why);
    if (q == nullptr) return nullptr;
    std::memcpy(q, p, capacity);
    release(p);
    return q;
  };
  if (units == kRegionUnits) return in_place_or_moved(outside_size(p));
  if (units == kOutsideUnits) {
    Outside* o = static_cast<Outside*>(p) - 1;
    const size_t old = o->size;
    if (size == old) return p;
    if (size > std::numeric_limits<size_t>::max() - kOutsidePrefixBytes ||
        (size > old && size - old > room)) {
      why = Refusal::limit;
      return nullptr;
    }
    auto* n = static_cast<Outside*>(
        std::realloc(o, size + kOutsidePrefixBytes));  // NOLINT(cppcoreguidelines-no-malloc)
    if (n == nullptr) {
      why = Refusal::host_out_of_memory;
      return nullptr;
    }
    if (n->prev != nullptr)
      n->prev->next = n;
    else
      outside_ = n;
    if (n->next != nullptr) n->next->prev = n;
    outside_bytes_ = outside_bytes_ - old + size;
    n->size = size;
    return n + 1;
  }
  return in_place_or_moved(units * kUnit - kHeaderBytes);  // a small block
}

}  // namespace skillbox::engine
