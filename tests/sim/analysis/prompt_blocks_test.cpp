// prompt_blocks: full blocks keyed exactly as the simulator keys them (prefix_keys.h), the
// partial tail block optional, tokens without ids never a block.
#include "sim/analysis/prompt_blocks.h"

#include <gtest/gtest.h>

#include "sim/engine/prefix_keys.h"

namespace pagesim::sim {
namespace {

traces::TraceRequest request(std::int64_t prompt, std::vector<std::uint64_t> ids) {
  traces::TraceRequest r;
  r.prompt_tokens = prompt;
  r.hash_ids = std::move(ids);
  return r;
}

TEST(PromptBlocks, FullBlocksAreTheSimulatorsKeys) {
  const auto r = request(10, {5, 6, 7});  // hash blocks of 4: 4 + 4 + 2 tokens
  for (const std::int64_t b : {1, 2, 3, 4, 5, 8}) {
    const auto keys = prompt_block_keys(r.hash_ids, 4, r.prompt_tokens, b);
    const auto blocks = prompt_blocks(r, 4, b, false);
    ASSERT_EQ(blocks.size(), keys.size()) << b;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      EXPECT_EQ(blocks[i].key, keys[i]);
      EXPECT_EQ(blocks[i].tokens, b);
    }
  }
}

TEST(PromptBlocks, PartialTailIsOneMoreBlockHoldingTheRest) {
  const auto r = request(10, {5, 6, 7});
  const auto blocks = prompt_blocks(r, 4, 4, true);
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[2].tokens, 2);
  // The tail's key depends on its id and its prefix.
  EXPECT_NE(blocks[2].key, prompt_blocks(request(10, {5, 6, 8}), 4, 4, true)[2].key);
  EXPECT_NE(blocks[2].key, prompt_blocks(request(10, {9, 6, 7}), 4, 4, true)[2].key);
  EXPECT_EQ(blocks[1].key, prompt_blocks(request(10, {5, 6, 8}), 4, 4, true)[1].key);
  // Blocks of 3 tokens: 3 full (9 tokens) + a 1-token tail.
  const auto threes = prompt_blocks(r, 4, 3, true);
  ASSERT_EQ(threes.size(), 4u);
  EXPECT_EQ(threes[3].tokens, 1);
}

TEST(PromptBlocks, ChainedKeysDifferWhenAnEarlierIdDiffers) {
  const auto a = prompt_blocks(request(8, {1, 2}), 4, 4, true);
  const auto b = prompt_blocks(request(8, {3, 2}), 4, 4, true);
  EXPECT_NE(a[1].key, b[1].key);
}

TEST(PromptBlocks, TokensWithoutIdsAreNoBlock) {
  EXPECT_TRUE(prompt_blocks(request(10, {}), 4, 4, true).empty());
  const auto blocks = prompt_blocks(request(10, {1}), 4, 4, true);  // ids cover 4 tokens only
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].tokens, 4);
}

}  // namespace
}  // namespace pagesim::sim
