// KvLayout builders: hand-computed tables and page sizes of uniform, hybrid (vLLM's KV cache
// groups) and jenga (LCM large pages), and the sizes each refuses by name.
#include "allocator/hetero/kv_layout.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {
namespace {

LayerGroup group(LayerGroupKind kind, std::int32_t layers, std::int64_t per_layer, std::int64_t window = 0) {
  return {.kind = kind, .layers = layers, .kv_bytes_per_token = layers * per_layer, .window_tokens = window};
}
LayerGroup recurrent(std::int32_t layers, std::int64_t state_per_layer) {
  return {.kind = LayerGroupKind::kRecurrent, .layers = layers, .state_bytes = layers * state_per_layer};
}

constexpr std::int64_t kA = 8192;  // Gemma 2 9B: 8 KV heads x head dim 256 x (K, V) x 2 bytes

TEST(KvLayout, FirstKeptToken) {
  EXPECT_EQ(first_kept_token(LayerGroupKind::kFull, 0, 100), 0);
  EXPECT_EQ(first_kept_token(LayerGroupKind::kSlidingWindow, 8, 5), 0);
  EXPECT_EQ(first_kept_token(LayerGroupKind::kSlidingWindow, 8, 12), 5);  // a query at 12 sees 5..12
  EXPECT_EQ(first_kept_token(LayerGroupKind::kChunkedLocal, 8, 7), 0);
  EXPECT_EQ(first_kept_token(LayerGroupKind::kChunkedLocal, 8, 8), 8);    // a new chunk starts
  EXPECT_EQ(first_kept_token(LayerGroupKind::kChunkedLocal, 8, 17), 16);
}

TEST(KvLayout, UniformChargesTheLargestLayerForEveryLayer) {
  const LayerGroups g = {group(LayerGroupKind::kSlidingWindow, 21, kA, 4096), group(LayerGroupKind::kFull, 21, kA),
                         group(LayerGroupKind::kCrossAttention, 2, kA / 2), recurrent(1, 1000)};
  const KvLayout l = uniform_layout(g, 100 * 16 * 45 * kA + 5, 16);
  EXPECT_EQ(l.token_bytes, 45 * kA);  // 45 layers at the largest per-layer size
  ASSERT_EQ(l.tables.size(), 3u);     // decoder, encoder, state
  EXPECT_EQ(l.tables[0].kind, TableKind::kTokens);
  EXPECT_EQ(l.tables[0].keep, LayerGroupKind::kFull);
  EXPECT_EQ(l.tables[0].page_bytes, 16 * 45 * kA);
  ASSERT_EQ(l.tables[0].parts.size(), 4u);
  EXPECT_EQ(l.tables[0].parts[2].room_bytes, 2 * kA);  // cross-attention: room of 2 full layers
  EXPECT_EQ(l.tables[0].parts[2].kv_bytes, kA);        // of which it stores half
  EXPECT_EQ(l.tables[0].parts[3].room_bytes, kA);      // the recurrent layer's token room
  EXPECT_EQ(l.tables[1].kind, TableKind::kEncoder);
  EXPECT_EQ(l.tables[2].kind, TableKind::kState);
  EXPECT_EQ(l.tables[2].state_bytes, 1000);
  EXPECT_EQ(l.large_page_bytes, 16 * 45 * kA);
  EXPECT_EQ(l.num_large_pages, 100);
}

TEST(KvLayout, HybridGroupsLayersLikeVllm) {
  // Gemma 3 27B: 52 sliding-window and 10 full layers -> group_size 10; the sliding layers
  // fill five tables and a sixth of 2 layers padded to 10.
  const LayerGroups g = {group(LayerGroupKind::kSlidingWindow, 52, kA, 1024), group(LayerGroupKind::kFull, 10, kA)};
  const KvLayout l = hybrid_layout(g, 1000 * 16 * 10 * kA, 16);
  EXPECT_EQ(l.vllm_group_size, 10);
  EXPECT_EQ(l.tokens_per_page, 16);
  EXPECT_EQ(l.large_page_bytes, 16 * 10 * kA);
  EXPECT_EQ(l.token_bytes, 62 * kA);
  ASSERT_EQ(l.tables.size(), 7u);
  for (std::size_t t = 0; t < 6; ++t) {
    EXPECT_EQ(l.tables[t].keep, LayerGroupKind::kSlidingWindow);
    EXPECT_EQ(l.tables[t].window_tokens, 1024);
    EXPECT_EQ(l.tables[t].parts[0].room_bytes, 10 * kA);
    EXPECT_EQ(l.tables[t].parts[0].kv_bytes, (t < 5 ? 10 : 2) * kA) << "table " << t;
  }
  EXPECT_EQ(l.tables[6].keep, LayerGroupKind::kFull);
  EXPECT_EQ(l.num_large_pages, 1000);

  // 12 sliding + 13 full: 13 < 1.25 * 12, so group_size is 13 (vLLM's gpt-oss-20b + eagle case).
  const KvLayout near = hybrid_layout({group(LayerGroupKind::kSlidingWindow, 12, kA, 128), group(LayerGroupKind::kFull, 13, kA)},
                                      16 * 13 * kA, 16);
  EXPECT_EQ(near.vllm_group_size, 13);
  ASSERT_EQ(near.tables.size(), 2u);
  EXPECT_EQ(near.tables[0].parts[0].kv_bytes, 12 * kA);
  EXPECT_EQ(near.tables[0].parts[0].room_bytes, 13 * kA);
}

TEST(KvLayout, HybridGrowsTheBlockUntilAPageHoldsALayersState) {
  // Per-layer attention page at 4 tokens: 32 bytes; a layer's state: 100 bytes -> 16 tokens.
  const LayerGroups g = {group(LayerGroupKind::kFull, 4, 8), recurrent(28, 100)};
  const KvLayout l = hybrid_layout(g, 10 * 512, 4);
  EXPECT_EQ(l.tokens_per_page, 16);
  EXPECT_EQ(l.vllm_group_size, 4);
  EXPECT_EQ(l.large_page_bytes, 16 * 8 * 4);
  ASSERT_EQ(l.tables.size(), 8u);  // one full table, seven state tables of 4 layers
  EXPECT_EQ(l.tables[1].kind, TableKind::kState);
  EXPECT_EQ(l.tables[1].state_bytes, 400);
  EXPECT_EQ(l.tables[1].page_bytes, 512);
}

TEST(KvLayout, JengaCarvesLcmPagesPerLayerGroup) {
  // Pages of 2 tokens: 12 bytes (full, 6 per token) and 8 bytes (sliding, 4 per token) and a
  // 20-byte state: large pages of lcm(12, 8, 20) = 120 bytes.
  const LayerGroups g = {group(LayerGroupKind::kFull, 2, 3), group(LayerGroupKind::kSlidingWindow, 1, 4, 10),
                         recurrent(2, 10)};
  const KvLayout l = jenga_layout(g, 7 * 120 + 119, 2);
  ASSERT_EQ(l.tables.size(), 3u);
  EXPECT_EQ(l.tables[0].page_bytes, 12);
  EXPECT_EQ(l.tables[1].page_bytes, 8);
  EXPECT_EQ(l.tables[2].page_bytes, 20);
  EXPECT_EQ(l.large_page_bytes, 120);
  EXPECT_EQ(l.num_large_pages, 7);
  EXPECT_EQ(l.token_bytes, 4 * 5);  // largest per-layer KV (4) x 5 layers
}

// DeepSeek-V3.2 in fp8: every layer's latent (656 B, fp8_ds_mla) and index key (132 B), both
// full attention. hybrid is vLLM's UniformTypeKVCacheSpecs: one table of every layer, each
// part its own size, no padding; uniform pads the index keys to the latent's 656 B.
TEST(KvLayout, HybridKeepsFullGroupsOfSeveralSizesInOneTable) {
  const LayerGroups g = {group(LayerGroupKind::kFull, 61, 656), group(LayerGroupKind::kFull, 61, 132)};
  const std::int64_t page = 64 * 61 * (656 + 132);
  const KvLayout h = hybrid_layout(g, 10 * page + 1, 64);
  ASSERT_EQ(h.tables.size(), 1u);
  EXPECT_EQ(h.tables[0].kind, TableKind::kTokens);
  ASSERT_EQ(h.tables[0].parts.size(), 2u);
  EXPECT_EQ(h.tables[0].parts[0].room_bytes, 61 * 656);
  EXPECT_EQ(h.tables[0].parts[1].room_bytes, 61 * 132);
  EXPECT_EQ(h.tables[0].parts[1].kv_bytes, 61 * 132);
  EXPECT_EQ(h.tables[0].page_bytes, page);
  EXPECT_EQ(h.tokens_per_page, 64);
  EXPECT_EQ(h.num_large_pages, 10);
  const KvLayout u = uniform_layout(g, 10 * page, 64);
  EXPECT_EQ(u.token_bytes, 122 * 656);
  EXPECT_EQ(u.tables[0].parts[1].room_bytes, 61 * 656);  // 524 B of padding per layer and token
}

void expect_refusal(const std::function<void()>& build, const std::string& fragment) {
  try {
    build();
    ADD_FAILURE() << "accepted; expected a refusal naming '" << fragment << "'";
  } catch (const AllocatorError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(KvLayout, RefusesWhatItCannotLayOut) {
  expect_refusal([] { hybrid_layout({group(LayerGroupKind::kFull, 2, 8), group(LayerGroupKind::kSlidingWindow, 2, 4, 64)}, 1 << 20, 16); },
                 "layer group 1 (sliding_window): per-layer KV of 4 bytes per token differs from 8");
  expect_refusal([] { jenga_layout({group(LayerGroupKind::kChunkedLocal, 1, 8, 20)}, 1 << 20, 16); },
                 "layer group 0 (chunked_local): window_tokens must be a positive multiple of the 16-token page, got 20");
  expect_refusal([] { uniform_layout({group(LayerGroupKind::kSlidingWindow, 1, 8, 1)}, 1 << 20, 16); },
                 "window_tokens must be >= 2, got 1");
  expect_refusal([] { jenga_layout({group(LayerGroupKind::kFull, 1, 3), recurrent(1, 1009)}, 1000, 1); },
                 "a page of 3027 bytes is larger than pool_bytes 1000");
  expect_refusal([] { uniform_layout({recurrent(1, 64)}, 1 << 20, 16); }, "no layer group stores per-token KV");
}

}  // namespace
}  // namespace pagesim::alloc
