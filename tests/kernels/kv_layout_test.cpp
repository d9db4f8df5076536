#include "kernels/kv_layout.h"

#include <gtest/gtest.h>

#include <limits>

#include "kernels/kernel_error.h"

namespace pagesim::kernels {
namespace {

TEST(KvLayout, HndAndNhdOffsets) {
  const TensorView hnd = kv_cache_view(nullptr, DType::kFloat16, KvLayout::kHND, 10, 4, 16, 128);
  const KvCacheGeometry a = kv_cache_geometry(hnd, "test");
  EXPECT_EQ(a.num_blocks, 10);
  EXPECT_EQ(a.num_kv_heads, 4);
  EXPECT_EQ(a.block_size, 16);
  EXPECT_EQ(a.head_dim, 128);
  // [block][head][slot][dim]
  EXPECT_EQ(a.offset(3, 2, 5), ((3 * 4 + 2) * 16 + 5) * 128);
  const TensorView nhd = kv_cache_view(nullptr, DType::kFloat16, KvLayout::kNHD, 10, 4, 16, 128);
  const KvCacheGeometry b = kv_cache_geometry(nhd, "test");
  // [block][slot][head][dim]
  EXPECT_EQ(b.offset(3, 2, 5), ((3 * 16 + 5) * 4 + 2) * 128);
  EXPECT_EQ(kv_cache_elements(10, 4, 16, 128), 10 * 4 * 16 * 128);
  EXPECT_EQ(hnd.span_elements(), kv_cache_elements(10, 4, 16, 128));
  EXPECT_EQ(nhd.span_elements(), kv_cache_elements(10, 4, 16, 128));
}

TEST(KvLayout, OffsetsAre64Bit) {
  // 300000 blocks of 8 heads x 16 slots x 128: block 299999 starts past 2^31 elements.
  const TensorView v = kv_cache_view(nullptr, DType::kFloat16, KvLayout::kHND, 300000, 8, 16, 128);
  const KvCacheGeometry g = kv_cache_geometry(v, "test");
  const std::int64_t expected = 299999LL * 8 * 16 * 128 + 7LL * 16 * 128 + 15LL * 128;
  EXPECT_GT(expected, std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(g.offset(299999, 7, 15), expected);
  const std::int32_t table[] = {5, 299999};
  const BlockTableView t{table, 2};
  EXPECT_EQ(token_offset(g, t, 0, 16 + 15, 7, 4), expected);
  EXPECT_EQ(slot_id(299999, 15, 16), 299999LL * 16 + 15);
}

// The cache ops' arithmetic at the top of the large-offset GPU tests' caches (600000 blocks
// of 2 heads x 16 x 128, kNHD): slot ids, the slot range check and byte offsets all exceed
// 32 bits, in both layouts, and prefill's token_offset agrees with the geometry.
TEST(KvLayout, CacheOpAndPrefillOffsetsAre64Bit) {
  for (KvLayout layout : {KvLayout::kHND, KvLayout::kNHD}) {
    const TensorView v = kv_cache_view(nullptr, DType::kFloat16, layout, 600000, 2, 16, 128);
    const KvCacheGeometry g = kv_cache_geometry(v, "test");
    EXPECT_EQ(g.num_slots(), 600000LL * 16);
    // reshape_and_cache: slot -> (block, slot in block) -> element and byte offsets.
    const std::int64_t slot = slot_id(599999, 13, 16);
    EXPECT_EQ(slot / g.block_size, 599999);
    EXPECT_LT(slot, g.num_slots());
    const std::int64_t head1 = g.offset(slot / g.block_size, 1, slot % g.block_size);
    const std::int64_t expected = layout == KvLayout::kHND
                                      ? 599999LL * 4096 + 1LL * 16 * 128 + 13LL * 128
                                      : 599999LL * 4096 + 13LL * 2 * 128 + 1LL * 128;
    EXPECT_EQ(head1, expected);
    EXPECT_GT(head1 * 2, std::numeric_limits<std::uint32_t>::max()) << "byte offset needs 64 bits";
    // copy_blocks: the last 16-byte vector of a top block, in bytes.
    const std::int64_t last_vec = g.offset(599999, 1, 15) * 2 + (128 * 2 - 16);
    EXPECT_EQ(last_vec + 16, 600000LL * 4096 * 2);
    // Prefill: the table walk to a top block matches the geometry.
    const std::int32_t table[] = {599998, 599999};
    const BlockTableView t{table, 2};
    EXPECT_EQ(token_offset(g, t, 0, 16 + 13, 1, 4), head1);
  }
}

TEST(KvLayout, TokenOffsetWalksTheBlockTable) {
  const TensorView v = kv_cache_view(nullptr, DType::kFloat32, KvLayout::kHND, 8, 2, 4, 64);
  const KvCacheGeometry g = kv_cache_geometry(v, "test");
  const std::int32_t table[] = {7, 2, 5, -1, /* row 1 */ 1, 0, -1, -1};
  const BlockTableView t{table, 4};
  EXPECT_EQ(token_offset(g, t, 0, 0, 0, 2), g.offset(7, 0, 0));
  EXPECT_EQ(token_offset(g, t, 0, 5, 1, 2), g.offset(2, 1, 1));
  EXPECT_EQ(token_offset(g, t, 0, 11, 1, 2), g.offset(5, 1, 3));
  EXPECT_EQ(token_offset(g, t, 1, 4, 0, 2), g.offset(0, 0, 0));
}

TEST(KvLayout, GeometryRejectsBadViews) {
  float x[16];
  EXPECT_THROW(kv_cache_geometry(TensorView::contiguous(x, DType::kFloat32, {2, 8}), "f"), KernelError);
  const TensorView strided_dim = TensorView::strided(x, DType::kFloat32, {1, 1, 2, 4}, {16, 16, 8, 2});
  try {
    kv_cache_geometry(strided_dim, "my_fn");
    FAIL();
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("my_fn: head_dim must be contiguous"), std::string::npos)
        << e.what();
  }
}

TEST(KvLayout, PackBatchPadsAndCounts) {
  std::vector<BatchSequence> seqs(3);
  seqs[0] = {{4, 1}, 17, 17};   // prefill of 17 tokens in 2 blocks of 16
  seqs[1] = {{}, 0, 0};         // empty
  seqs[2] = {{3, 0, 2}, 33, 1};  // decode step of a 33-token sequence
  const PackedBatch b = pack_batch(seqs, 16, 5);
  EXPECT_EQ(b.num_seqs, 3);
  EXPECT_EQ(b.max_blocks_per_seq, 3);
  EXPECT_EQ(b.block_table, (std::vector<std::int32_t>{4, 1, -1, -1, -1, -1, 3, 0, 2}));
  EXPECT_EQ(b.kv_lens, (std::vector<std::int32_t>{17, 0, 33}));
  EXPECT_EQ(b.query_starts, (std::vector<std::int32_t>{0, 17, 17, 18}));
  EXPECT_EQ(b.max_kv_len, 33);
  EXPECT_EQ(b.max_query_len, 17);
  EXPECT_EQ(b.total_kv_tokens, 50);
  EXPECT_EQ(b.num_query_tokens, 18);
  EXPECT_EQ(b.block_table_view().describe(), "i32[3, 3] strides [3, 1]");
}

TEST(KvLayout, PackBatchNamesTheBadSequence) {
  std::vector<BatchSequence> seqs(2);
  seqs[0] = {{0}, 3, 1};
  seqs[1] = {{1}, 17, 1};  // needs 2 blocks of 16
  try {
    pack_batch(seqs, 16);
    FAIL();
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("sequence 1"), std::string::npos) << e.what();
  }
  seqs[1] = {{1, 9}, 17, 1};
  EXPECT_THROW(pack_batch(seqs, 16, 5), KernelError);  // block 9 >= 5
  seqs[1] = {{1, 2}, 17, 18};
  EXPECT_THROW(pack_batch(seqs, 16), KernelError);  // query_len > kv_len
  EXPECT_THROW(pack_batch(seqs, 0), KernelError);
}

}  // namespace
}  // namespace pagesim::kernels
