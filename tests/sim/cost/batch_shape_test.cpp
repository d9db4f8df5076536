#include "sim/cost/batch_shape.h"

#include <gtest/gtest.h>

namespace pagesim::sim {
namespace {

TEST(CostBatchShape, PrefillChunkCountsCausalPairs) {
  BatchShape b;
  b.add_prefill_chunk(4, 0, true);  // pairs 1+2+3+4 = 10
  EXPECT_EQ(b.prefill_seqs, 1);
  EXPECT_EQ(b.prefill_tokens, 4);
  EXPECT_DOUBLE_EQ(b.prefill_attention_pairs, 10);
  EXPECT_EQ(b.prefill_context_tokens, 4);
  EXPECT_EQ(b.prefill_sampling_seqs, 1);
  b.add_prefill_chunk(3, 5, false);  // 3·5 + 3·4/2 = 21
  EXPECT_EQ(b.prefill_seqs, 2);
  EXPECT_EQ(b.prefill_tokens, 7);
  EXPECT_DOUBLE_EQ(b.prefill_attention_pairs, 31);
  EXPECT_EQ(b.prefill_context_tokens, 12);
  EXPECT_EQ(b.prefill_sampling_seqs, 1);
  EXPECT_EQ(b.sampling_seqs(), 1);
}

TEST(CostBatchShape, DecodeAndTotals) {
  BatchShape b;
  EXPECT_TRUE(b.empty());
  b.add_decode_seq(100);
  b.add_decode_seq(28);
  EXPECT_EQ(b.decode_seqs, 2);
  EXPECT_EQ(b.decode_context_tokens, 128);
  b.add_prefill_chunk(10, 0, true);
  EXPECT_EQ(b.total_tokens(), 12);
  EXPECT_EQ(b.sampling_seqs(), 3);
  EXPECT_FALSE(b.empty());
}

}  // namespace
}  // namespace pagesim::sim
