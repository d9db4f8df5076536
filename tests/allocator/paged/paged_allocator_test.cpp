// Hand-computed cases for PagedAllocator: block tables, copy-on-write, swapping,
// accounting, and misuse.
#include "allocator/paged/paged_allocator.h"

#include <gtest/gtest.h>

#include <vector>

namespace pagesim::alloc {
namespace {

AdmitRequest req(SeqId id, std::int64_t prompt, std::int64_t output = 100) {
  AdmitRequest r;
  r.seq = id;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

PagedAllocator make(std::int64_t blocks, std::int32_t bs = 16, std::int64_t cpu = 0) {
  PagedAllocatorSettings s;
  s.num_blocks = blocks;
  s.block_size = bs;
  s.num_cpu_blocks = cpu;
  return PagedAllocator(s);
}

TEST(PagedAllocator, AdmitTakesCeilBlocksAndCountsRounding) {
  PagedAllocator a = make(10);
  ASSERT_TRUE(a.admit(req(1, 20)).admitted);
  EXPECT_EQ(a.block_table(1).size(), 2u);
  EXPECT_EQ(a.num_free_blocks(), 8);
  MemoryBreakdown b = a.breakdown();
  EXPECT_EQ(b.token_states, 20);
  EXPECT_EQ(b.reserved, 0);
  EXPECT_EQ(b.over_reserved, 0);
  EXPECT_EQ(b.rounding, 12);  // 32 allocated - 20 tokens
  EXPECT_EQ(b.free, 8 * 16);
  EXPECT_EQ(b.total(), a.capacity_slots());
  a.validate();
}

TEST(PagedAllocator, AppendFillsLastBlockBeforeTakingANewOne) {
  PagedAllocator a = make(10);
  ASSERT_TRUE(a.admit(req(1, 20)).admitted);
  EXPECT_EQ(a.blocks_to_append(1, 12), 0);
  ASSERT_TRUE(a.append(1, 12));
  EXPECT_EQ(a.block_table(1).size(), 2u);
  EXPECT_EQ(a.blocks_to_append(1, 1), 1);
  ASSERT_TRUE(a.append(1, 1));
  EXPECT_EQ(a.block_table(1).size(), 3u);
  EXPECT_EQ(a.breakdown().rounding, 15);
  a.validate();
}

TEST(PagedAllocator, BlocksAreHandedOutLowestFirstThenLifo) {
  PagedAllocator a = make(4);
  ASSERT_TRUE(a.admit(req(1, 16)).admitted);
  ASSERT_TRUE(a.admit(req(2, 16)).admitted);
  EXPECT_EQ(a.block_table(1)[0], 0);
  EXPECT_EQ(a.block_table(2)[0], 1);
  a.free(1);
  ASSERT_TRUE(a.admit(req(3, 16)).admitted);
  EXPECT_EQ(a.block_table(3)[0], 0);
}

TEST(PagedAllocator, AppendFailsWithoutChangeWhenPoolIsFull) {
  PagedAllocator a = make(2);
  ASSERT_TRUE(a.admit(req(1, 32)).admitted);
  EXPECT_FALSE(a.can_append(1, 1));
  EXPECT_FALSE(a.append(1, 1));
  EXPECT_EQ(a.sequence_tokens(1), 32);
  EXPECT_FALSE(a.admit(req(2, 1)).admitted);
  EXPECT_FALSE(a.contains(2));
  a.validate();
}

TEST(PagedAllocator, ForkSharesEveryBlockAndCowCopiesExactlyOne) {
  PagedAllocator a = make(10);
  ASSERT_TRUE(a.admit(req(1, 20)).admitted);  // blocks: 16 full + 4
  ASSERT_TRUE(a.fork(1, 2));
  EXPECT_EQ(a.stats().physical_blocks, 2);
  EXPECT_EQ(a.stats().logical_blocks, 4);
  EXPECT_EQ(a.breakdown().token_states, 20);  // shared blocks count once
  const std::vector<BlockId> parent = a.block_table(1);

  EXPECT_EQ(a.blocks_to_append(2, 1), 1);
  ASSERT_TRUE(a.append(2, 1));
  auto copies = a.take_pending_copies();
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].src, parent[1]);
  EXPECT_EQ(copies[0].dst, a.block_table(2)[1]);
  EXPECT_EQ(a.block_table(2)[0], parent[0]);  // the full block stays shared
  EXPECT_TRUE(a.take_pending_copies().empty());
  // Parent now owns its last block alone: no copy on its write.
  ASSERT_TRUE(a.append(1, 1));
  EXPECT_TRUE(a.take_pending_copies().empty());
  EXPECT_EQ(a.breakdown().token_states, 16 + 5 + 5);
  EXPECT_EQ(a.stats().physical_blocks, 3);
  a.validate();
}

// Without a prefix cache the pool writes no entry for a sequence's blocks until something
// shares, swaps or rewinds one: the first fork (or swap) writes them all from the tables. The
// blocks reused here come back with entries their last owners left (take_unwritten), so a
// fill or reference count that keep_entries did not write fails validate(), and a
// copy-on-write copies the fill the table gives.
TEST(PagedAllocator, EntriesWrittenFromTheTablesWhenAForkFirstSharesABlock) {
  PagedAllocator a = make(10);
  ASSERT_TRUE(a.admit(req(1, 40)).admitted);  // blocks 0, 1, 2 (never used: entries {1, 0})
  ASSERT_TRUE(a.append(1, 30));               // 70 tokens: 5 blocks, the last with 6
  ASSERT_TRUE(a.admit(req(2, 7)).admitted);
  a.validate();
  a.free(1);                                  // back without reading or writing an entry
  ASSERT_TRUE(a.admit(req(3, 20)).admitted);  // reuses two of 1's blocks, entries unwritten
  const std::vector<SeqHandle> run{a.handle(2), a.handle(3)};
  a.grow_rounds(run, 13);                     // 20 and 33 tokens
  ASSERT_TRUE(a.grow(a.handle(3), 1));
  a.validate();
  ASSERT_TRUE(a.fork(3, 4));                  // 34 tokens in 3 blocks, now shared
  a.validate();                               // reads every entry keep_entries wrote
  ASSERT_TRUE(a.append(4, 1));                // copy-on-write of the last block (2 tokens)
  EXPECT_EQ(a.take_pending_copies().size(), 1u);
  EXPECT_EQ(a.breakdown().token_states, 20 + 34 + 3);
  a.validate();
  a.free(3);
  a.free(4);
  ASSERT_TRUE(a.admit(req(5, 50)).admitted);  // entries kept from here on
  EXPECT_EQ(a.breakdown().token_states, 20 + 50);
  a.validate();
}

TEST(PagedAllocator, EntriesWrittenFromTheTablesWhenASwapFirstMovesABlock) {
  PagedAllocator a = make(8, 16, 8);
  ASSERT_TRUE(a.admit(req(1, 30)).admitted);
  a.free(1);
  ASSERT_TRUE(a.admit(req(2, 19)).admitted);  // 1's blocks, entries unwritten
  ASSERT_TRUE(a.append(2, 2));                // 21 tokens: 16 + 5
  std::vector<SeqId> group{2};
  ASSERT_TRUE(a.swap_out(group).has_value());
  a.validate();  // the CPU blocks hold the fills the table gave
  ASSERT_TRUE(a.swap_in(group).has_value());
  EXPECT_EQ(a.breakdown().token_states, 21);
  ASSERT_TRUE(a.append(2, 11));               // fills the last block: 32 tokens, no new block
  EXPECT_EQ(a.block_table(2).size(), 2u);
  a.validate();
}

// The scheduler's per-token path: grow(handle, 1) gives what append(id, 1) gives, across
// a block boundary and a copy-on-write, and the handle outlives a swap.
TEST(PagedAllocator, GrowByHandleIsAppendWithoutTheLookup) {
  PagedAllocator a = make(10, 16, 4);
  ASSERT_TRUE(a.admit(req(1, 14)).admitted);
  const SeqHandle h = a.handle(1);
  EXPECT_EQ(h.id, 1u);
  EXPECT_NE(h.slot, SeqHandle::kNoSlot);
  ASSERT_TRUE(a.grow(h, 1));
  ASSERT_TRUE(a.grow(h, 1));  // fills block 0
  EXPECT_EQ(a.block_table(1).size(), 1u);
  ASSERT_TRUE(a.grow(h, 1));  // a new block
  EXPECT_EQ(a.block_table(1).size(), 2u);
  EXPECT_EQ(a.sequence_tokens(1), 17);
  a.validate();

  ASSERT_TRUE(a.fork(1, 2));  // shares the partly filled block 1
  const SeqHandle c = a.handle(2);
  EXPECT_NE(c.slot, h.slot);
  ASSERT_TRUE(a.grow(c, 1));  // copy-on-write
  EXPECT_EQ(a.take_pending_copies().size(), 1u);
  ASSERT_TRUE(a.grow(h, 1));  // the parent's block is its own again: no copy
  EXPECT_TRUE(a.take_pending_copies().empty());
  EXPECT_EQ(a.breakdown().token_states, 16 + 2 + 2);
  a.validate();

  std::vector<SeqId> g{1};
  ASSERT_TRUE(a.swap_out(g).has_value());
  EXPECT_THROW(a.grow(h, 1), AllocatorError);  // swapped out, as append(1, 1)
  ASSERT_TRUE(a.swap_in(g).has_value());
  EXPECT_EQ(a.handle(1), h);
  ASSERT_TRUE(a.grow(h, 1));
  EXPECT_EQ(a.sequence_tokens(1), 19);
  a.validate();
}

TEST(PagedAllocator, GrowFailsWithoutChangeWhenPoolIsFull) {
  PagedAllocator a = make(2);
  ASSERT_TRUE(a.admit(req(1, 31)).admitted);
  const SeqHandle h = a.handle(1);
  ASSERT_TRUE(a.grow(h, 1));
  EXPECT_FALSE(a.grow(h, 1));
  EXPECT_EQ(a.sequence_tokens(1), 32);
  std::vector<SeqHandle> group{h};
  EXPECT_FALSE(a.can_append_all(group, 1));
  EXPECT_TRUE(a.can_append_all(group, 0));
  a.validate();
}

TEST(PagedAllocator, ForkAtBlockBoundaryNeedsNoCopy) {
  PagedAllocator a = make(10);
  ASSERT_TRUE(a.admit(req(1, 32)).admitted);
  ASSERT_TRUE(a.fork(1, 2));
  ASSERT_TRUE(a.append(2, 1));
  EXPECT_TRUE(a.take_pending_copies().empty());
  EXPECT_EQ(a.stats().physical_blocks, 3);
  a.validate();
}

TEST(PagedAllocator, FreeingSharedBlocksKeepsThemForTheOtherOwner) {
  PagedAllocator a = make(10);
  ASSERT_TRUE(a.admit(req(1, 20)).admitted);
  ASSERT_TRUE(a.fork(1, 2));
  a.free(1);
  EXPECT_EQ(a.stats().physical_blocks, 2);
  EXPECT_EQ(a.breakdown().token_states, 20);
  a.free(2);
  EXPECT_EQ(a.num_free_blocks(), 10);
  EXPECT_EQ(a.breakdown().free, 160);
  a.validate();
}

TEST(PagedAllocator, SwapOutMovesSharedBlocksOnceAndSwapInRestores) {
  PagedAllocator a = make(8, 16, 8);
  ASSERT_TRUE(a.admit(req(1, 40)).admitted);  // 3 blocks
  ASSERT_TRUE(a.fork(1, 2));
  ASSERT_TRUE(a.append(2, 1));  // CoW of the last block: 4 distinct blocks
  a.take_pending_copies();
  std::vector<SeqId> group{1, 2};
  auto out = a.swap_out(group);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->size(), 4u);
  EXPECT_EQ(a.num_free_blocks(), 8);
  EXPECT_EQ(a.num_free_cpu_blocks(), 4);
  EXPECT_TRUE(a.is_swapped(1));
  EXPECT_EQ(a.breakdown().token_states, 0);
  a.validate();
  EXPECT_EQ(a.blocks_to_swap_in(group), 4);
  auto in = a.swap_in(group);
  ASSERT_TRUE(in.has_value());
  EXPECT_EQ(in->size(), 4u);
  EXPECT_EQ(a.num_free_cpu_blocks(), 8);
  EXPECT_EQ(a.sequence_tokens(2), 41);
  EXPECT_EQ(a.block_table(1)[0], a.block_table(2)[0]);  // still shared after the round trip
  EXPECT_EQ(a.breakdown().token_states, 32 + 8 + 9);
  a.validate();
}

TEST(PagedAllocator, SwapOutFailsWithoutChangeWhenCpuPoolIsFull) {
  PagedAllocator a = make(8, 16, 2);
  ASSERT_TRUE(a.admit(req(1, 40)).admitted);
  std::vector<SeqId> group{1};
  EXPECT_FALSE(a.swap_out(group).has_value());
  EXPECT_FALSE(a.is_swapped(1));
  EXPECT_EQ(a.num_free_cpu_blocks(), 2);
  a.validate();
}

TEST(PagedAllocator, FreeOfSwappedSequenceReleasesCpuBlocks) {
  PagedAllocator a = make(8, 16, 8);
  ASSERT_TRUE(a.admit(req(1, 40)).admitted);
  std::vector<SeqId> group{1};
  ASSERT_TRUE(a.swap_out(group).has_value());
  a.free(1);
  EXPECT_EQ(a.num_free_cpu_blocks(), 8);
  a.validate();
}

TEST(PagedAllocator, RecomputeReadmissionHoldsPromptPlusGenerated) {
  PagedAllocator a = make(8);
  AdmitRequest r = req(1, 20, 50);
  r.generated_tokens = 13;
  ASSERT_TRUE(a.admit(r).admitted);
  EXPECT_EQ(a.sequence_tokens(1), 33);
  EXPECT_EQ(a.block_table(1).size(), 3u);
}

TEST(PagedAllocator, CanEverAdmitComparesFinalLengthWithThePool) {
  PagedAllocator a = make(4);
  EXPECT_TRUE(a.can_ever_admit(req(1, 32, 32)));
  EXPECT_FALSE(a.can_ever_admit(req(1, 32, 33)));
  EXPECT_EQ(a.limiting_setting(req(1, 32, 33)), "capacity_slots");  // only the pool limits it
}

TEST(PagedAllocatorMisuse, BadSettingsAreErrors) {
  EXPECT_THROW(make(0), AllocatorError);
  EXPECT_THROW(make(-5), AllocatorError);
  EXPECT_THROW(make(10, 12), AllocatorError);
  EXPECT_THROW(make(10, 0), AllocatorError);
  EXPECT_THROW(make(10, 16, -1), AllocatorError);
  try {
    make(10, 12);
  } catch (const AllocatorError& e) {
    EXPECT_NE(std::string(e.what()).find("block_size must be a power of two, got 12"), std::string::npos);
  }
}

TEST(PagedAllocatorMisuse, UnknownDuplicateAndDoubleFreeAreErrors) {
  PagedAllocator a = make(8);
  EXPECT_THROW(a.append(7, 1), AllocatorError);
  EXPECT_THROW(a.free(7), AllocatorError);
  EXPECT_THROW(a.fork(7, 8), AllocatorError);
  EXPECT_THROW(a.sequence_tokens(7), AllocatorError);
  ASSERT_TRUE(a.admit(req(1, 4)).admitted);
  EXPECT_THROW(a.admit(req(1, 4)), AllocatorError);
  EXPECT_THROW(a.fork(1, 1), AllocatorError);
  EXPECT_THROW(a.append(1, -1), AllocatorError);
  const SeqHandle h = a.handle(1);
  a.free(1);
  EXPECT_THROW(a.free(1), AllocatorError);
  EXPECT_THROW(a.grow(h, 1), AllocatorError);  // the handle of a freed sequence
  EXPECT_THROW(a.handle(1), AllocatorError);
  ASSERT_TRUE(a.admit(req(3, 4)).admitted);    // takes the freed slot
  EXPECT_THROW(a.grow(h, 1), AllocatorError);  // which no longer holds sequence 1
  EXPECT_EQ(a.sequence_tokens(3), 4);
  a.free(3);
  EXPECT_THROW(a.admit(req(2, 0)), AllocatorError);
  EXPECT_THROW(a.admit(req(2, 5, -1)), AllocatorError);
  a.validate();
}

TEST(PagedAllocatorMisuse, SwappedSequencesCannotGrowOrFork) {
  PagedAllocator a = make(8, 16, 8);
  ASSERT_TRUE(a.admit(req(1, 4)).admitted);
  std::vector<SeqId> g{1};
  ASSERT_TRUE(a.swap_out(g).has_value());
  EXPECT_THROW(a.append(1, 1), AllocatorError);
  EXPECT_THROW(a.fork(1, 2), AllocatorError);
  EXPECT_THROW(a.swap_out(g), AllocatorError);
  ASSERT_TRUE(a.swap_in(g).has_value());
  EXPECT_THROW(a.swap_in(g), AllocatorError);
}

}  // namespace
}  // namespace pagesim::alloc
