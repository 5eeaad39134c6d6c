// The runtime's block allocator (engine/arena.h): what QuickJS relies on (alignment, usable sizes,
// realloc keeping contents), what the memory limit relies on (the footprint, refusals within `room`),
// and that a damaged heap stops the process instead of being used.
#include "engine/arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

namespace skillbox::engine {
namespace {

constexpr uint64_t kNoLimit = UINT64_MAX;

void* take(BlockArena& a, size_t n, uint64_t room = kNoLimit) {
  BlockArena::Refusal why{};
  void* p = a.allocate(n, room, why);
  EXPECT_EQ(why, p == nullptr ? BlockArena::Refusal::limit : BlockArena::Refusal::none);
  return p;
}

uint64_t walked_bytes(const BlockArena& a) {
  uint64_t total = 0;
  a.for_each_block([&](const unsigned char*, size_t n) { total += n; });
  return total;
}

TEST(BlockArena, EveryBlockIsAlignedWritableAndAtLeastAsLargeAsAsked) {
  BlockArena a;
  std::vector<void*> blocks;
  for (size_t n = 1; n <= 9000; n += (n < 1100 ? 1 : 97)) {
    void* p = take(a, n);
    ASSERT_NE(p, nullptr) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u) << n;
    const size_t usable = BlockArena::usable_size(p);
    EXPECT_GE(usable, n);
    std::memset(p, 0xab, usable);  // the whole usable size is the caller's (QuickJS uses the slack)
    blocks.push_back(p);
  }
  EXPECT_EQ(std::set<void*>(blocks.begin(), blocks.end()).size(), blocks.size())
      << "no block handed out twice";
  EXPECT_EQ(walked_bytes(a), a.footprint());
  for (void* p : blocks) a.release(p);
}

TEST(BlockArena, SmallBlocksAreReusedAndKeepCountingAfterRelease) {
  if (!BlockArena::kSmallBlocks) GTEST_SKIP() << "AddressSanitizer build: every block is an outside block";
  BlockArena a;
  void* p = take(a, 40);
  const uint64_t after_one = a.footprint();
  EXPECT_EQ(after_one, 48u) << "a 40-byte payload with its 8-byte header";
  a.release(p);
  EXPECT_EQ(a.footprint(), after_one) << "a freed small block stays carved and counted";
  EXPECT_EQ(take(a, 33), p) << "the freed block of the same class is reused";
  EXPECT_EQ(a.footprint(), after_one);
}

TEST(BlockArena, LargeBlocksGoBackToMallocWhenReleased) {
  BlockArena a;
  void* p = take(a, 100'000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(BlockArena::usable_size(p), 100'000u);
  EXPECT_EQ(a.footprint(), 100'000u + BlockArena::kOutsidePrefixBytes);
  a.release(p);
  EXPECT_EQ(a.footprint(), 0u);
}

TEST(BlockArena, RefusesWhatWouldPassTheRoom) {
  BlockArena a;
  EXPECT_EQ(take(a, 100'000, 100'000), nullptr) << "the prefix does not fit";
  EXPECT_EQ(a.footprint(), 0u);
  if (!BlockArena::kSmallBlocks) return;
  EXPECT_EQ(take(a, 24, 16), nullptr) << "a 32-byte block does not fit in 16 bytes of room";
  EXPECT_EQ(a.footprint(), 0u);
}

TEST(BlockArena, AFreeLargerBlockIsSplitBeforeAnythingIsCarved) {
  if (!BlockArena::kSmallBlocks) GTEST_SKIP() << "AddressSanitizer build: every block is an outside block";
  BlockArena a;
  auto* big = static_cast<unsigned char*>(take(a, 1000));  // a 1008-byte block
  a.release(big);
  const uint64_t before = a.footprint();
  // With no room left at all, the free block still serves: split, 32 bytes at a time.
  EXPECT_EQ(take(a, 24, 0), big);
  EXPECT_EQ(BlockArena::usable_size(big), 24u);
  EXPECT_EQ(take(a, 24, 0), big + 32) << "the rest of the split block";
  EXPECT_EQ(a.footprint(), before);
  EXPECT_EQ(walked_bytes(a), a.footprint()) << "the split blocks still tile the chunk";
  std::vector<void*> more;
  while (void* p = take(a, 24, 0)) more.push_back(p);
  EXPECT_EQ(more.size(), 1008 / 32 - 2) << "all of it, then nothing: 1008 bytes hold 31 blocks of 32";
  EXPECT_EQ(a.footprint(), before);
}

TEST(BlockArena, ResizeKeepsTheContentsInPlaceOrMoved) {
  BlockArena a;
  BlockArena::Refusal why{};
  auto* p = static_cast<unsigned char*>(take(a, 20));
  for (int i = 0; i < 20; ++i) p[i] = static_cast<unsigned char>(i);
  auto* same = static_cast<unsigned char*>(a.resize(p, BlockArena::usable_size(p), kNoLimit, why));
  EXPECT_EQ(same, p) << "a size within the capacity stays in place";
  auto* q = static_cast<unsigned char*>(a.resize(same, 3000, kNoLimit, why));
  ASSERT_NE(q, nullptr);
  auto* r = static_cast<unsigned char*>(a.resize(q, 50'000, kNoLimit, why));  // becomes an outside block
  ASSERT_NE(r, nullptr);
  auto* s = static_cast<unsigned char*>(a.resize(r, 200'000, kNoLimit, why));  // outside to outside
  ASSERT_NE(s, nullptr);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(s[i], i);
  EXPECT_EQ(a.resize(s, 10'000'000, 1000, why), nullptr);
  EXPECT_EQ(why, BlockArena::Refusal::limit);
  EXPECT_EQ(s[19], 19) << "a refused resize leaves the block as it was";
  EXPECT_EQ(walked_bytes(a), a.footprint());
  a.release(s);
}

TEST(BlockArena, BlocksLeftAllocatedAreFreedWithTheArena) {
  // Nothing to assert here directly: LeakSanitizer (the sanitizer job) fails the test if the
  // destructor leaves any chunk or outside block behind, and the footprint walk covers them all.
  auto a = std::make_unique<BlockArena>();
  for (int i = 0; i < 5000; ++i) take(*a, static_cast<size_t>(16 + (i % 300) * 17));
  take(*a, 1 << 20);
  EXPECT_EQ(walked_bytes(*a), a->footprint());
  a.reset();
}

TEST(BlockArenaDeathTest, ADoubleFreeStopsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        BlockArena a;
        void* p = take(a, 64);
        a.release(p);
        a.release(p);
      },
      BlockArena::kSmallBlocks ? "freed twice" : "");
}

TEST(BlockArenaDeathTest, ADamagedFreeListStopsTheProcess) {
  if (!BlockArena::kSmallBlocks) GTEST_SKIP() << "AddressSanitizer build: free lists are not used";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        BlockArena a;
        void* p = take(a, 64);
        void* q = take(a, 64);
        a.release(q);
        a.release(p);
        // A use after free plants a pointer in p's link (to q, a valid block): without the process
        // secret it decodes to garbage, which the next allocation does not hand out: its checks
        // catch it (misaligned, or no free header there), or reading the header faults.
        std::memcpy(p, &q, sizeof q);
        take(a, 64);
        take(a, 64);
        std::fprintf(stderr, "the planted pointer was handed out\n");
        std::_Exit(0);
      },
      "");
}

TEST(BlockArenaDeathTest, AForeignPointerStopsTheProcess) {
  if (!BlockArena::kSmallBlocks) GTEST_SKIP() << "AddressSanitizer build: ASan reports foreign frees";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        BlockArena a;
        alignas(16) unsigned char not_a_block[64] = {};
        a.release(not_a_block + 16);
      },
      "no valid header");
}

}  // namespace
}  // namespace skillbox::engine
