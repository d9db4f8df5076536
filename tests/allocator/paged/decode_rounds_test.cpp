// Decode runs on a paged pool (KvAllocator::decode_run_rounds / grow_rounds): two
// allocators driven by the same seeded random operations (admissions with and without
// prefix hits, appends, forks, frees), and every so often a run of rounds over a random
// subset of sequences — one by one on the first, in one grow_rounds call on the second. The
// rounds one by one must move breakdown() and the block counts as the promised cycle says,
// and afterwards both pools must be the same: breakdown, stats, every block table and token
// count, and validate() on both (and so every later operation, which reads the free list).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "allocator/paged/paged_allocator.h"
#include "document_hashes.h"

namespace pagesim::alloc {
namespace {

struct Case {
  bool prefix_cache;
  bool single_free_queue;
};

class DecodeRounds : public ::testing::TestWithParam<Case> {};

void expect_same(const PagedAllocator& a, const PagedAllocator& b, const std::vector<SeqId>& live) {
  ASSERT_EQ(a.breakdown(), b.breakdown());
  const AllocatorStats sa = a.stats(), sb = b.stats();
  ASSERT_EQ(sa.logical_blocks, sb.logical_blocks);
  ASSERT_EQ(sa.physical_blocks, sb.physical_blocks);
  ASSERT_EQ(sa.prefix.evictions, sb.prefix.evictions);
  ASSERT_EQ(a.num_free_blocks(), b.num_free_blocks());
  for (SeqId s : live) {
    ASSERT_EQ(a.sequence_tokens(s), b.sequence_tokens(s)) << "sequence " << s;
    ASSERT_EQ(a.block_table(s), b.block_table(s)) << "sequence " << s;
  }
  a.validate();
  b.validate();
}

TEST_P(DecodeRounds, ManyRoundsAtOnceLeaveThePoolAsRoundsOneByOne) {
  PagedAllocatorSettings settings;
  settings.num_blocks = 256;
  settings.block_size = 8;
  settings.prefix_cache = GetParam().prefix_cache;
  settings.single_free_queue = GetParam().single_free_queue;
  PagedAllocator one(settings), many(settings);
  std::mt19937_64 rng(GetParam().prefix_cache * 2 + GetParam().single_free_queue + 7);
  auto draw = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };

  std::vector<SeqId> live;
  SeqId next = 1;
  std::int64_t runs = 0, rounds_total = 0, blocks_taken = 0;
  for (int op = 0; op < 20000; ++op) {
    const std::int64_t kind = draw(0, 9);
    if (kind <= 1 || live.empty()) {  // admit, prompts from a few documents (prefix hits)
      const std::int64_t doc = draw(0, 3), prompt = draw(1, 40);
      const std::vector<BlockHash> hashes = test_support::document_block_hashes(doc, prompt, settings.block_size);
      AdmitRequest r;
      r.seq = next;
      r.prompt_tokens = prompt;
      r.output_tokens = draw(1, 60);
      r.prompt_block_hashes = hashes;
      if (!one.can_admit(r)) continue;
      ASSERT_TRUE(one.admit(r).admitted);
      ASSERT_TRUE(many.admit(r).admitted);
      live.push_back(next++);
    } else if (kind <= 3) {  // free
      const std::size_t i = static_cast<std::size_t>(draw(0, static_cast<std::int64_t>(live.size()) - 1));
      one.free(live[i]);
      many.free(live[i]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (kind == 4) {  // fork: shared blocks, a copy-on-write ahead
      const SeqId parent = live[static_cast<std::size_t>(draw(0, static_cast<std::int64_t>(live.size()) - 1))];
      ASSERT_TRUE(one.fork(parent, next));
      ASSERT_TRUE(many.fork(parent, next));
      live.push_back(next++);
    } else if (kind <= 6) {  // append a few tokens
      const SeqId s = live[static_cast<std::size_t>(draw(0, static_cast<std::int64_t>(live.size()) - 1))];
      const std::int64_t n = draw(1, 12);
      const bool ok = one.append(s, n);
      ASSERT_EQ(ok, many.append(s, n));
    } else {  // a run over a random subset, in random order
      std::vector<SeqId> pick = live;
      std::shuffle(pick.begin(), pick.end(), rng);
      pick.resize(static_cast<std::size_t>(draw(1, static_cast<std::int64_t>(pick.size()))));
      std::vector<SeqHandle> seqs;
      for (SeqId s : pick) seqs.push_back(one.handle(s));
      const std::int64_t keep = draw(0, 3) * settings.block_size, max_rounds = draw(1, 40);
      alloc::DecodeRounds promised, again;
      one.decode_run_rounds(seqs, keep, max_rounds, &promised);
      many.decode_run_rounds(seqs, keep, max_rounds, &again);
      ASSERT_EQ(promised.rounds, again.rounds);
      ASSERT_LE(promised.rounds, max_rounds);
      if (promised.rounds == 0) continue;
      ++runs;
      rounds_total += promised.rounds;
      for (std::int64_t j = 0; j < promised.rounds; ++j) {
        const MemoryBreakdown before = one.breakdown();
        const AllocatorStats st = one.stats();
        const std::int64_t copies = st.pending_copies, evictions = st.prefix.evictions;
        for (const SeqHandle& h : seqs) ASSERT_TRUE(one.grow(h, 1));
        const alloc::DecodeRound r = promised.round(static_cast<std::size_t>(j) % promised.cycle_size());
        MemoryBreakdown expected = before;
        r.apply_to(expected);
        ASSERT_EQ(one.breakdown(), expected) << "round " << j + 1;
        ASSERT_EQ(one.stats().physical_blocks, st.physical_blocks + r.blocks);
        ASSERT_EQ(one.stats().logical_blocks, st.logical_blocks + r.blocks);
        ASSERT_EQ(one.stats().pending_copies, copies);
        ASSERT_EQ(one.stats().prefix.evictions, evictions);
        ASSERT_GE(one.breakdown().free, keep);
        blocks_taken += r.blocks;
      }
      many.grow_rounds(seqs, promised.rounds);
      expect_same(one, many, live);
    }
  }
  expect_same(one, many, live);
  EXPECT_GT(runs, 20);
  EXPECT_GT(rounds_total, 200);
  EXPECT_GT(blocks_taken, 30);  // runs that cross block boundaries, not only fills
}

INSTANTIATE_TEST_SUITE_P(Pools, DecodeRounds,
                         ::testing::Values(Case{false, false}, Case{true, false}, Case{true, true}),
                         [](const auto& p) {
                           return std::string(p.param.prefix_cache ? "prefix" : "plain") +
                                  (p.param.single_free_queue ? "_one_queue" : "");
                         });

}  // namespace
}  // namespace pagesim::alloc
