// engine/arena.h — the block allocator behind one runtime's heap.
//
// A runtime makes thousands of small allocations while it builds its realm and frees every one of them
// when it is torn down, a few hundred microseconds later. Through the process's malloc that costs a
// third of a trivial invocation (size-class searches, consolidation on free, lock-free-but-shared
// arenas). BlockArena serves a runtime's small blocks from its own chunks instead: size classes with
// LIFO free lists, carved by bumping a pointer, all returned to malloc at once when the arena dies.
// Nothing is shared between arenas, so no block, byte or free list outlives its runtime.
//
// Layout. Every block has an 8-byte header just before its payload (a magic number, the block's size, a
// free flag); payloads are 16-byte aligned. Small blocks (header included, up to kMaxSmallBlockBytes)
// come from 32 KiB chunks in classes 16 bytes apart up to 1 KiB, then 256 bytes apart. Larger blocks
// are "outside" blocks: one malloc each, with a 32-byte prefix that links them into a list so that the
// arena frees any a runtime leaves behind.
//
// Accounting is the footprint: bytes carved from chunks (free or in use) plus outside blocks with their
// prefix. A freed small block stays on a free list and keeps counting, so fragmentation can never take
// a runtime past its memory limit. Before anything new is carved, the smallest free block of a larger
// class is split and its front serves the request, so memory freed in one size serves others.
//
// Region mode (reserve_region). The arena can instead carve its chunks from one reserved virtual region
// of its own (mapped PROT_NONE, committed as it is used and never returned), so that a runtime's small
// blocks, and while large_blocks_in_region() is on its large blocks too, live at known addresses. The
// region's used bytes together with the arena's bookkeeping (save()) are then a complete copy of the
// runtime, which restore() puts back at the same address: no pointer needs fixing (engine/pristine.h).
// Large blocks made in the region are "region blocks": they keep their capacity when freed, counted
// like a free small block, until the next restore. When the region is full, chunks come from malloc.
//
// Hardening against a corrupted heap (an engine bug a skill could reach): free-list links are stored
// mangled with a per-process secret and their own address, every block handed out or taken back has
// its header checked (magic, class, free flag: a double free or a foreign pointer is caught), and any
// mismatch aborts the process rather than continue with a heap it cannot trust. In worker mode that is
// a crashed worker, reported as such. Under AddressSanitizer every block is an outside block, so the
// sanitizer sees each one separately.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include "base/sanitizer.h"

namespace skillbox::engine {

class BlockArena {
 public:
  /// False under AddressSanitizer: every block is then an outside block (see the file comment).
  static constexpr bool kSmallBlocks = !base::kAddressSanitizer;
  /// Largest small block, header included; bigger requests are outside blocks.
  static constexpr size_t kMaxSmallBlockBytes = 4096;
  /// Bytes of one chunk that small blocks are carved from.
  static constexpr size_t kChunkBytes = 32 * 1024;
  /// Bytes an outside block costs beyond its payload (its list links, size and header).
  static constexpr size_t kOutsidePrefixBytes = 32;

  BlockArena();
  ~BlockArena();  // returns every chunk and every outside block still allocated to malloc, unmaps the region
  BlockArena(const BlockArena&) = delete;
  BlockArena& operator=(const BlockArena&) = delete;

  /// Maps a region of `bytes` (rounded up to pages) to carve chunks from (see the file comment).
  /// Call before the first allocation. False if the region cannot be mapped: the arena then uses
  /// malloc as usual.
  bool reserve_region(size_t bytes);
  /// Whether `p` is inside the region (false without one).
  [[nodiscard]] bool in_region(const void* p) const {
    const auto* b = static_cast<const unsigned char*>(p);
    return b >= region_ && b < region_ + region_bytes_;
  }
  /// While on, large blocks are carved from the region too (region blocks, see the file comment).
  void large_blocks_in_region(bool on) { large_in_region_ = on && region_ != nullptr; }

  /// The arena's own bookkeeping: with the bytes region_used() names, everything needed to put the
  /// arena back to this moment (restore()). Plain data.
  struct Bookkeeping {
    uint64_t carved = 0;
    uint64_t outside_bytes = 0;
    unsigned char* bump = nullptr;
    unsigned char* bump_end = nullptr;
    unsigned char* last_chunk = nullptr;
    unsigned char* region_next = nullptr;
    unsigned char* region_blocks = nullptr;
    std::array<uintptr_t, 1 + 64 + 12> free{};
    std::array<uint64_t, 2> nonempty{};
  };
  /// The bookkeeping now. Precondition: no outside block and no chunk outside the region is live
  /// (a restore could not bring them back): true after building with large_blocks_in_region(true)
  /// in a region that did not overflow; check with self_contained().
  [[nodiscard]] Bookkeeping save() const;
  [[nodiscard]] bool self_contained() const;
  /// The start of the region and the bytes of it in use now (its carved chunks and region blocks).
  [[nodiscard]] unsigned char* region_base() const { return region_; }
  [[nodiscard]] size_t region_used() const { return static_cast<size_t>(region_next_ - region_); }
  /// The bytes of the region that are mapped read-write (committed as carving needed them).
  [[nodiscard]] size_t region_committed() const { return static_cast<size_t>(region_committed_ - region_); }
  /// Puts the arena back to a saved moment: frees every outside block and every chunk outside the
  /// region, copies `image` (what region_used() covered when `saved` was taken) to the start of the
  /// region and takes `saved` as its bookkeeping. Region memory past the image is cleared and keeps
  /// its pages up to `keep_bytes` from the start (mapped, reused by the next carvings without a page
  /// fault); pages beyond are returned (MADV_DONTNEED).
  void restore(const Bookkeeping& saved, const unsigned char* image, size_t keep_bytes);

  /// Why allocate/resize returned null.
  enum class Refusal { none, limit, host_out_of_memory };

  // The fast paths (a free block of the class, a release onto its list) are inline: QuickJS allocates
  // and frees thousands of blocks per invocation, so a call per block shows in a trivial run's time.

  /// A block of at least `size` (> 0) bytes, 16-byte aligned for small blocks. Null, with `why` set,
  /// when the footprint would grow by more than `room` bytes (limit) or malloc failed.
  void* allocate(size_t size, uint64_t room, Refusal& why) {
    why = Refusal::none;
    if (kSmallBlocks && size <= kMaxSmallBlockBytes - kHeaderBytes) {
      const unsigned cls = class_of(size);
      if (free_[cls] != 0) return pop(cls);
      return take_small(cls, room, why);
    }
    if (large_in_region_) return take_region_block(size, room, why);
    return take_outside(size, room, why);
  }

  /// Frees a block of this arena (null is ignored). Aborts on a block it did not hand out or one
  /// already freed.
  void release(void* p) {
    if (p == nullptr) return;
    uint64_t& h = header_of(p);
    const unsigned units = units_in(h);
    if (h != header_word(units, false) || units == 0 ||
        (units > kMaxUnits && units != kOutsideUnits && units != kRegionUnits))
      bad_release(h);
    if (units == kOutsideUnits) {
      release_outside(p);
      return;
    }
    if (units == kRegionUnits) {  // keeps its bytes, counted, until the region is restored
      h = header_word(units, true);
      return;
    }
    h = header_word(units, true);
    push(list_of(units), p);
  }

  /// realloc: the block at `p` (null: allocate) resized to at least `size` (> 0) bytes, in place when
  /// it fits its capacity. On failure `p` is untouched and still allocated.
  void* resize(void* p, size_t size, uint64_t room, Refusal& why);

  /// The payload bytes the block at `p` can hold (0 for null).
  static size_t usable_size(const void* p) {
    if (p == nullptr) return 0;
    const unsigned units = units_in(header_of(p));
    return units >= kRegionUnits ? outside_size(p) : units * kUnit - kHeaderBytes;
  }
  /// Bytes this arena holds against the limit (see the file comment).
  [[nodiscard]] uint64_t footprint() const { return carved_ + outside_bytes_; }

  /// Calls `f(region, bytes)` for every block, in use or free, its header included: the regions add up
  /// to footprint(). For tests that scan all the memory a runtime holds.
  template <class F>
  void for_each_block(F&& f) const {
    for (const unsigned char* c = last_chunk_; c != nullptr; c = chunk_next(c)) {
      const unsigned char* end = c == last_chunk_ ? bump_ : chunk_end(c);
      for (const unsigned char* b = c + kFirstBlockOffset; b < end;) {
        const size_t n = block_bytes_at(b);
        f(b, n);
        b += n;
      }
    }
    for (const Outside* o = outside_; o != nullptr; o = outside_next(o))
      f(reinterpret_cast<const unsigned char*>(o), outside_bytes(o));
    for (const Outside* o = reinterpret_cast<const Outside*>(region_blocks_); o != nullptr;
         o = outside_next(o))
      f(reinterpret_cast<const unsigned char*>(o), outside_bytes(o));
  }

 private:
  struct Outside;
  // Block header: kMagic in the high 32 bits, the block's size in 16-byte units (header included) in
  // bits 8-23 (kOutsideUnits for an outside block), kFreeFlag in bit 0. Small blocks have any size
  // that is a multiple of 16 up to kMaxSmallBlockBytes: a request gets its class's size, and a larger
  // free block split in two serves it when its own class has none (see take_small).
  static constexpr size_t kHeaderBytes = 8;
  static constexpr size_t kUnit = 16;         // block sizes are multiples of this; payloads are aligned to it
  static constexpr size_t kFineStep = kUnit;  // class spacing up to kFineLimit
  static constexpr size_t kFineLimit = 1024;  // block bytes, header included
  static constexpr size_t kCoarseStep = 256;  // class spacing above it, up to kMaxSmallBlockBytes
  static constexpr unsigned kFineClasses = kFineLimit / kFineStep;
  static constexpr size_t kClasses = 1 + kFineClasses + (kMaxSmallBlockBytes - kFineLimit) / kCoarseStep;
  static constexpr unsigned kMaxUnits = kMaxSmallBlockBytes / kUnit;
  static constexpr unsigned kOutsideUnits = 0xffff;
  static constexpr unsigned kRegionUnits = 0xfffe;  // a large block carved from the region
  // Bytes the region is committed by at a time (mprotect), so a run rarely needs a system call.
  static constexpr size_t kCommitStep = 1024 * 1024;
  static constexpr uint64_t kMagic = 0x5b0c'a7e1;
  static constexpr uint64_t kFreeFlag = 1;
  // A chunk starts with the previous chunk's address and, once it is full, where its carving ended;
  // its first block's header follows at this offset, so that payloads are 16-byte aligned.
  static constexpr size_t kFirstBlockOffset = 24;

  static constexpr uint64_t header_word(unsigned units, bool is_free) {
    return kMagic << 32 | uint64_t{units} << 8 | (is_free ? kFreeFlag : 0);
  }
  static constexpr unsigned units_in(uint64_t header) {
    return static_cast<unsigned>((header >> 8) & 0xffff);
  }
  static constexpr size_t class_bytes(unsigned cls) {
    return cls <= kFineClasses ? cls * kFineStep : kFineLimit + (cls - kFineClasses) * kCoarseStep;
  }
  static constexpr unsigned class_of(size_t size) {  // size <= kMaxSmallBlockBytes - kHeaderBytes
    const size_t block = (size + kHeaderBytes + kFineStep - 1) & ~(kFineStep - 1);
    if (block <= kFineLimit) return static_cast<unsigned>(block / kFineStep);
    return kFineClasses + static_cast<unsigned>((block - kFineLimit + kCoarseStep - 1) / kCoarseStep);
  }
  // The free list a free block of `units` goes on: the largest class it can serve.
  static constexpr unsigned list_of(unsigned units) {
    const size_t bytes = units * kUnit;
    if (bytes <= kFineLimit) return units;
    return kFineClasses + static_cast<unsigned>((bytes - kFineLimit) / kCoarseStep);
  }
  static uint64_t& header_of(const void* payload) {
    return *reinterpret_cast<uint64_t*>(static_cast<unsigned char*>(const_cast<void*>(payload)) -
                                        kHeaderBytes);
  }
  // A free block's first word holds the next free block of its class, mangled with its own address and
  // a per-process secret: a stray write cannot plant a usable pointer without knowing both.
  static uintptr_t mangle(uintptr_t next, uintptr_t slot) { return next ^ (slot >> 12) ^ secret_; }

  void* pop(unsigned cls) {
    const uintptr_t p = free_[cls];
    uint64_t& h = header_of(reinterpret_cast<void*>(p));
    const unsigned units = units_in(h);
    if ((p & (kUnit - 1)) != 0 || h != header_word(units, true) || units > kMaxUnits || list_of(units) != cls)
      bad_free_list();
    free_[cls] = mangle(*reinterpret_cast<uintptr_t*>(p), p);
    if (free_[cls] == 0) nonempty_[cls / 64] &= ~(uint64_t{1} << (cls % 64));
    h = header_word(units, false);
    return reinterpret_cast<void*>(p);
  }
  void push(unsigned cls, void* p) {  // p's header already says free
    const auto addr = reinterpret_cast<uintptr_t>(p);
    if (free_[cls] == 0) nonempty_[cls / 64] |= uint64_t{1} << (cls % 64);
    *static_cast<uintptr_t*>(p) = mangle(free_[cls], addr);
    free_[cls] = addr;
  }

  static const uintptr_t secret_;
  [[noreturn]] static void bad_free_list();
  [[noreturn]] static void bad_release(uint64_t header);
  void* take_small(unsigned cls, uint64_t room, Refusal& why);
  void* take_outside(size_t size, uint64_t room, Refusal& why);
  void release_outside(void* p);
  static size_t outside_size(const void* p);
  bool carve_chunk();
  unsigned char* carve_region(size_t bytes);
  void* take_region_block(size_t size, uint64_t room, Refusal& why);
  void drop_run_memory();
  static const unsigned char* chunk_next(const unsigned char* c);
  static const unsigned char* chunk_end(const unsigned char* c);
  static size_t block_bytes_at(const unsigned char* header);
  static const Outside* outside_next(const Outside* o);
  static size_t outside_bytes(const Outside* o);

  uint64_t carved_ = 0;         // bytes of small blocks carved so far (headers included)
  uint64_t outside_bytes_ = 0;  // outside blocks' payloads and prefixes
  unsigned char* bump_ = nullptr;
  unsigned char* bump_end_ = nullptr;
  unsigned char* last_chunk_ = nullptr;     // the chunk being carved; each links to the one before
  Outside* outside_ = nullptr;              // doubly linked list of live outside blocks
  std::array<uintptr_t, kClasses> free_{};  // per class: the first free payload (plain address)
  std::array<uint64_t, (kClasses + 63) / 64> nonempty_{};  // bit c: free_[c] != 0
  unsigned char* region_ = nullptr;  // reserve_region(): the region, its size, how much is in use/committed
  size_t region_bytes_ = 0;
  unsigned char* region_next_ = nullptr;
  unsigned char* region_committed_ = nullptr;
  unsigned char* region_blocks_ = nullptr;  // region blocks (an Outside prefix each), linked by `next`
  bool large_in_region_ = false;
  std::vector<unsigned char*> overflow_chunks_;  // chunks from malloc once the region was full
  static_assert(std::tuple_size_v<decltype(Bookkeeping::free)> == kClasses);
  static_assert(std::tuple_size_v<decltype(Bookkeeping::nonempty)> == (kClasses + 63) / 64);
};

}  // namespace skillbox::engine
