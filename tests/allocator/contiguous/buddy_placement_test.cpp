#include "allocator/contiguous/buddy_placement.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <vector>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {

void PrintTo(const SlotRange& r, std::ostream* os) {
  *os << "[" << r.offset << ", " << r.end() << ")";
}

namespace {

using Offsets = std::vector<std::int64_t>;

// Free lists of every order 0..max_order, as block offsets.
std::vector<Offsets> free_lists(const BuddyPlacement& b) {
  std::vector<Offsets> lists;
  for (int k = 0; k <= b.max_order(); ++k) lists.push_back(b.free_chunks(k));
  return lists;
}

// The vLLM paper's pool: 983 blocks of 16 slots, max chunk 128 blocks.
BuddyPlacement paper_pool() { return BuddyPlacement(983 * 16, 16, 128); }

TEST(BuddyPlacementTest, PaperPoolStartsAsMaximalAlignedChunks) {
  const BuddyPlacement b = paper_pool();
  EXPECT_EQ(b.num_blocks(), 983);
  EXPECT_EQ(b.max_order(), 7);
  EXPECT_EQ(b.capacity_slots(), 15'728);
  EXPECT_EQ(b.free_slots(), 15'728);
  EXPECT_EQ(b.max_range_slots(), 2048);
  // 983 = 7 x 128 + 64 + 16 + 4 + 2 + 1.
  const std::vector<Offsets> expected = {
      {982}, {980}, {976}, {}, {960}, {}, {896}, {0, 128, 256, 384, 512, 640, 768}};
  EXPECT_EQ(free_lists(b), expected);
  b.validate();
}

TEST(BuddyPlacementTest, SmallPoolCapsTheLargestRange) {
  // 100 blocks: the largest chunk is 64 blocks, below the 128-block max chunk.
  const BuddyPlacement b(100 * 16, 16, 128);
  EXPECT_EQ(b.max_range_slots(), 64 * 16);
  const std::vector<Offsets> expected = {{}, {}, {96}, {}, {}, {64}, {0}, {}};
  EXPECT_EQ(free_lists(b), expected);
}

TEST(BuddyPlacementTest, RangeSlotsRoundToPowerOfTwoBlocks) {
  const BuddyPlacement b = paper_pool();
  EXPECT_EQ(b.range_slots(1), 16);
  EXPECT_EQ(b.range_slots(16), 16);
  EXPECT_EQ(b.range_slots(17), 32);
  EXPECT_EQ(b.range_slots(65), 128);   // 5 blocks -> 8 blocks
  EXPECT_EQ(b.range_slots(80), 128);
  EXPECT_EQ(b.range_slots(132), 256);  // 9 blocks -> 16 blocks
  EXPECT_EQ(b.range_slots(2048), 2048);
  EXPECT_EQ(b.order_for(65), 3);
  EXPECT_GT(b.range_slots(2049), b.max_range_slots());  // never fits
}

TEST(BuddyPlacementTest, FiveBlockRequestSplitsSixteenIntoEight) {
  BuddyPlacement b(16 * 16, 16, 128);  // one chunk of 16 blocks
  EXPECT_EQ(free_lists(b), (std::vector<Offsets>{{}, {}, {}, {}, {0}, {}, {}, {}}));
  const std::optional<std::int64_t> at = b.place(b.range_slots(5 * 16));
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(*at, 0);
  EXPECT_EQ(free_lists(b), (std::vector<Offsets>{{}, {}, {}, {8}, {}, {}, {}, {}}));
  EXPECT_EQ(b.free_slots(), 8 * 16);
  b.validate();
}

TEST(BuddyPlacementTest, FiveBlockRequestInPaperPoolTakesTheSmallestLargerChunk) {
  BuddyPlacement b = paper_pool();
  // Order 3 is empty; the smallest larger order with a chunk is 4 (block 960): split it.
  const std::optional<std::int64_t> at = b.place(b.range_slots(80));
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(*at, 960 * 16);
  const std::vector<Offsets> expected = {
      {982}, {980}, {976}, {968}, {}, {}, {896}, {0, 128, 256, 384, 512, 640, 768}};
  EXPECT_EQ(free_lists(b), expected);
  // A second one takes the freed upper half, the lowest (only) chunk of order 3.
  EXPECT_EQ(b.place(128), 968 * 16);
  // A third splits the 64-block chunk at 896 down to 8 blocks, keeping the lower halves.
  EXPECT_EQ(b.place(128), 896 * 16);
  const std::vector<Offsets> after = {
      {982}, {980}, {976}, {904}, {912}, {928}, {}, {0, 128, 256, 384, 512, 640, 768}};
  EXPECT_EQ(free_lists(b), after);
  b.validate();
}

TEST(BuddyPlacementTest, TakesLowestAddressChunkOfTheNeededOrder) {
  BuddyPlacement b(64, 1, 64);  // block = 1 slot for easy arithmetic
  EXPECT_EQ(b.place(8), 0);
  EXPECT_EQ(b.place(8), 8);
  EXPECT_EQ(b.place(8), 16);
  b.release({8, 8});
  // Order 3 now holds block 8 and block 24; the lower one is reused.
  EXPECT_EQ(b.free_chunks(3), (Offsets{8, 24}));
  EXPECT_EQ(b.place(8), 8);
  b.validate();
}

TEST(BuddyPlacementTest, BuddiesMergeBackToTheOriginalChunks) {
  BuddyPlacement b = paper_pool();
  const std::vector<Offsets> initial = free_lists(b);
  std::vector<SlotRange> held;
  for (std::int64_t slots : {16, 32, 80, 2048, 16, 500, 16, 1000, 48, 300}) {
    const std::int64_t r = b.range_slots(slots);
    const std::optional<std::int64_t> at = b.place(r);
    ASSERT_TRUE(at.has_value()) << slots;
    held.push_back({*at, r});
    b.validate();
  }
  // Free in an order unrelated to allocation, so merges happen in many patterns.
  for (std::size_t i : {3, 0, 7, 1, 9, 5, 2, 8, 4, 6}) {
    b.release(held[i]);
    b.validate();
  }
  EXPECT_EQ(free_lists(b), initial);
  EXPECT_EQ(b.free_slots(), b.capacity_slots());
}

TEST(BuddyPlacementTest, MergeStopsAtMaxOrderAndAtThePoolEnd) {
  BuddyPlacement b(12, 1, 4);  // chunks of at most 4: {0, 4, 8}
  EXPECT_EQ(b.free_chunks(2), (Offsets{0, 4, 8}));
  EXPECT_EQ(b.place(4), 0);
  EXPECT_EQ(b.place(4), 4);
  b.release({0, 4});
  b.release({4, 4});
  // Two free buddies of order 2 = the max order: they stay separate chunks.
  EXPECT_EQ(b.free_chunks(2), (Offsets{0, 4, 8}));
  b.validate();

  BuddyPlacement c(3, 1, 4);  // chunks {0:2, 2:1}; block 2's buddy (3) lies past the end
  EXPECT_EQ(c.free_chunks(1), (Offsets{0}));
  EXPECT_EQ(c.free_chunks(0), (Offsets{2}));
  EXPECT_EQ(c.place(1), 2);
  c.release({2, 1});
  EXPECT_EQ(c.free_chunks(0), (Offsets{2}));
  c.validate();
}

TEST(BuddyPlacementTest, FailsWhenNoChunkIsLargeEnough) {
  BuddyPlacement b(16, 1, 16);
  EXPECT_EQ(b.place(8), 0);
  EXPECT_EQ(b.place(4), 8);
  EXPECT_EQ(b.place(1), 12);
  // Free: 13 (order 0), 14 (order 1) = 3 slots, but no chunk of 4.
  EXPECT_FALSE(b.can_place(4));
  EXPECT_FALSE(b.place(4).has_value());
  EXPECT_EQ(b.free_slots(), 3);
  EXPECT_TRUE(b.can_place(2));
  EXPECT_FALSE(b.can_place(32));
  b.validate();
}

TEST(BuddyPlacementTest, UnusableFreeCountsChunksBelowTheNeededOrder) {
  BuddyPlacement b(16, 1, 16);
  EXPECT_EQ(b.place(1), 0);  // free: 1 (o0), 2 (o1), 4 (o2), 8 (o3)
  EXPECT_EQ(b.place(4), 4);  // free: 1 (o0), 2 (o1), 8 (o3)
  EXPECT_EQ(b.free_slots(), 11);
  EXPECT_EQ(b.unusable_free(1), 0);
  EXPECT_EQ(b.unusable_free(2), 1);
  EXPECT_EQ(b.unusable_free(4), 3);
  EXPECT_EQ(b.unusable_free(8), 3);
  EXPECT_EQ(b.unusable_free(16), 11);  // needs the whole pool
  EXPECT_EQ(b.unusable_free(17), 11);  // can never fit: every free slot
}

TEST(BuddyPlacementTest, FreeHolesAreTheFreeChunksInAddressOrder) {
  BuddyPlacement b(16, 1, 16);
  EXPECT_EQ(b.place(1), 0);
  EXPECT_EQ(b.place(4), 4);
  EXPECT_EQ(b.free_holes(), (std::vector<SlotRange>{{1, 1}, {2, 2}, {8, 8}}));
}

TEST(BuddyPlacementTest, CheckRangeShapeRejectsNonChunks) {
  const BuddyPlacement b(64 * 16, 16, 16);
  b.check_range_shape({0, 16 * 16});
  b.check_range_shape({32 * 16, 8 * 16});
  EXPECT_THROW(b.check_range_shape({8, 16}), InvariantViolation);             // not block-aligned
  EXPECT_THROW(b.check_range_shape({0, 3 * 16}), InvariantViolation);         // 3 blocks
  EXPECT_THROW(b.check_range_shape({4 * 16, 8 * 16}), InvariantViolation);    // misaligned chunk
  EXPECT_THROW(b.check_range_shape({0, 32 * 16}), InvariantViolation);        // above max chunk
  EXPECT_THROW(b.check_range_shape({60 * 16, 8 * 16}), InvariantViolation);   // past the end
}

TEST(BuddyPlacementTest, RejectsBadSettings) {
  EXPECT_THROW(BuddyPlacement(0, 16, 128), AllocatorError);
  EXPECT_THROW(BuddyPlacement(-16, 16, 128), AllocatorError);
  EXPECT_THROW(BuddyPlacement(960, 12, 128), AllocatorError);
  EXPECT_THROW(BuddyPlacement(960, 0, 128), AllocatorError);
  EXPECT_THROW(BuddyPlacement(960, 16, 100), AllocatorError);
  EXPECT_THROW(BuddyPlacement(960, 16, 0), AllocatorError);
  EXPECT_THROW(BuddyPlacement(1000, 16, 128), AllocatorError);  // not whole blocks
}

}  // namespace
}  // namespace pagesim::alloc
