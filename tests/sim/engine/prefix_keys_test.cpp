// prompt_block_keys: trace hash ids (one per hash block of H tokens) to the allocator's
// chained keys of full B-token blocks. Block j's key depends on every id up to the hash
// block holding token (j+1)B - 1, and only on those.
#include "sim/engine/prefix_keys.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <vector>

#include "allocator/pool/block_hash.h"

namespace pagesim::sim {
namespace {

using Ids = std::vector<std::uint64_t>;
using Keys = std::vector<alloc::BlockHash>;

Keys keys(const Ids& ids, std::int64_t hash_block, std::int64_t prompt, std::int64_t block = 16) {
  return prompt_block_keys(ids, hash_block, prompt, block);
}

// Index of the first differing key (a.size() if none), checking the rest differ too.
std::size_t first_difference(const Keys& a, const Keys& b) {
  EXPECT_EQ(a.size(), b.size());
  std::size_t j = 0;
  while (j < a.size() && a[j] == b[j]) ++j;
  for (std::size_t k = j; k < a.size(); ++k) EXPECT_NE(a[k], b[k]) << "block " << k << " after the first difference";
  return j;
}

// Mooncake: 512-token hash blocks, 16-token allocator blocks (32 allocator blocks each).
TEST(PrefixKeys, MooncakeBlocksFullyCovered) {
  const Keys a = keys({10, 11, 12}, 512, 1536);
  ASSERT_EQ(a.size(), 96u);
  // Every key of one prompt is distinct, including the 32 inside one hash block.
  EXPECT_EQ(std::set<alloc::BlockHash>(a.begin(), a.end()).size(), a.size());
  // Deterministic.
  EXPECT_EQ(a, keys({10, 11, 12}, 512, 1536));
}

TEST(PrefixKeys, EqualIdPrefixesGiveEqualKeysUpToTheRightBlock) {
  const Keys a = keys({10, 11, 12}, 512, 1536);
  // Third id differs: blocks 0..63 (tokens < 1024) agree, 64..95 all differ.
  EXPECT_EQ(first_difference(a, keys({10, 11, 99}, 512, 1536)), 64u);
  // Second id differs: only the first 32 blocks agree.
  EXPECT_EQ(first_difference(a, keys({10, 98, 12}, 512, 1536)), 32u);
  // Same ids, longer prompt: the shorter one's keys are a prefix of the longer one's.
  const Keys longer = keys({10, 11, 12, 13}, 512, 2048);
  ASSERT_EQ(longer.size(), 128u);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), longer.begin()));
}

TEST(PrefixKeys, DifferingFirstIdChangesEveryKey) {
  const Keys a = keys({10, 11, 12}, 512, 1536);
  EXPECT_EQ(first_difference(a, keys({7, 11, 12}, 512, 1536)), 0u);
}

TEST(PrefixKeys, PartialCoverage) {
  // Ids cover 1024 tokens of a 1500-token prompt: keys for those 64 blocks only.
  EXPECT_EQ(keys({10, 11}, 512, 1500).size(), 64u);
  // Ids cover more than the prompt: 1100 tokens hold 68 full blocks; the partial 69th
  // block (tokens 1088..1099) gets no key.
  const Keys p = keys({10, 11, 12}, 512, 1100);
  ASSERT_EQ(p.size(), 68u);
  EXPECT_TRUE(std::equal(p.begin(), p.end(), keys({10, 11, 12}, 512, 1536).begin()));
  // A 1000-token prompt never reaches the third hash block: its id does not matter.
  EXPECT_EQ(keys({10, 11, 12}, 512, 1000), keys({10, 11, 77}, 512, 1000));
  EXPECT_EQ(keys({10, 11, 12}, 512, 1000).size(), 62u);
  // Less than one allocator block, no ids, an empty prompt: no keys.
  EXPECT_TRUE(keys({10}, 512, 15).empty());
  EXPECT_TRUE(keys({}, 512, 4096).empty());
  EXPECT_TRUE(keys({10, 11}, 512, 0).empty());
  EXPECT_EQ(keys({10}, 512, 16).size(), 1u);
}

TEST(PrefixKeys, HashBlockSmallerThanAllocatorBlock) {
  // H = 4, B = 16: allocator block j covers ids 4j .. 4j+3.
  Ids ids(12);
  std::iota(ids.begin(), ids.end(), 100);
  const Keys a = keys(ids, 4, 48);
  ASSERT_EQ(a.size(), 3u);
  Ids b = ids;
  b[5] = 1;  // inside block 1
  EXPECT_EQ(first_difference(a, keys(b, 4, 48)), 1u);
  Ids c = ids;
  c[3] = 1;  // the last id of block 0
  EXPECT_EQ(first_difference(a, keys(c, 4, 48)), 0u);
  Ids d = ids;
  d[11] = 1;  // the last id of the last block
  EXPECT_EQ(first_difference(a, keys(d, 4, 48)), 2u);
  // 10 ids cover 40 tokens: two full blocks.
  EXPECT_EQ(keys(Ids(ids.begin(), ids.begin() + 10), 4, 48).size(), 2u);
}

TEST(PrefixKeys, HashBlockNotDividingTheAllocatorBlock) {
  // H = 5, B = 16: block 0 covers tokens 0..15 = ids 0..3; block 1 covers 16..31 = ids 3..6.
  Ids ids(8);
  std::iota(ids.begin(), ids.end(), 200);
  const Keys a = keys(ids, 5, 40);
  ASSERT_EQ(a.size(), 2u);  // 40 tokens covered: 2 full blocks
  Ids b = ids;
  b[3] = 1;  // shared by blocks 0 and 1
  EXPECT_EQ(first_difference(a, keys(b, 5, 40)), 0u);
  Ids c = ids;
  c[4] = 1;  // block 1 only
  EXPECT_EQ(first_difference(a, keys(c, 5, 40)), 1u);
  Ids d = ids;
  d[7] = 1;  // tokens 35..39: in no full block's range
  EXPECT_EQ(first_difference(a, keys(d, 5, 40)), 2u);
}

TEST(PrefixKeys, EqualSizesChainOneIdPerBlock) {
  // H = B: key j = chain(key j-1, id j, j).
  const Ids ids{5, 6, 7};
  const Keys k = keys(ids, 16, 48);
  ASSERT_EQ(k.size(), 3u);
  alloc::BlockHash h = alloc::kRootBlockHash;
  for (std::size_t j = 0; j < ids.size(); ++j) {
    h = alloc::chain_block_hash(h, ids[j], j);
    EXPECT_EQ(k[j], h) << "block " << j;
  }
}

}  // namespace
}  // namespace pagesim::sim
