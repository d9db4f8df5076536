// Hand-computed cases for VattentionLayout and worst_case_rounding_bytes: pages per buffer,
// the split of a request's mapped bytes into classes, and the worst page rounding per request
// for the models of the vAttention paper's evaluation.
#include "allocator/vattention/vattention_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {
namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;

// One full-attention group of a model with `layers` layers and per-layer K (or V) bytes per
// token `bytes` = kv_heads × head_dim × dtype bytes (per GPU).
LayerGroups full_model(std::int32_t layers, std::int64_t bytes) {
  return {LayerGroup{.kind = LayerGroupKind::kFull, .layers = layers, .kv_bytes_per_token = 2 * layers * bytes}};
}

// Model facts from each model's Hugging Face config.json (num_hidden_layers,
// num_key_value_heads, hidden_size / num_attention_heads = 128), fp16 KV:
//   Yi-6B       32 layers, 4 KV heads -> 4 × 128 × 2 = 1 KiB per layer per token (K or V)
//   Llama-3-8B  32 layers, 8 KV heads -> 2 KiB; 1 KiB per GPU at TP-2
//   Yi-34B      60 layers, 8 KV heads -> 2 KiB; 1 KiB per GPU at TP-2
// The vAttention paper runs Yi-6B on one GPU and Llama-3-8B and Yi-34B on two (TP-2;
// microsoft/vattention scripts/artifact_asplos25/README.md).
LayerGroups yi_6b() { return full_model(32, 1 * kKiB); }
LayerGroups llama_3_8b_tp2() { return full_model(32, 1 * kKiB); }
LayerGroups yi_34b_tp2() { return full_model(60, 1 * kKiB); }

TEST(VattentionLayout, FullGroupMapsCeilBytesOverPagePerBuffer) {
  // Yi-6B, 2 MiB pages: 2 MiB / 1 KiB = 2048 tokens per page, the authors' tokens_per_page =
  // page / (kv_heads × head_dim × bytes) (vattention.cu init_kv_block_size).
  const VattentionLayout l(yi_6b(), 2 * kMiB, 32768);
  ASSERT_EQ(l.groups().size(), 1u);
  EXPECT_EQ(l.groups()[0].buffers, 64);  // a K and a V per layer
  EXPECT_EQ(l.groups()[0].bytes_per_token, 1 * kKiB);
  EXPECT_EQ(l.groups()[0].max_pages, 16);  // 32768 tokens × 1 KiB / 2 MiB
  EXPECT_EQ(l.max_request_pages(), 64 * 16);
  EXPECT_EQ(l.pages_per_buffer(0, 0), 0);
  EXPECT_EQ(l.pages_per_buffer(0, 1), 1);
  EXPECT_EQ(l.pages_per_buffer(0, 2048), 1);
  EXPECT_EQ(l.pages_per_buffer(0, 2049), 2);
  EXPECT_EQ(l.request_pages(2049), 128);

  // 64 KiB pages: 64 tokens per page; 1000 tokens = ceil(1000 / 64) = 16 pages per buffer.
  const VattentionLayout small(yi_6b(), 64 * kKiB, 32768);
  EXPECT_EQ(small.pages_per_buffer(0, 1000), 16);
  EXPECT_EQ(small.request_pages(1000), 64 * 16);
}

TEST(VattentionLayout, FullGroupClassesAreTokensAndTheUnfilledPageEnds) {
  const VattentionLayout l(yi_6b(), 2 * kMiB, 32768);
  // 1000 tokens in one page per buffer: 64 × 2 MiB mapped, 1000 × 64 KiB of KV.
  const MemoryBreakdown b = l.classify(1000);
  EXPECT_EQ(b.token_states, 1000 * 64 * kKiB);
  EXPECT_EQ(b.rounding, 64 * 2 * kMiB - 1000 * 64 * kKiB);  // 64 × 1048 tokens × 1 KiB
  EXPECT_EQ(b.rounding, 64 * 1048 * kKiB);
  EXPECT_EQ(b.out_of_window + b.recurrent_state + b.reserved + b.over_reserved + b.free, 0);
  EXPECT_EQ(b.allocated(), l.request_pages(1000) * 2 * kMiB);
}

// Small numbers for the other kinds: 4 KiB pages, 1 KiB per buffer and token (4 tokens a page).
constexpr std::int64_t kPage = 4 * kKiB;

TEST(VattentionLayout, SlidingWindowKeepsEveryTokenMappedAndCountsTheOldOnesOutOfWindow) {
  const LayerGroups groups{{.kind = LayerGroupKind::kSlidingWindow, .layers = 1, .kv_bytes_per_token = 2 * kKiB,
                            .window_tokens = 8}};
  const VattentionLayout l(groups, kPage, 64);
  // 10 tokens: ceil(10 / 4) = 3 pages in each of 2 buffers; the next query (position 10)
  // attends keys 3..9, so keys 0..2 are out of the window but still mapped.
  EXPECT_EQ(l.request_pages(10), 6);
  const MemoryBreakdown b = l.classify(10);
  EXPECT_EQ(b.out_of_window, 3 * 2 * kKiB);
  EXPECT_EQ(b.token_states, 7 * 2 * kKiB);
  EXPECT_EQ(b.rounding, 6 * kPage - 10 * 2 * kKiB);
  // Inside the window nothing is out: 7 tokens, keys 0..6 all attended by a query at 7.
  EXPECT_EQ(l.classify(7).out_of_window, 0);
  EXPECT_EQ(l.classify(8).out_of_window, 1 * 2 * kKiB);
}

TEST(VattentionLayout, ChunkedLocalCountsEarlierChunksOutOfWindow) {
  const LayerGroups groups{{.kind = LayerGroupKind::kChunkedLocal, .layers = 1, .kv_bytes_per_token = 2 * kKiB,
                            .window_tokens = 4}};
  const VattentionLayout l(groups, kPage, 64);
  const MemoryBreakdown b = l.classify(10);  // chunks [0,4) and [4,8) done; [8,10) current
  EXPECT_EQ(b.out_of_window, 8 * 2 * kKiB);
  EXPECT_EQ(b.token_states, 2 * 2 * kKiB);
  EXPECT_EQ(b.rounding, 6 * kPage - 10 * 2 * kKiB);
}

TEST(VattentionLayout, CrossAttentionMapsItsEncoderKeysWhateverTheLength) {
  // 2 layers, 512 B per buffer and encoder token, 10 encoder tokens: 5,120 B per buffer =
  // 2 pages in each of 4 buffers.
  const LayerGroups groups{{.kind = LayerGroupKind::kCrossAttention, .layers = 2, .kv_bytes_per_token = 2 * 2 * 512,
                            .encoder_tokens = 10}};
  const VattentionLayout l(groups, kPage, 64);
  EXPECT_EQ(l.groups()[0].max_pages, 2);
  EXPECT_EQ(l.request_pages(1), 8);
  EXPECT_EQ(l.request_pages(64), 8);
  const MemoryBreakdown b = l.classify(33);
  EXPECT_EQ(b.token_states, 10 * 2048);
  EXPECT_EQ(b.rounding, 8 * kPage - 10 * 2048);
}

TEST(VattentionLayout, RecurrentStateIsOneBufferPerLayer) {
  // 3 layers, 15,000 B of state: 5,000 B per layer = 2 pages each.
  const LayerGroups groups{{.kind = LayerGroupKind::kRecurrent, .layers = 3, .state_bytes = 15000}};
  const VattentionLayout l(groups, kPage, 64);
  EXPECT_EQ(l.groups()[0].buffers, 3);
  EXPECT_EQ(l.request_pages(1), 6);
  const MemoryBreakdown b = l.classify(20);
  EXPECT_EQ(b.recurrent_state, 15000);
  EXPECT_EQ(b.rounding, 6 * kPage - 15000);
  EXPECT_EQ(b.token_states, 0);
}

TEST(VattentionLayout, MixedGroupsAddUp) {
  const LayerGroups groups{
      {.kind = LayerGroupKind::kFull, .layers = 1, .kv_bytes_per_token = 2 * kKiB},
      {.kind = LayerGroupKind::kSlidingWindow, .layers = 3, .kv_bytes_per_token = 6 * kKiB, .window_tokens = 8},
      {.kind = LayerGroupKind::kRecurrent, .layers = 3, .state_bytes = 15000},
  };
  const VattentionLayout l(groups, kPage, 64);
  // 10 tokens: full 2 × 3 pages, window 6 × 3 pages, recurrent 3 × 2 pages.
  EXPECT_EQ(l.request_pages(10), 6 + 18 + 6);
  const MemoryBreakdown b = l.classify(10);
  EXPECT_EQ(b.token_states, 10 * 2 * kKiB + 7 * 6 * kKiB);
  EXPECT_EQ(b.out_of_window, 3 * 6 * kKiB);
  EXPECT_EQ(b.recurrent_state, 15000);
  EXPECT_EQ(b.allocated(), 30 * kPage);
}

TEST(VattentionLayout, WorstCaseRoundingIsAPageLessOneTokenPerBuffer) {
  // The paper's evaluation models (per GPU) and its four page sizes: 2 × layers buffers, each
  // at worst one page less one token (1 KiB) unfilled.
  for (const std::int64_t page : {64 * kKiB, 128 * kKiB, 256 * kKiB, 2 * kMiB}) {
    EXPECT_EQ(worst_case_rounding_bytes(yi_6b(), page), 64 * (page - kKiB)) << page;
    EXPECT_EQ(worst_case_rounding_bytes(llama_3_8b_tp2(), page), 64 * (page - kKiB)) << page;
    EXPECT_EQ(worst_case_rounding_bytes(yi_34b_tp2(), page), 120 * (page - kKiB)) << page;
  }
  // Spelled out: Yi-34B at TP-2 with 2 MiB pages, 120 × 2,096,128 B = 239.9 MiB per request;
  // with 64 KiB pages 120 × 64,512 B = 7.4 MiB.
  EXPECT_EQ(worst_case_rounding_bytes(yi_34b_tp2(), 2 * kMiB), 251'535'360);
  EXPECT_EQ(worst_case_rounding_bytes(yi_34b_tp2(), 64 * kKiB), 7'741'440);
  // Llama-3-8B on one GPU: 2 KiB per token and buffer.
  EXPECT_EQ(worst_case_rounding_bytes(full_model(32, 2 * kKiB), 2 * kMiB), 64 * (2 * kMiB - 2 * kKiB));
}

TEST(VattentionLayout, WorstCaseRoundingBesideThePapersLlama3Numbers) {
  // The paper gives, for Llama-3-8B at TP-1, up to 128 MB of physical memory wasted per
  // request with 2 MB pages and 4 MB with 64 KB pages (as quoted in antgroup/glake issue
  // #24; the paper's §6.1 motivates its smaller pages with them). That is one whole page in
  // each of its 2 × 32 buffers. A request holds at least one token (2 KiB) in each buffer's
  // last page, so pagesim's exact worst case is one token per buffer below the paper's bound.
  const LayerGroups llama_3_8b = full_model(32, 2 * kKiB);
  EXPECT_EQ(64 * 2 * kMiB, 128 * kMiB);
  EXPECT_EQ(worst_case_rounding_bytes(llama_3_8b, 2 * kMiB), 128 * kMiB - 64 * 2 * kKiB);
  EXPECT_EQ(64 * 64 * kKiB, 4 * kMiB);
  EXPECT_EQ(worst_case_rounding_bytes(llama_3_8b, 64 * kKiB), 4 * kMiB - 64 * 2 * kKiB);
  // The largest rounding a real length reaches is exactly that: one token in the last page.
  const VattentionLayout l(llama_3_8b, 64 * kKiB, 4096);
  EXPECT_EQ(l.classify(33).rounding, 4 * kMiB - 64 * 2 * kKiB);  // 32 tokens fill a 64 KiB page
}

TEST(VattentionLayout, WorstCaseRoundingMatchesTheWorstLengthWhenTheTokenSizeDoesNotDivideThePage) {
  // 1,536 B per buffer and token over 4 KiB pages: fills are multiples of gcd = 512 B, so the
  // worst unfilled end is 3,584 B per buffer. Check against every length up to 1,000.
  const LayerGroups groups{{.kind = LayerGroupKind::kFull, .layers = 1, .kv_bytes_per_token = 2 * 1536}};
  const VattentionLayout l(groups, kPage, 1000);
  std::int64_t worst = 0;
  for (std::int64_t n = 1; n <= 1000; ++n) worst = std::max(worst, l.classify(n).rounding);
  EXPECT_EQ(worst, 2 * 3584);
  EXPECT_EQ(worst_case_rounding_bytes(groups, kPage), 2 * 3584);
}

TEST(VattentionLayout, WorstCaseRoundingOfFixedBuffersIsTheirExactRounding) {
  const LayerGroups groups{
      {.kind = LayerGroupKind::kCrossAttention, .layers = 2, .kv_bytes_per_token = 2 * 2 * 512, .encoder_tokens = 10},
      {.kind = LayerGroupKind::kRecurrent, .layers = 3, .state_bytes = 15000},
  };
  EXPECT_EQ(worst_case_rounding_bytes(groups, kPage), (8 * kPage - 10 * 2048) + (6 * kPage - 15000));
}

TEST(VattentionLayout, RejectsBadSettingsNamingThem) {
  const auto message = [](auto&& make) {
    try {
      make();
    } catch (const AllocatorError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { VattentionLayout(yi_6b(), 3000, 64); }).find("page_bytes"), std::string::npos);
  EXPECT_NE(message([] { VattentionLayout(yi_6b(), kPage, 0); }).find("max_seq_len"), std::string::npos);
  EXPECT_NE(message([] { VattentionLayout({}, kPage, 64); }).find("no layer group"), std::string::npos);
  // K and V of 3 layers cannot share 1,000 bytes evenly.
  const LayerGroups odd{{.kind = LayerGroupKind::kFull, .layers = 3, .kv_bytes_per_token = 1000}};
  EXPECT_NE(message([&] { VattentionLayout(odd, kPage, 64); }).find("layer group 0 (full)"), std::string::npos);
  const LayerGroups no_window{{.kind = LayerGroupKind::kSlidingWindow, .layers = 1, .kv_bytes_per_token = 2}};
  EXPECT_NE(message([&] { VattentionLayout(no_window, kPage, 64); }).find("window_tokens"), std::string::npos);
  const LayerGroups odd_state{{.kind = LayerGroupKind::kRecurrent, .layers = 2, .state_bytes = 3}};
  EXPECT_NE(message([&] { VattentionLayout(odd_state, kPage, 64); }).find("state_bytes"), std::string::npos);
}

TEST(VattentionLayout, PageSizeNames) {
  EXPECT_EQ(page_size_name(64 * kKiB), "64KiB");
  EXPECT_EQ(page_size_name(2 * kMiB), "2MiB");
  EXPECT_EQ(page_size_name(512), "512B");
}

}  // namespace
}  // namespace pagesim::alloc
