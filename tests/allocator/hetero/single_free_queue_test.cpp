// GroupedKvAllocator with single_free_queue (vLLM v1's FreeKVCacheBlockQueue over the layer-group
// pool): on a single-group model uniform, hybrid and jenga are PagedAllocator with its option
// of that name, operation for operation (random operations in lockstep: the same results,
// block tables, statistics and breakdown); on a multi-group hybrid pool the one queue spans
// the tables; jenga with pages of several sizes refuses it, and make_grouped_allocator leaves
// it out there.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <random>
#include <vector>

#include "allocator/allocator_error.h"
#include "allocator/hetero/grouped_kv_allocator.h"
#include "allocator/hetero/kv_layout.h"
#include "allocator/make_allocator.h"
#include "allocator/paged/paged_allocator.h"
#include "document_hashes.h"
#include "hashed_request.h"

namespace pagesim::alloc {
namespace {

using Layout = KvLayout (*)(const LayerGroups&, std::int64_t, std::int32_t);

LayerGroup full(std::int32_t layers, std::int64_t per_layer) {
  return {.kind = LayerGroupKind::kFull, .layers = layers, .kv_bytes_per_token = layers * per_layer};
}
LayerGroup sliding(std::int32_t layers, std::int64_t per_layer, std::int64_t w) {
  return {.kind = LayerGroupKind::kSlidingWindow, .layers = layers, .kv_bytes_per_token = layers * per_layer,
          .window_tokens = w};
}

// One group of 2 layers, 8 bytes per layer and token: 16 bytes per token slot.
constexpr std::int64_t kTokenBytes = 16;
const LayerGroups kOneGroup = {full(2, 8)};

PagedAllocator paged(std::int64_t blocks, std::int32_t block, EvictionKind eviction) {
  PagedAllocatorSettings s;
  s.num_blocks = blocks;
  s.block_size = block;
  s.prefix_cache = true;
  s.eviction = eviction;
  s.single_free_queue = true;
  return PagedAllocator(s);
}

GroupedKvAllocator grouped(Layout layout, const LayerGroups& g, std::int64_t pool_bytes, std::int32_t block,
                           EvictionKind eviction, bool single_queue = true) {
  return GroupedKvAllocator(g, layout(g, pool_bytes, block), true, eviction, single_queue);
}

AdmitRequest req(SeqId id, std::int64_t prompt, const std::vector<BlockHash>& h) {
  return test_support::hashed_request(id, prompt, h, /*output=*/4);
}

// The paged allocator's hand-computed case (paged/single_free_queue_test.cpp) on each
// layer-group layout of a single-group model: A (hashes 11 12) takes pages 0 1, C pages 2 3;
// both freed, the queue is 1 0 3 2 (each request last page first). D takes page 1, evicting
// hash 12 although 2 and 3 hold nothing cached; E hits page 0 only and takes page 3.
TEST(GroupedSingleFreeQueue, LeastRecentlyReleasedGoesFirstCachedOrNot) {
  const std::vector<BlockHash> h = {11, 12};
  for (Layout layout : {uniform_layout, hybrid_layout, jenga_layout}) {
    auto a = grouped(layout, kOneGroup, 4 * 4 * kTokenBytes, 4, EvictionKind::kLru);
    SCOPED_TRACE(a.name());
    ASSERT_TRUE(a.admit(req(1, 8, h)).admitted);
    ASSERT_TRUE(a.admit(req(2, 8, {})).admitted);
    EXPECT_EQ(a.block_table(1), (std::vector<BlockId>{0, 1}));
    EXPECT_EQ(a.block_table(2), (std::vector<BlockId>{2, 3}));
    a.free(1);
    a.free(2);
    a.validate();
    EXPECT_EQ(a.pool().released_large(), 2);
    ASSERT_TRUE(a.admit(req(3, 4, {})).admitted);
    a.validate();
    EXPECT_EQ(a.block_table(3), (std::vector<BlockId>{1}));
    EXPECT_EQ(a.stats().prefix.evictions, 1);
    const AdmitResult e = a.admit(req(4, 8, h));
    ASSERT_TRUE(e.admitted);
    a.validate();
    EXPECT_EQ(e.cached_tokens, 4);
    EXPECT_EQ(a.block_table(4), (std::vector<BlockId>{0, 3}));
    a.free(3);
    a.free(4);
    a.validate();
  }
}

// Without the option the layer-group pool hands out never-cached pages first: D takes page 2
// and E hits both blocks (the paged allocator's default).
TEST(GroupedSingleFreeQueue, WithoutItNeverCachedPagesGoFirst) {
  const std::vector<BlockHash> h = {11, 12};
  auto a = grouped(hybrid_layout, kOneGroup, 4 * 4 * kTokenBytes, 4, EvictionKind::kLru, false);
  ASSERT_TRUE(a.admit(req(1, 8, h)).admitted);
  ASSERT_TRUE(a.admit(req(2, 8, {})).admitted);
  a.free(1);
  a.free(2);
  ASSERT_TRUE(a.admit(req(3, 4, {})).admitted);
  EXPECT_EQ(a.block_table(3), (std::vector<BlockId>{2}));
  EXPECT_EQ(a.stats().prefix.evictions, 0);
  EXPECT_EQ(a.admit(req(4, 8, h)).cached_tokens, 7);
  a.validate();
}

// Hybrid with a full and a sliding group of one layer each: two tables of one page size, one
// queue. A (8 tokens, hashes 11 12) holds pages 0 1 (full table) and 2 3 (sliding table), C
// (4 tokens) pages 4 and 5; freed, the queue is 1 0 3 2 4 5. D (4 tokens) takes a page per
// table: 1 and 0, A's full-table pages, their hashes evicted although 4 and 5 hold nothing
// cached, and 0 moves from the full table to the sliding one. A's prefix is lost: a hit needs
// the full table's pages. Without the queue D takes 5 and 4 and the prefix stays.
TEST(GroupedSingleFreeQueue, OneQueueSpansTheTables) {
  const LayerGroups g = {full(1, 8), sliding(1, 8, 64)};
  const std::vector<BlockHash> h = {11, 12};
  for (bool single : {true, false}) {
    auto a = grouped(hybrid_layout, g, 6 * 4 * 8, 4, EvictionKind::kLru, single);
    SCOPED_TRACE(a.name());
    ASSERT_EQ(a.layout().tables.size(), 2u);
    ASSERT_TRUE(a.admit(req(1, 8, h)).admitted);
    ASSERT_TRUE(a.admit(req(2, 4, {})).admitted);
    EXPECT_EQ(a.table(1, 0), (std::vector<BlockId>{0, 1}));
    EXPECT_EQ(a.table(1, 1), (std::vector<BlockId>{2, 3}));
    EXPECT_EQ(a.table(2, 0), (std::vector<BlockId>{4}));
    EXPECT_EQ(a.table(2, 1), (std::vector<BlockId>{5}));
    a.free(1);
    a.free(2);
    a.validate();
    EXPECT_EQ(a.cached_prefix_tokens(h), 8);
    ASSERT_TRUE(a.admit(req(3, 4, {})).admitted);
    a.validate();
    if (single) {
      EXPECT_EQ(a.table(3, 0), (std::vector<BlockId>{1}));
      EXPECT_EQ(a.table(3, 1), (std::vector<BlockId>{0}));
      EXPECT_EQ(a.stats().prefix.evictions, 2);
      EXPECT_EQ(a.cached_prefix_tokens(h), 0);
    } else {
      EXPECT_EQ(a.table(3, 0), (std::vector<BlockId>{5}));
      EXPECT_EQ(a.table(3, 1), (std::vector<BlockId>{4}));
      EXPECT_EQ(a.stats().prefix.evictions, 0);
      EXPECT_EQ(a.cached_prefix_tokens(h), 8);
    }
  }
}

// jenga with pages of 24 and 48 bytes (large pages of 48) has no single queue; hybrid lays the
// same model out in three tables of 24-byte pages, one queue.
TEST(GroupedSingleFreeQueue, JengaWithPagesOfSeveralSizesHasNone) {
  const LayerGroups g = {full(1, 6), sliding(2, 6, 9)};
  EXPECT_THROW(grouped(jenga_layout, g, 60 * 48, 4, EvictionKind::kLru), AllocatorError);
  AllocatorSpec spec;
  spec.layer_groups = g;
  spec.pool_bytes = 60 * 48;
  spec.block_size = 4;
  spec.prefix_cache = true;
  spec.single_free_queue = true;
  spec.kind = AllocatorKind::kJenga;
  EXPECT_EQ(make_allocator(spec)->name(), "jenga+prefix(block=4,lru,tables=2)");
  spec.kind = AllocatorKind::kHybrid;
  EXPECT_EQ(make_allocator(spec)->name(), "hybrid+prefix(block=4,lru,one-free-queue,tables=3)");
  spec.layer_groups = kOneGroup;
  spec.kind = AllocatorKind::kJenga;
  EXPECT_EQ(make_allocator(spec)->name(), "jenga+prefix(block=4,lru,one-free-queue)");
}

// Random admissions (prompts of a few documents, whole or in chunks, some with whole-block
// hits), appends, forks and frees, applied to a PagedAllocator and a layer-group pool of the
// same single-group model and size, both with the single queue: after every operation the
// same outcome, block tables, statistics and breakdown (bytes = slots x kTokenBytes).
void run_lockstep(Layout layout, EvictionKind eviction, std::uint64_t seed) {
  constexpr std::int64_t kBlocks = 48;
  constexpr std::int32_t kBlock = 4;
  auto p = paged(kBlocks, kBlock, eviction);
  auto g = grouped(layout, kOneGroup, kBlocks * kBlock * kTokenBytes, kBlock, eviction);
  SCOPED_TRACE(g.name());
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  std::map<SeqId, std::vector<BlockHash>> live;  // the hashes outlive the requests
  SeqId next = 1;
  for (int op = 0; op < 20000; ++op) {
    const std::int64_t kind = pick(0, 99);
    auto any = [&] {
      auto it = live.begin();
      std::advance(it, pick(0, static_cast<std::int64_t>(live.size()) - 1));
      return it->first;
    };
    if (live.empty() || kind < 30) {
      const std::int64_t prompt = pick(1, 12 * kBlock);
      auto hashes = test_support::document_block_hashes(pick(0, 4), prompt, kBlock);
      AdmitRequest r = req(next, prompt, {});
      r.output_tokens = pick(0, 20);
      r.max_new_tokens = pick(0, 2) == 0 ? pick(1, 3 * kBlock) : std::numeric_limits<std::int64_t>::max();
      r.whole_block_hits = pick(0, 1) == 1;
      r.prompt_block_hashes = hashes;
      ASSERT_EQ(p.can_admit(r), g.can_admit(r)) << "operation " << op;
      const AdmitResult a = p.admit(r), b = g.admit(r);
      ASSERT_EQ(a.admitted, b.admitted) << "operation " << op;
      ASSERT_EQ(a.cached_tokens, b.cached_tokens) << "operation " << op;
      ASSERT_EQ(a.held_tokens, b.held_tokens) << "operation " << op;
      if (a.admitted) live.emplace(next, std::move(hashes));
      ++next;
    } else if (kind < 75) {
      const SeqId s = any();
      const std::int64_t n = pick(0, 3) == 0 ? pick(1, 3 * kBlock) : 1;
      ASSERT_EQ(p.append(s, n), g.append(s, n)) << "operation " << op;
    } else if (kind < 82) {
      const SeqId s = any();
      ASSERT_EQ(p.fork(s, next), g.fork(s, next)) << "operation " << op;
      live.emplace(next++, std::vector<BlockHash>{});
    } else {
      const SeqId s = any();
      p.free(s);
      g.free(s);
      live.erase(s);
    }
    ASSERT_NO_THROW(g.validate()) << "operation " << op;
    ASSERT_EQ(p.take_pending_copies(), g.take_pending_copies()) << "operation " << op;
    for (const auto& [s, h] : live) ASSERT_EQ(p.block_table(s), g.block_table(s)) << "operation " << op;
    const AllocatorStats sp = p.stats(), sg = g.stats();
    ASSERT_EQ(sp.logical_blocks, sg.logical_blocks) << "operation " << op;
    ASSERT_EQ(sp.physical_blocks, sg.physical_blocks) << "operation " << op;
    ASSERT_EQ(sp.prefix.hit_tokens, sg.prefix.hit_tokens) << "operation " << op;
    ASSERT_EQ(sp.prefix.evictions, sg.prefix.evictions) << "operation " << op;
    MemoryBreakdown bp = p.breakdown();
    for (const auto& f : kMemoryBreakdownFields) bp.*f.member *= kTokenBytes;
    ASSERT_EQ(bp, g.breakdown()) << "operation " << op;
  }
  p.validate();
  EXPECT_GT(p.stats().prefix.hit_tokens, 0);
  EXPECT_GT(p.stats().prefix.evictions, 100);
}

TEST(GroupedSingleFreeQueue, SingleGroupUniformIsPagedLru) { run_lockstep(uniform_layout, EvictionKind::kLru, 1); }
TEST(GroupedSingleFreeQueue, SingleGroupHybridIsPagedFifo) { run_lockstep(hybrid_layout, EvictionKind::kFifo, 2); }
TEST(GroupedSingleFreeQueue, SingleGroupJengaIsPagedLfu) { run_lockstep(jenga_layout, EvictionKind::kLfu, 3); }

}  // namespace
}  // namespace pagesim::alloc
