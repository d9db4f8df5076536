// GroupedKvAllocator, hand-computed: which pages a sliding window and a chunk drop, how a
// Jenga large page splits, the rule that a prefix hit needs every table's window pages, and
// the uniform baseline's breakdown into the heterogeneous classes.
#include "allocator/hetero/grouped_kv_allocator.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "allocator/make_allocator.h"
#include "allocator/pool/block_hash.h"
#include "hashed_request.h"

namespace pagesim::alloc {
namespace {

LayerGroup group(LayerGroupKind kind, std::int32_t layers, std::int64_t per_layer, std::int64_t window = 0) {
  return {.kind = kind, .layers = layers, .kv_bytes_per_token = layers * per_layer, .window_tokens = window};
}

GroupedKvAllocator make(const LayerGroups& g, KvLayout (*layout)(const LayerGroups&, std::int64_t, std::int32_t),
                        std::int64_t pool_bytes, std::int32_t block, bool prefix = false) {
  return GroupedKvAllocator(g, layout(g, pool_bytes, block), prefix, EvictionKind::kLru);
}

AdmitRequest request(SeqId id, std::int64_t prompt, std::span<const BlockHash> hashes = {}) {
  return test_support::hashed_request(id, prompt, hashes, /*output=*/100);
}

// Chained hashes of 4-token blocks of the given token ids.
std::vector<BlockHash> hashes_of(const std::vector<std::int32_t>& tokens) {
  std::vector<BlockHash> out;
  BlockHash h = kRootBlockHash;
  for (std::size_t i = 0; i + 4 <= tokens.size(); i += 4) {
    h = chain_block_hash(h, std::span(tokens).subspan(i, 4));
    out.push_back(h);
  }
  return out;
}

// hybrid, 4-token pages of 32 bytes: table 0 full, table 1 a window of 8 (a query at n sees
// keys n-7 .. n). A step that grows the sequence from m tokens has its first query at m, so it
// drops only the pages wholly below m-7: the step's kernel still reads every key it needs.
TEST(GroupedKvAllocator, SlidingWindowDropsExactlyThePagesThatLeftIt) {
  auto a = make({group(LayerGroupKind::kFull, 1, 8), group(LayerGroupKind::kSlidingWindow, 1, 8, 8)}, hybrid_layout,
                20 * 32, 4);
  ASSERT_TRUE(a.admit(request(1, 10)).admitted);
  EXPECT_EQ(a.table(1, 1).size(), 3u);  // a prefill from 0: pages 0..2, all attended
  EXPECT_NE(a.table(1, 1)[0], kNoBlock);
  EXPECT_EQ(a.pool().referenced_pages(), 6);

  ASSERT_TRUE(a.append(1, 1));  // 11 tokens; the query at 10 sees 3..10: page 0 stays
  EXPECT_NE(a.table(1, 1)[0], kNoBlock);
  EXPECT_EQ(a.pool().referenced_pages(), 6);
  MemoryBreakdown b = a.breakdown();
  EXPECT_EQ(b.token_states, 11 * 8 + 7 * 8);  // the next query (at 11) sees 4..11
  EXPECT_EQ(b.out_of_window, 4 * 8);          // tokens 0..3, kept one more step
  EXPECT_EQ(b.rounding, 2 * 8);               // one empty slot in each table's last page
  EXPECT_EQ(b.free, 14 * 32);

  ASSERT_TRUE(a.append(1, 1));  // 12 tokens; the query at 11 sees 4..11: page 0 (0..3) goes
  EXPECT_EQ(a.table(1, 1)[0], kNoBlock);
  EXPECT_NE(a.table(1, 1)[1], kNoBlock);
  EXPECT_EQ(a.pool().referenced_pages(), 5);
  b = a.breakdown();
  EXPECT_EQ(b.out_of_window, 8);  // token 4: the next query (at 12) sees 5..12
  EXPECT_EQ(b.token_states, 12 * 8 + 7 * 8);
  EXPECT_EQ(b.rounding, 0);

  ASSERT_TRUE(a.append(1, 4));  // 16 tokens; the chunk's first query (at 12) sees 5..12: page 1 stays
  EXPECT_EQ(a.table(1, 1), (std::vector<BlockId>{kNoBlock, a.table(1, 1)[1], a.table(1, 1)[2], a.table(1, 1)[3]}));
  EXPECT_EQ(a.pool().referenced_pages(), 4 + 3);
  b = a.breakdown();
  EXPECT_EQ(b.out_of_window, 5 * 8);  // tokens 4..8: the next query (at 16) sees 9..16

  ASSERT_TRUE(a.append(1, 1));  // 17 tokens; the query at 16 sees 9..16: page 1 (4..7) goes
  EXPECT_EQ(a.table(1, 1), (std::vector<BlockId>{kNoBlock, kNoBlock, a.table(1, 1)[2], a.table(1, 1)[3],
                                                 a.table(1, 1)[4]}));
  EXPECT_EQ(a.pool().referenced_pages(), 5 + 3);
  b = a.breakdown();
  EXPECT_EQ(b.out_of_window, 2 * 8);  // tokens 8, 9
  EXPECT_EQ(b.total(), a.capacity_bytes());
  a.validate();
}

// The table a kernel is validated against comes through KvAllocator's interface (no
// downcast): the windowed table with its window, or block_table() with kFull.
TEST(GroupedKvAllocator, KernelTableIsTheWindowedTableThroughTheInterface) {
  auto windowed = make({group(LayerGroupKind::kFull, 1, 8), group(LayerGroupKind::kSlidingWindow, 1, 8, 8)},
                       hybrid_layout, 20 * 32, 4);
  const KvAllocator& as_base = windowed;
  EXPECT_EQ(as_base.kernel_table().keep, LayerGroupKind::kSlidingWindow);
  EXPECT_EQ(as_base.kernel_table().window_tokens, 8);
  ASSERT_TRUE(windowed.admit(request(1, 10)).admitted);
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(windowed.append(1, 1));
  EXPECT_EQ(as_base.kernel_block_table(1), windowed.table(1, 1));
  EXPECT_EQ(as_base.kernel_block_table(1).front(), kNoBlock);  // dropped: out of the window
  EXPECT_EQ(as_base.block_table(1), windowed.table(1, 0));

  auto full = make({group(LayerGroupKind::kFull, 2, 8), group(LayerGroupKind::kFull, 2, 4)}, hybrid_layout, 20 * 48, 4);
  const KvAllocator& full_base = full;
  EXPECT_EQ(full_base.kernel_table().keep, LayerGroupKind::kFull);
  EXPECT_EQ(full_base.kernel_table().window_tokens, 0);
  ASSERT_TRUE(full.admit(request(1, 10)).admitted);
  EXPECT_EQ(full_base.kernel_block_table(1), full_base.block_table(1));
}

TEST(GroupedKvAllocator, ChunkedLocalFreesThePreviousChunk) {
  auto a = make({group(LayerGroupKind::kFull, 1, 8), group(LayerGroupKind::kChunkedLocal, 1, 8, 8)}, hybrid_layout,
                20 * 32, 4);
  ASSERT_TRUE(a.admit(request(1, 7)).admitted);
  EXPECT_EQ(a.pool().referenced_pages(), 4);
  ASSERT_TRUE(a.append(1, 1));  // the query at 7 still attends the chunk 0..7
  EXPECT_EQ(a.table(1, 1).size(), 2u);
  EXPECT_NE(a.table(1, 1)[0], kNoBlock);
  EXPECT_EQ(a.pool().referenced_pages(), 4);
  ASSERT_TRUE(a.append(1, 1));  // the query at 8 starts a new chunk: 0..7 is no longer attended
  EXPECT_EQ(a.table(1, 1), (std::vector<BlockId>{kNoBlock, kNoBlock, a.table(1, 1)[2]}));
  EXPECT_EQ(a.table(1, 1).size(), 3u);
  EXPECT_NE(a.table(1, 1)[2], kNoBlock);
  EXPECT_EQ(a.pool().referenced_pages(), 3 + 1);
  const MemoryBreakdown b = a.breakdown();
  EXPECT_EQ(b.token_states, 9 * 8 + 1 * 8);
  EXPECT_EQ(b.out_of_window, 0);
  a.validate();
}

// jenga: 2-token pages of 12 bytes (full) and 8 bytes (sliding); large pages of 24 bytes hold
// two full pages or three sliding pages.
TEST(GroupedKvAllocator, JengaSplitsLcmPagesPerTableAndKeepsARequestTogether) {
  auto a = make({group(LayerGroupKind::kFull, 2, 3), group(LayerGroupKind::kSlidingWindow, 1, 4, 100)}, jenga_layout,
                3 * 24, 2);
  EXPECT_EQ(a.layout().large_page_bytes, 24);
  EXPECT_EQ(a.pool().pages_per_large(0), 2);
  EXPECT_EQ(a.pool().pages_per_large(1), 3);
  ASSERT_TRUE(a.admit(request(1, 4)).admitted);  // two pages in each table: one large page each
  EXPECT_EQ(a.pool().free_large(), 1);
  EXPECT_EQ(a.pool().free_pages(0), 0);
  EXPECT_EQ(a.pool().free_pages(1), 1);
  EXPECT_EQ(a.pool().large_of(a.table(1, 0)[0]), a.pool().large_of(a.table(1, 0)[1]));
  EXPECT_EQ(a.pool().large_of(a.table(1, 1)[0]), a.pool().large_of(a.table(1, 1)[1]));

  ASSERT_TRUE(a.admit(request(2, 2)).admitted);  // full: the last large page; sliding: the spare page
  EXPECT_EQ(a.pool().free_large(), 0);
  EXPECT_EQ(a.pool().free_pages(0), 1);
  EXPECT_EQ(a.pool().free_pages(1), 0);
  EXPECT_FALSE(a.can_admit(request(3, 2)));  // a full page is free, but no sliding page anywhere
  EXPECT_FALSE(a.admit(request(3, 2)).admitted);

  a.free(1);  // its full large page comes back whole; its sliding one still holds sequence 2's page
  EXPECT_EQ(a.pool().free_large(), 1);
  EXPECT_EQ(a.pool().free_pages(1), 2);
  const MemoryBreakdown b = a.breakdown();
  EXPECT_EQ(b.token_states, 2 * 6 + 2 * 4);
  EXPECT_EQ(b.free, 3 * 24 - 12 - 8);
  EXPECT_TRUE(a.can_admit(request(3, 2)));
  a.validate();
}

// hybrid with the prefix cache: full table 0, sliding window of 5 (keeps the last 4 tokens)
// in table 1; ten 4-token pages.
TEST(GroupedKvAllocator, PrefixHitNeedsEveryTablesWindowPages) {
  auto a = make({group(LayerGroupKind::kFull, 1, 8), group(LayerGroupKind::kSlidingWindow, 1, 8, 5)}, hybrid_layout,
                12 * 32, 4, /*prefix=*/true);
  std::vector<std::int32_t> doc(16);
  std::iota(doc.begin(), doc.end(), 100);
  const std::vector<BlockHash> h = hashes_of(doc);  // h0..h3
  ASSERT_TRUE(a.admit(request(1, 16, h)).admitted);
  // Table 1 took pages for all 16 tokens and cached them; the prefill's queries from 0 on
  // attend them all.
  EXPECT_EQ(a.table(1, 1).size(), 4u);
  EXPECT_NE(a.table(1, 1)[0], kNoBlock);
  // The first decode step (the query at 16 sees 12..16) drops pages 0..2 (tokens 0..11) and
  // takes page 4 in both tables: 7 pages referenced, 3 cached, 2 never used.
  ASSERT_TRUE(a.append(1, 1));
  EXPECT_EQ(a.table(1, 1),
            (std::vector<BlockId>{kNoBlock, kNoBlock, kNoBlock, a.table(1, 1)[3], a.table(1, 1)[4]}));
  EXPECT_EQ(a.pool().referenced_pages(), 7);
  for (std::int32_t t = 0; t < 2; ++t)
    for (BlockHash x : h) EXPECT_NE(a.pool().lookup(t, x), kNoBlock);
  EXPECT_EQ(a.cached_prefix_tokens(h), 16);

  // A request without hashes needs 4 pages: the 2 never used, then the LRU dropped pages 0, 1.
  ASSERT_TRUE(a.admit(request(2, 8)).admitted);
  EXPECT_EQ(a.pool().lookup(1, h[0]), kNoBlock);
  EXPECT_EQ(a.pool().lookup(1, h[1]), kNoBlock);
  EXPECT_NE(a.pool().lookup(1, h[2]), kNoBlock);
  EXPECT_NE(a.pool().lookup(0, h[0]), kNoBlock);
  // The whole prompt still hits: a query at 16 needs only page 3 of the window table.
  EXPECT_EQ(a.cached_prefix_tokens(h), 16);
  // A prompt sharing only blocks 0 and 1: the full table has them, the window table lost the
  // pages a query at 8 (page 1) or at 4 (page 0) needs, so nothing hits.
  std::vector<std::int32_t> other = doc;
  for (std::size_t i = 8; i < 16; ++i) other[i] = -static_cast<std::int32_t>(i);
  EXPECT_EQ(a.cached_prefix_tokens(hashes_of(other)), 0);

  // The same prompt grown by a block: hits 4 blocks, all but the last token served.
  std::vector<std::int32_t> longer = doc;
  for (std::int32_t i = 0; i < 4; ++i) longer.push_back(900 + i);
  const std::vector<BlockHash> hl = hashes_of(longer);
  a.free(2);  // its 4 pages (never cached: no hashes) make room for request 3's 2 new pages
  const AdmitResult r = a.admit(request(3, 20, hl));
  ASSERT_TRUE(r.admitted);
  EXPECT_EQ(r.cached_tokens, 16);
  EXPECT_EQ(a.table(3, 0)[3], a.table(1, 0)[3]);  // shares sequence 1's full pages
  EXPECT_EQ(a.stats().prefix.hit_blocks, 4);
  a.validate();
}

// A hit covering the whole prompt still computes its last token, so the step's first query is
// at k·B − 1, not k·B, and a window that is not a multiple of the page keeps the page that
// query reaches back to. Window 5, 4-token pages, a 12-token prompt cached whole: the query at
// 11 sees keys 7..11, pages 1 and 2 (a query at 12 would see 8..12: page 2 alone).
TEST(GroupedKvAllocator, AWholePromptHitKeepsThePagesItsLastTokensQueryAttends) {
  auto a = make({group(LayerGroupKind::kFull, 1, 8), group(LayerGroupKind::kSlidingWindow, 1, 8, 5)}, hybrid_layout,
                12 * 32, 4, /*prefix=*/true);
  std::vector<std::int32_t> doc(12);
  std::iota(doc.begin(), doc.end(), 100);
  const std::vector<BlockHash> h = hashes_of(doc);  // h0..h2
  ASSERT_TRUE(a.admit(request(1, 12, h)).admitted);
  a.free(1);  // its 6 pages stay cached
  const AdmitResult r = a.admit(request(2, 12, h));
  ASSERT_TRUE(r.admitted);
  EXPECT_EQ(r.cached_tokens, 11);
  const std::vector<BlockId> window = a.table(2, 1);
  ASSERT_EQ(window.size(), 3u);
  EXPECT_EQ(window[0], kNoBlock);                 // keys 0..3: behind every query of the step
  EXPECT_EQ(window[1], a.pool().lookup(1, h[1]));  // key 7, attended by the query at 11
  EXPECT_EQ(window[2], a.pool().lookup(1, h[2]));
  EXPECT_NE(window[1], kNoBlock);
  EXPECT_EQ(a.cached_prefix_tokens(h), 12);  // a router's question: queries after the hit
  a.validate();
}

// uniform, 2-token pages, 4 layers of 8 bytes per token: full, sliding (window 4),
// cross-attention and recurrent (20 bytes of state), so a token costs 32 bytes everywhere.
TEST(GroupedKvAllocator, UniformAttributesItsWasteToTheLayerClasses) {
  const LayerGroups g = {group(LayerGroupKind::kFull, 1, 8), group(LayerGroupKind::kSlidingWindow, 1, 8, 4),
                         group(LayerGroupKind::kCrossAttention, 1, 8),
                         {.kind = LayerGroupKind::kRecurrent, .layers = 1, .state_bytes = 20}};
  auto a = make(g, uniform_layout, 20 * 64, 2);
  EXPECT_EQ(a.capacity_slots(), 40);
  AdmitRequest r = request(1, 5);
  r.encoder_tokens = 3;
  ASSERT_TRUE(a.admit(r).admitted);  // 3 decoder pages, 2 encoder pages, 1 state page
  const MemoryBreakdown b = a.breakdown();
  // Decoder tokens: full 5 x 8; sliding keeps 2..4 (3 x 8), tokens 0, 1 out of window; the
  // cross and recurrent layers' room (2 x 5 x 8) unused. Encoder tokens: cross 3 x 8 stored,
  // the other three layers' room (3 x 3 x 8) unused. Empty slots (2 x 32) and the state
  // page's 44 spare bytes are rounding.
  EXPECT_EQ(b.token_states, 40 + 24 + 24);
  EXPECT_EQ(b.out_of_window, 16);
  EXPECT_EQ(b.unused_layers, 80 + 72);
  EXPECT_EQ(b.recurrent_state, 20);
  EXPECT_EQ(b.rounding, 64 + 44);
  EXPECT_EQ(b.free, 20 * 64 - 6 * 64);
  EXPECT_EQ(b.total(), a.capacity_bytes());
  a.validate();
}

// The waste vLLM's hybrid-allocator RFC (vllm-project/vllm#11382) gives for a uniform
// allocator, from the layer patterns alone (one byte per layer and token; sizes cancel):
// Gemma 2, half its layers a 4096-token window, at 8192 tokens: 25%; Ministral, three of four
// layers a 32768-token window, at 131072 tokens: 56.25%. The hybrid layout holds only the
// window's pages, so it allocates the rest of the uniform pool's bytes less.
TEST(GroupedKvAllocator, UniformWasteMatchesTheHybridAllocatorRfc) {
  struct Case {
    LayerGroups groups;
    std::int64_t tokens;
    double waste;
  };
  const std::vector<Case> cases = {
      {{group(LayerGroupKind::kSlidingWindow, 21, 1, 4096), group(LayerGroupKind::kFull, 21, 1)}, 8192, 0.25},
      {{group(LayerGroupKind::kSlidingWindow, 27, 1, 32768), group(LayerGroupKind::kFull, 9, 1)}, 131072, 0.5625},
  };
  for (const Case& c : cases) {
    std::int64_t layers = 0;
    for (const LayerGroup& g : c.groups) layers += g.layers;
    const std::int64_t pool = c.tokens * layers;  // exactly one sequence's uniform pages
    auto uniform = make(c.groups, uniform_layout, pool, 16);
    ASSERT_TRUE(uniform.admit(request(1, c.tokens)).admitted);
    const MemoryBreakdown u = uniform.breakdown();
    EXPECT_EQ(u.free, 0);
    EXPECT_NEAR(static_cast<double>(u.out_of_window) / static_cast<double>(u.allocated()), c.waste, 1e-4);
    auto hybrid = make(c.groups, hybrid_layout, pool, 16);
    // The prompt but its last token, then that token's step: its query (at tokens - 1) is the
    // first for which the pages behind the window are dropped.
    ASSERT_TRUE(hybrid.admit(request(1, c.tokens - 1)).admitted);
    ASSERT_TRUE(hybrid.append(1, 1));
    const MemoryBreakdown h = hybrid.breakdown();
    // A query at n sees n - W + 1 .. n: of the window's first page (tokens n - W ..), one is out.
    EXPECT_EQ(h.out_of_window, 1 * c.groups[0].layers);
    EXPECT_NEAR(static_cast<double>(h.allocated()) / static_cast<double>(u.allocated()), 1.0 - c.waste, 1e-3);
    uniform.validate();
    hybrid.validate();
  }
}

TEST(GroupedKvAllocator, ForkCopiesRecurrentStateAndFailsWithoutRoom) {
  const LayerGroups g = {group(LayerGroupKind::kFull, 1, 8),
                         {.kind = LayerGroupKind::kRecurrent, .layers = 1, .state_bytes = 32}};
  auto a = make(g, hybrid_layout, 3 * 32, 4);  // three 32-byte pages
  ASSERT_TRUE(a.admit(request(1, 3)).admitted);  // one token page, one state page
  ASSERT_TRUE(a.fork(1, 2));
  const auto copies = a.take_pending_copies();
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].src, a.table(1, 1)[0]);
  EXPECT_EQ(copies[0].dst, a.table(2, 1)[0]);
  EXPECT_EQ(a.table(1, 0), a.table(2, 0));  // token pages shared
  EXPECT_FALSE(a.fork(1, 3));               // no page left for a third state
  EXPECT_FALSE(a.contains(3));
  a.validate();
}

TEST(GroupedKvAllocator, MakeAllocatorBuildsEachKind) {
  AllocatorSpec spec;
  spec.layer_groups = {group(LayerGroupKind::kSlidingWindow, 2, 8, 64), group(LayerGroupKind::kFull, 2, 8)};
  spec.pool_bytes = 1 << 20;
  spec.block_size = 16;
  spec.kind = AllocatorKind::kUniform;
  EXPECT_EQ(make_allocator(spec)->name(), "uniform(block=16)");
  spec.kind = AllocatorKind::kHybrid;
  spec.prefix_cache = true;
  EXPECT_EQ(make_allocator(spec)->name(), "hybrid+prefix(block=16,lru,tables=2)");
  spec.kind = AllocatorKind::kJenga;
  auto j = make_grouped_allocator(spec);
  EXPECT_EQ(j->layout().policy, "jenga");
  EXPECT_EQ(j->capacity_slots(), (1 << 20) / 32 / 16 * 16);
  spec.kind = AllocatorKind::kPaged;
  EXPECT_THROW(make_grouped_allocator(spec), AllocatorError);
}

}  // namespace
}  // namespace pagesim::alloc
