#include "sim/cost/cuda_graph_sizes.h"

#include <gtest/gtest.h>

#include <vector>

namespace pagesim::sim {
namespace {

TEST(CudaGraphSizes, VllmDefaultForMaxNumSeqs256) {
  // max_num_seqs 256: min(2·256, 512) = 512; max_num_batched_tokens 8192 does not cap it.
  EXPECT_EQ(CudaGraphSizes::vllm_default_max_size(256), 512);
  const CudaGraphSizes g = CudaGraphSizes::vllm_default(512, 8192);
  std::vector<std::int64_t> expected = {1, 2, 4};
  for (std::int64_t s = 8; s < 256; s += 8) expected.push_back(s);
  for (std::int64_t s = 256; s <= 512; s += 16) expected.push_back(s);
  EXPECT_EQ(std::vector<std::int64_t>(g.sizes().begin(), g.sizes().end()), expected);
  EXPECT_EQ(g.max_size(), 512);
  EXPECT_EQ(CudaGraphSizes::vllm_default_max_size(1024), 512);
  EXPECT_EQ(CudaGraphSizes::vllm_default_max_size(8), 16);
}

TEST(CudaGraphSizes, PadsToTheNextCapturedSizeAndRunsLargerBatchesEagerly) {
  const CudaGraphSizes g = CudaGraphSizes::vllm_default(512, 8192);
  EXPECT_EQ(g.padded_tokens(0), 0);
  EXPECT_EQ(g.padded_tokens(1), 1);
  EXPECT_EQ(g.padded_tokens(3), 4);
  EXPECT_EQ(g.padded_tokens(5), 8);
  EXPECT_EQ(g.padded_tokens(16), 16);
  EXPECT_EQ(g.padded_tokens(17), 24);
  EXPECT_EQ(g.padded_tokens(249), 256);
  EXPECT_EQ(g.padded_tokens(257), 272);
  EXPECT_EQ(g.padded_tokens(512), 512);
  EXPECT_EQ(g.padded_tokens(513), 513);
}

TEST(CudaGraphSizes, CappedByMaxNumBatchedTokensAndTheStepGrid) {
  // max 100: sizes 1, 2, 4, 8, ..., 96; 97..100 run eagerly (the largest size is 96).
  const CudaGraphSizes g = CudaGraphSizes::vllm_default(512, 100);
  EXPECT_EQ(g.max_size(), 96);
  EXPECT_EQ(g.padded_tokens(97), 97);
  EXPECT_EQ(CudaGraphSizes::vllm_default(3, 0).max_size(), 2);
}

TEST(CudaGraphSizes, OffPadsNothing) {
  EXPECT_EQ(CudaGraphSizes().padded_tokens(7), 7);
  EXPECT_EQ(CudaGraphSizes::vllm_default(0, 8192).max_size(), 0);
  EXPECT_EQ(CudaGraphSizes::vllm_default(0, 8192).padded_tokens(7), 7);
}

}  // namespace
}  // namespace pagesim::sim
