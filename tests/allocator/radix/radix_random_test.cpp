// RadixAllocator under random admissions (with shared prefixes, first chunks of any
// length, re-admissions), appends, prompt chunks, forks and frees: validate() after every
// operation, and the memory classes checked against the pool size. The invariants are the tree's (ref counts, lock counts, child
// counts, LRU leaves, sizes) and the allocator's (tables, counters).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "allocator/radix/radix_allocator.h"

namespace pagesim::alloc {
namespace {

struct Live {
  SeqId seq;
  std::vector<BlockHash> keys;  // every full prompt page's key
  std::int64_t prompt = 0;      // prompt + generated tokens at admission
  std::int64_t held = 0;        // tokens held
};

class RadixRandomTest : public ::testing::TestWithParam<std::int32_t> {};

TEST_P(RadixRandomTest, InvariantsHoldAfterEveryOperation) {
  const std::int32_t page = GetParam();
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed * 7919 + static_cast<std::uint64_t>(page));
    RadixAllocatorSettings s;
    s.num_pages = 48;
    s.page_size = page;
    RadixAllocator a(s);
    std::vector<Live> live;
    SeqId next = 1;
    std::int64_t admitted = 0, hits = 0;
    auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
    for (int op = 0; op < 3000; ++op) {
      const int what = static_cast<int>(rng() % 10);
      if (what < 4 || live.empty()) {
        // A prompt from one of 3 families (shared prefixes), cut at a random length.
        const std::int64_t prompt = 1 + static_cast<std::int64_t>(rng() % (12 * page));
        const BlockHash family = rng() % 3;
        // Chained keys (equal keys mean equal prefixes), as prefix_keys.h makes them.
        std::vector<BlockHash> keys;
        BlockHash content = family * 1000;
        BlockHash key = 0x9e3779b97f4a7c15ULL;
        for (std::int64_t i = 0; i < prompt / page; ++i) {
          if (i >= 3 && rng() % 4 == 0) content += 1 + rng() % 50;  // diverge from the family
          key = (key ^ (content + static_cast<BlockHash>(i))) * 0xff51afd7ed558ccdULL;
          keys.push_back(key);
        }
        // Sometimes hold only a first chunk of any length (chunked prefill: max_new_tokens
        // after the hits); sometimes a re-admission after a recompute preemption, holding
        // generated tokens too.
        AdmitRequest r;
        r.seq = next;
        r.prompt_tokens = prompt;
        r.output_tokens = 1 + static_cast<std::int64_t>(rng() % 8);
        r.prompt_block_hashes = keys;
        if (rng() % 3 == 0) r.max_new_tokens = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(prompt));
        if (rng() % 5 == 0) {
          r.readmission = true;
          r.generated_tokens = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(r.output_tokens));
        }
        const bool could = a.can_admit(r);
        const bool plain = rng() % 2;
        const std::int64_t cap = static_cast<std::int64_t>(rng() % 6);
        const bool could_capped = a.pages_to_admit(r, cap) <= a.num_available_pages();
        const std::int64_t cached_before = a.cached_prefix_tokens(keys);
        const PrefixCacheStats before = a.stats().prefix;
        AdmitResult res = plain ? a.admit(r) : a.admit_matched(r, cap);
        const PrefixCacheStats after = a.stats().prefix;
        if (res.admitted) {
          ++admitted;
          hits += res.cached_tokens;
          EXPECT_LT(res.cached_tokens, r.tokens_at_admission());
          EXPECT_LE(res.cached_tokens, cached_before);
          EXPECT_EQ(res.cached_tokens % page, 0);
          EXPECT_EQ(res.held_tokens, r.held_tokens(res.cached_tokens));
          EXPECT_EQ(a.sequence_tokens(next), res.held_tokens);
          // First admissions count every prompt token; re-admissions only their hits, apart.
          EXPECT_EQ(after.prompt_tokens - before.prompt_tokens, r.readmission ? 0 : prompt);
          EXPECT_EQ(after.hit_tokens - before.hit_tokens, r.readmission ? 0 : res.cached_tokens);
          EXPECT_EQ(after.readmission_hit_tokens - before.readmission_hit_tokens,
                    r.readmission ? res.cached_tokens : 0);
          live.push_back({next, keys, r.tokens_at_admission(), res.held_tokens});
          ++next;
        } else {
          EXPECT_FALSE(plain ? could : could_capped);
          EXPECT_EQ(after.prompt_tokens, before.prompt_tokens);
        }
        EXPECT_EQ(a.cached_prefix_tokens(keys), a.match_pages(keys) * page);
      } else if (what < 6) {
        Live& l = live[pick(live.size())];
        if (l.held < l.prompt) {  // a next chunk of the prompt, of any length
          const std::int64_t n = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(l.prompt - l.held));
          if (a.append(l.seq, n)) l.held += n;
        } else {
          const std::int64_t n = 1 + static_cast<std::int64_t>(rng() % 3);
          const bool could = a.can_append(l.seq, n);
          const bool ok = a.append(l.seq, n);
          EXPECT_EQ(could, ok);
          if (ok) l.held += n;
        }
      } else if (what < 7) {
        Live l = live[pick(live.size())];
        if (a.fork(l.seq, next)) {
          l.seq = next++;
          live.push_back(l);
          a.take_pending_copies();
        }
      } else {
        const std::size_t i = pick(live.size());
        a.free(live[i].seq);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      }
      ASSERT_NO_THROW(a.validate()) << "seed " << seed << " op " << op;
      const MemoryBreakdown b = a.breakdown();
      ASSERT_EQ(b.total(), a.capacity_slots());
      ASSERT_LE(b.cached_free, b.free);
      for (const Live& l : live) ASSERT_EQ(a.sequence_tokens(l.seq), l.held);
    }
    for (const Live& l : live) a.free(l.seq);
    a.validate();
    EXPECT_EQ(a.breakdown().token_states, 0);
    EXPECT_GT(admitted, 100);
    EXPECT_GT(hits, 0) << "shared prefixes were hit";
    EXPECT_GT(a.stats().prefix.evictions, 0) << "the pool ran full";
  }
}

INSTANTIATE_TEST_SUITE_P(PageSizes, RadixRandomTest, ::testing::Values(1, 2, 4));

}  // namespace
}  // namespace pagesim::alloc
