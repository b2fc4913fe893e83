#include "worker/net/codec_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace scalws::worker {
namespace {

bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

TEST(CodecMemoryTest, AFreedBlockIsHandedOutAgainForAnySizeOfItsClass) {
  CodecMemory memory;
  void* first = memory.allocate(100);
  ASSERT_NE(first, nullptr);
  memory.release(first);
  EXPECT_GT(memory.cachedBytes(), 0u);
  // 100 and 112 bytes share the 112-byte class.
  void* again = memory.allocate(112);
  EXPECT_EQ(again, first);
  EXPECT_EQ(memory.cachedBytes(), 0u);
  memory.release(again);
}

TEST(CodecMemoryTest, AnotherClassGetsABlockOfItsOwn) {
  CodecMemory memory;
  void* small = memory.allocate(100);
  memory.release(small);
  void* larger = memory.allocate(200);
  EXPECT_NE(larger, small);
  std::memset(larger, 0x5a, 200);  // all 200 bytes are the caller's (ASan checks)
  memory.release(larger);
}

TEST(CodecMemoryTest, BlocksKeepMallocsAlignmentInTheirWholeRange) {
  CodecMemory memory;
  std::vector<void*> blocks;
  for (size_t size : {0, 1, 15, 16, 17, 100, 1023, 1024, 1025, 70000}) {
    void* p = memory.allocate(size);
    ASSERT_NE(p, nullptr) << size;
    EXPECT_TRUE(aligned16(p)) << size;
    std::memset(p, 0x11, size);
    blocks.push_back(p);
  }
  for (void* p : blocks) memory.release(p);
}

TEST(CodecMemoryTest, CallocZeroesARecycledBlock) {
  CodecMemory memory;
  auto* dirty = static_cast<unsigned char*>(memory.allocate(64));
  std::memset(dirty, 0xab, 64);
  memory.release(dirty);
  auto* zeroed = static_cast<unsigned char*>(CodecMemory::callocFn(4, 16, &memory));
  ASSERT_EQ(zeroed, dirty);
  for (size_t i = 0; i < 64; ++i) ASSERT_EQ(zeroed[i], 0) << i;
  CodecMemory::freeFn(zeroed, &memory);
}

TEST(CodecMemoryTest, CallocRefusesASizeThatOverflows) {
  CodecMemory memory;
  EXPECT_EQ(memory.allocateZeroed(SIZE_MAX / 2, 3), nullptr);
  EXPECT_EQ(memory.allocate(SIZE_MAX - 4), nullptr);
}

TEST(CodecMemoryTest, ReallocKeepsTheBytesAcrossClassesAndPastThePool) {
  CodecMemory memory;
  auto* p = static_cast<char*>(memory.allocate(10));
  std::memcpy(p, "0123456789", 10);
  // Within the block's capacity (16): the same block.
  EXPECT_EQ(memory.reallocate(p, 16), p);
  auto* q = static_cast<char*>(memory.reallocate(p, 300));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(std::memcmp(q, "0123456789", 10), 0);
  std::memset(q + 10, 'x', 290);
  auto* r = static_cast<char*>(CodecMemory::reallocFn(q, 5000, &memory));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(std::memcmp(r, "0123456789", 10), 0);
  EXPECT_EQ(r[299], 'x');
  // Shrinking keeps the block.
  EXPECT_EQ(memory.reallocate(r, 8), r);
  EXPECT_EQ(memory.reallocate(r, 0), nullptr);                 // realloc(p, 0) frees
  void* fresh = CodecMemory::reallocFn(nullptr, 40, &memory);  // realloc(nullptr) allocates
  ASSERT_NE(fresh, nullptr);
  memory.release(fresh);
  memory.release(nullptr);
}

TEST(CodecMemoryTest, TheFreeListsStayWithinTheirLimit) {
  CodecMemory memory(1000);
  std::vector<void*> blocks;
  for (int i = 0; i < 40; ++i) blocks.push_back(memory.allocate(64));
  for (void* p : blocks) memory.release(p);
  // 80 bytes a block with its header: twelve fit.
  EXPECT_EQ(memory.cachedBytes(), 12u * 80u);
}

TEST(CodecMemoryTest, BlocksPastTheLargestClassAreNotKept) {
  CodecMemory memory;
  void* big = memory.allocate(CodecMemory::kMaxPooled + 1);
  memory.release(big);
  EXPECT_EQ(memory.cachedBytes(), 0u);
  void* largest = memory.allocate(CodecMemory::kMaxPooled);
  memory.release(largest);
  EXPECT_EQ(memory.cachedBytes(), CodecMemory::kMaxPooled + 16);
}

}  // namespace
}  // namespace scalws::worker
