// Hand-computed cases for VattentionAllocator: pages mapped at admission and growth, unmapping
// at free, deferred reclamation (reuse, best fit, reclaim on demand), the slot limit, failures
// that change nothing, the block-table view, forks, accounting in bytes, and misuse.
#include "allocator/vattention/vattention_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace pagesim::alloc {
namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kPage = 4 * kKiB;  // 4 tokens per page below

// 2 layers, 1 KiB per buffer and token: 4 buffers, each 4 tokens a page. A request of n
// tokens maps 4 × ceil(n / 4) pages.
LayerGroups two_layers() {
  return {LayerGroup{.kind = LayerGroupKind::kFull, .layers = 2, .kv_bytes_per_token = 4 * kKiB}};
}

VattentionSettings settings(std::int64_t pages, bool deferred, std::int64_t slots = 4,
                            LayerGroups groups = two_layers()) {
  VattentionSettings s;
  s.groups = std::move(groups);
  s.pool_bytes = pages * kPage;
  s.page_bytes = kPage;
  s.max_batch_size = slots;
  s.max_seq_len = 64;
  s.deferred_reclamation = deferred;
  return s;
}

AdmitRequest req(SeqId id, std::int64_t prompt, std::int64_t output = 1) {
  AdmitRequest r;
  r.seq = id;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

TEST(VattentionAllocator, AdmitMapsCeilBytesOverPagePerBufferAndCountsRoundingInBytes) {
  VattentionAllocator a(settings(40, false));
  EXPECT_EQ(a.capacity_slots(), 40 * kPage);
  ASSERT_TRUE(a.admit(req(1, 10)).admitted);
  EXPECT_EQ(a.slot_pages_per_buffer(a.slot_of(1), 0), 3);  // ceil(10 KiB / 4 KiB)
  EXPECT_EQ(a.mapped_pages(), 12);
  EXPECT_EQ(a.free_pages(), 28);
  const MemoryBreakdown b = a.breakdown();
  EXPECT_EQ(b.token_states, 10 * 4 * kKiB);
  EXPECT_EQ(b.rounding, 12 * kPage - 10 * 4 * kKiB);  // 2 tokens' room in each of 4 buffers
  EXPECT_EQ(b.reserved + b.over_reserved + b.out_of_window + b.recurrent_state + b.unused_layers, 0);
  EXPECT_EQ(b.free, 28 * kPage);
  EXPECT_EQ(b.cached_free, 0);
  EXPECT_EQ(b.total(), a.capacity_slots());
  EXPECT_EQ(a.counters().pages_mapped, 12);
  a.validate();
}

TEST(VattentionAllocator, GrowthAcrossAPageBoundaryMapsExactlyOnePagePerBuffer) {
  VattentionAllocator a(settings(40, false));
  ASSERT_TRUE(a.admit(req(1, 10)).admitted);
  ASSERT_TRUE(a.append(1, 2));  // 12 tokens: the third pages are full
  EXPECT_EQ(a.mapped_pages(), 12);
  EXPECT_EQ(a.breakdown().rounding, 0);
  ASSERT_TRUE(a.append(1, 1));  // token 13 opens a fourth page in each buffer
  EXPECT_EQ(a.mapped_pages(), 16);
  EXPECT_EQ(a.slot_pages_per_buffer(a.slot_of(1), 0), 4);
  EXPECT_EQ(a.breakdown().rounding, 4 * 3 * kKiB);
  EXPECT_EQ(a.counters().pages_mapped, 16);
  a.validate();
}

TEST(VattentionAllocator, FreeUnmapsEverythingWithoutDeferredReclamation) {
  VattentionAllocator a(settings(40, false));
  ASSERT_TRUE(a.admit(req(1, 13)).admitted);
  a.free(1);
  EXPECT_EQ(a.mapped_pages(), 0);
  EXPECT_EQ(a.counters().pages_unmapped, 16);
  EXPECT_EQ(a.breakdown().free, a.capacity_slots());
  EXPECT_EQ(a.breakdown().cached_free, 0);
  EXPECT_FALSE(a.contains(1));
  a.validate();
}

TEST(VattentionAllocator, DeferredReclamationKeepsPagesForTheNextRequestInTheSlot) {
  VattentionAllocator a(settings(40, true));
  ASSERT_TRUE(a.admit(req(1, 13)).admitted);  // 16 pages
  a.free(1);
  EXPECT_EQ(a.mapped_pages(), 16);  // still mapped, in slot 0
  MemoryBreakdown b = a.breakdown();
  EXPECT_EQ(b.free, a.capacity_slots());  // reclaimable at any time: free
  EXPECT_EQ(b.cached_free, 16 * kPage);
  EXPECT_EQ(a.counters().pages_unmapped, 0);
  // A 5-token request needs 2 pages per buffer: it takes the retained slot and maps nothing.
  ASSERT_TRUE(a.admit(req(2, 5)).admitted);
  EXPECT_EQ(a.slot_of(2), 0);
  EXPECT_EQ(a.counters().pages_mapped, 16);
  EXPECT_EQ(a.counters().pages_reused, 8);
  b = a.breakdown();
  EXPECT_EQ(b.token_states, 5 * 4 * kKiB);
  EXPECT_EQ(b.rounding, 8 * kPage - 5 * 4 * kKiB);
  EXPECT_EQ(b.cached_free, 8 * kPage);  // the slot's 3rd and 4th pages, beyond its need
  EXPECT_EQ(b.total(), a.capacity_slots());
  // Growing into the retained pages maps nothing either.
  ASSERT_TRUE(a.append(2, 8));  // 13 tokens: 4 pages per buffer, all retained
  EXPECT_EQ(a.counters().pages_mapped, 16);
  EXPECT_EQ(a.breakdown().cached_free, 0);
  a.validate();
}

TEST(VattentionAllocator, ANewRequestTakesTheSmallestRetainedSlotThatCoversIt) {
  VattentionAllocator a(settings(40, true));
  ASSERT_TRUE(a.admit(req(1, 13)).admitted);  // slot 0: 4 pages per buffer
  ASSERT_TRUE(a.admit(req(2, 5)).admitted);   // slot 1: 2 pages per buffer
  ASSERT_TRUE(a.admit(req(3, 9)).admitted);   // slot 2: 3 pages per buffer
  a.free(1);
  a.free(2);
  a.free(3);
  ASSERT_TRUE(a.admit(req(4, 6)).admitted);   // needs 2: slot 1 is the tightest fit
  EXPECT_EQ(a.slot_of(4), 1);
  ASSERT_TRUE(a.admit(req(5, 10)).admitted);  // needs 3: slot 2 (3) beats slot 0 (4)
  EXPECT_EQ(a.slot_of(5), 2);
  ASSERT_TRUE(a.admit(req(6, 20)).admitted);  // needs 5: none covers, slot 0 retains the most
  EXPECT_EQ(a.slot_of(6), 0);
  EXPECT_EQ(a.counters().pages_reused, 8 + 12 + 16);
  a.validate();
}

TEST(VattentionAllocator, RetainedPagesAreReclaimedOnDemandFromTheHighestSlot) {
  VattentionAllocator a(settings(24, true));
  ASSERT_TRUE(a.admit(req(1, 8)).admitted);   // slot 0: 8 pages
  ASSERT_TRUE(a.admit(req(2, 8)).admitted);   // slot 1: 8 pages
  ASSERT_TRUE(a.admit(req(3, 8)).admitted);   // slot 2: 8 pages; pool full
  EXPECT_EQ(a.free_pages(), 0);
  a.free(1);
  a.free(3);
  // 16 retained pages, all reclaimable: a request of 16 tokens (16 pages) fits. It goes to a
  // retained slot (0 and 2 tie at 8; the lowest wins), takes its 8 pages and reclaims the
  // missing 8 from slot 2, the highest slot with pages to spare.
  ASSERT_TRUE(a.can_admit(req(4, 16)));
  ASSERT_TRUE(a.admit(req(4, 16)).admitted);
  EXPECT_EQ(a.slot_of(4), 0);
  EXPECT_EQ(a.slot_pages_per_buffer(2, 0), 0);
  EXPECT_EQ(a.counters().pages_unmapped, 8);
  EXPECT_EQ(a.free_pages(), 0);
  EXPECT_EQ(a.breakdown().cached_free, 0);
  a.validate();
}

TEST(VattentionAllocator, AdmissionFailsWhenEverySlotIsTakenAndNothingChanges) {
  VattentionAllocator a(settings(40, false, 2));
  ASSERT_TRUE(a.admit(req(1, 1)).admitted);
  ASSERT_TRUE(a.admit(req(2, 1)).admitted);
  const MemoryBreakdown before = a.breakdown();
  EXPECT_TRUE(a.can_ever_admit(req(3, 1, 4)));
  EXPECT_FALSE(a.can_admit(req(3, 1)));
  EXPECT_FALSE(a.admit(req(3, 1)).admitted);
  EXPECT_FALSE(a.fork(1, 3));
  EXPECT_FALSE(a.contains(3));
  EXPECT_EQ(a.breakdown(), before);
  a.free(2);
  EXPECT_TRUE(a.admit(req(3, 1)).admitted);
  a.validate();
}

TEST(VattentionAllocator, AdmitAndAppendFailWithoutChangeWhenNoPageCanBeMapped) {
  VattentionAllocator a(settings(8, false));
  ASSERT_TRUE(a.admit(req(1, 8)).admitted);  // all 8 pages
  const MemoryBreakdown before = a.breakdown();
  EXPECT_FALSE(a.can_append(1, 1));
  EXPECT_FALSE(a.append(1, 1));
  EXPECT_EQ(a.sequence_tokens(1), 8);
  EXPECT_FALSE(a.admit(req(2, 1)).admitted);
  EXPECT_FALSE(a.contains(2));
  EXPECT_EQ(a.breakdown(), before);
  EXPECT_EQ(a.counters().pages_mapped, 8);
  a.validate();
}

TEST(VattentionAllocator, ARowHoldsMaxSeqLenTokens) {
  VattentionAllocator a(settings(100, false));
  EXPECT_FALSE(a.can_ever_admit(req(1, 65)));
  EXPECT_EQ(a.limiting_setting(req(1, 65)), "max_seq_len");
  EXPECT_FALSE(a.admit(req(1, 65)).admitted);
  // A prompt that fits but whose output would run past the row: never admitted, since it
  // could neither grow there nor come back once preempted (vllm-v1 stalled on it).
  EXPECT_FALSE(a.can_ever_admit(req(1, 60, 6)));
  EXPECT_EQ(a.limiting_setting(req(1, 60, 6)), "max_seq_len");
  EXPECT_TRUE(a.can_ever_admit(req(1, 60, 5)));  // its last token's KV is never stored
  ASSERT_TRUE(a.admit(req(1, 60, 5)).admitted);
  EXPECT_TRUE(a.can_append(1, 4));
  EXPECT_FALSE(a.can_append(1, 5));
  EXPECT_FALSE(a.append(1, 5));
  EXPECT_TRUE(a.append(1, 4));
  // A request that fits a row but not the pool: 64 tokens = 64 pages of a 40-page pool.
  VattentionAllocator small(settings(40, false));
  EXPECT_FALSE(small.can_ever_admit(req(2, 64, 1)));
  EXPECT_EQ(small.limiting_setting(req(2, 64, 1)), "pool_bytes");
  EXPECT_EQ(small.unusable_free(req(2, 64, 1)), small.capacity_slots());
  EXPECT_EQ(small.unusable_free(req(2, 4)), 0);
}

TEST(VattentionAllocator, CanAppendAllCountsTheGroupsPagesTogether) {
  VattentionAllocator a(settings(20, false));
  ASSERT_TRUE(a.admit(req(1, 4)).admitted);  // 4 pages each
  ASSERT_TRUE(a.admit(req(2, 4)).admitted);
  const std::vector<SeqHandle> both{a.handle(1), a.handle(2)};
  EXPECT_TRUE(a.can_append_all(both, 4));   // 4 + 4 more pages: 16 <= 20
  EXPECT_FALSE(a.can_append_all(both, 5));  // 8 + 8 more: 24 > 20
  EXPECT_TRUE(a.can_append(1, 5));          // alone: 12 + 4 = 16
}

TEST(VattentionAllocator, BlockTableIsTheContiguousVirtualRow) {
  VattentionAllocator a(settings(40, false));
  ASSERT_TRUE(a.admit(req(1, 3)).admitted);  // slot 0
  ASSERT_TRUE(a.admit(req(2, 5)).admitted);  // slot 1: tokens at 64..68
  EXPECT_EQ(a.block_size(), 1);
  EXPECT_EQ(a.block_table(1), (std::vector<BlockId>{0, 1, 2}));
  EXPECT_EQ(a.block_table(2), (std::vector<BlockId>{64, 65, 66, 67, 68}));
  EXPECT_EQ(a.virtual_tokens(), 4 * 64);
}

TEST(VattentionAllocator, ForkCopiesTheParentIntoASlotOfItsOwn) {
  VattentionAllocator a(settings(40, false));
  ASSERT_TRUE(a.admit(req(1, 6, 9)).admitted);
  ASSERT_TRUE(a.fork(1, 2));
  EXPECT_EQ(a.slot_of(2), 1);
  EXPECT_EQ(a.sequence_tokens(2), 6);
  EXPECT_EQ(a.mapped_pages(), 16);  // 8 each: no page is shared
  EXPECT_EQ(a.breakdown().token_states, 2 * 6 * 4 * kKiB);
  EXPECT_TRUE(a.take_pending_copies().empty());
  // width × the pages of final - 1 = 14 tokens (4 per buffer): 3 × 16 pages.
  EXPECT_EQ(a.max_group_slots(req(9, 6, 9), 3), 3 * 16 * kPage);
  a.validate();
}

TEST(VattentionAllocator, HeterogeneousGroupsMapAndClassifyPerGroup) {
  // Full (1 layer, 1 KiB per buffer), sliding window of 8 (1 layer) and a recurrent layer of
  // 5,000 B state: 10 tokens map 2 × 3 + 2 × 3 + 2 = 14 pages.
  const LayerGroups groups{
      {.kind = LayerGroupKind::kFull, .layers = 1, .kv_bytes_per_token = 2 * kKiB},
      {.kind = LayerGroupKind::kSlidingWindow, .layers = 1, .kv_bytes_per_token = 2 * kKiB, .window_tokens = 8},
      {.kind = LayerGroupKind::kRecurrent, .layers = 1, .state_bytes = 5000},
  };
  VattentionAllocator a(settings(40, false, 4, groups));
  ASSERT_TRUE(a.admit(req(1, 10)).admitted);
  EXPECT_EQ(a.mapped_pages(), 14);
  EXPECT_EQ(a.slot_pages_per_buffer(0, 0), 3);
  EXPECT_EQ(a.slot_pages_per_buffer(0, 1), 3);
  EXPECT_EQ(a.slot_pages_per_buffer(0, 2), 2);
  const MemoryBreakdown b = a.breakdown();
  EXPECT_EQ(b.token_states, 10 * 2 * kKiB + 7 * 2 * kKiB);
  EXPECT_EQ(b.out_of_window, 3 * 2 * kKiB);
  EXPECT_EQ(b.recurrent_state, 5000);
  EXPECT_EQ(b.rounding, 14 * kPage - 20 * 2 * kKiB - 5000);
  EXPECT_EQ(b.total(), a.capacity_slots());
  // Three more tokens open a fourth page in each token buffer; the recurrent state stays.
  ASSERT_TRUE(a.append(1, 3));  // 13 tokens: 4 pages in each token buffer
  EXPECT_EQ(a.mapped_pages(), 18);
  EXPECT_EQ(a.breakdown().out_of_window, 6 * 2 * kKiB);
  a.validate();
}

TEST(VattentionAllocator, NameAndSettingsErrors) {
  EXPECT_EQ(VattentionAllocator(settings(8, true)).name(), "vattention(page=4KiB,slots=4)");
  EXPECT_EQ(VattentionAllocator(settings(8, false)).name(), "vattention(page=4KiB,slots=4,reclaim=immediate)");
  VattentionSettings s = settings(8, true);
  s.pool_bytes = kPage - 1;
  EXPECT_THROW(VattentionAllocator{s}, AllocatorError);
  s = settings(8, true, 0);
  EXPECT_THROW(VattentionAllocator{s}, AllocatorError);
  s = settings(8, true);
  s.max_batch_size = (std::int64_t{1} << 31) / 64;  // ids would pass 2^31 - 1
  EXPECT_THROW(VattentionAllocator{s}, AllocatorError);
  s.groups.clear();
  s.max_batch_size = 4;
  EXPECT_THROW(VattentionAllocator{s}, AllocatorError);
}

TEST(VattentionAllocator, MisuseThrowsAndChangesNothing) {
  VattentionAllocator a(settings(40, false));
  ASSERT_TRUE(a.admit(req(1, 3)).admitted);
  const MemoryBreakdown before = a.breakdown();
  EXPECT_THROW(a.admit(req(1, 3)), AllocatorError);
  EXPECT_THROW(a.append(7, 1), AllocatorError);
  EXPECT_THROW(a.append(1, -1), AllocatorError);
  EXPECT_THROW(a.fork(7, 8), AllocatorError);
  EXPECT_THROW(a.fork(1, 1), AllocatorError);
  EXPECT_THROW(a.free(7), AllocatorError);
  EXPECT_THROW(a.block_table(7), AllocatorError);
  EXPECT_THROW(a.admit(req(2, 0)), AllocatorError);
  EXPECT_EQ(a.breakdown(), before);
  a.free(1);
  EXPECT_THROW(a.free(1), AllocatorError);
  a.validate();
}

}  // namespace
}  // namespace pagesim::alloc
