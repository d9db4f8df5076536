// Mattson's one-pass LRU on hand-computed sequences: the hit capacity of every access, the
// chained lookup (a miss ends the hit run even when later blocks are cached), and agreement
// with the direct LRU simulation.
#include "sim/analysis/lru_stack_distance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "analysis_test_util.h"
#include "sim/analysis/ideal_block_cache.h"

namespace pagesim::sim {
namespace {

using testing::letters;
using testing::request_of;
constexpr std::int64_t kNever = LruStackDistance::kNever;

// Hit capacities of single-block requests, one per request.
std::vector<std::int64_t> capacities_of(std::string_view sequence) {
  LruStackDistance lru;
  std::vector<std::int64_t> out, one;
  for (const auto& blocks : letters(sequence)) {
    lru.lookup_then_use(blocks, &one);
    out.push_back(one.at(0));
  }
  return out;
}

TEST(LruStackDistance, ABACBA) {
  // A, B cold; A: {B, A} used since its last use -> 2; C cold; B: {A, C, B} -> 3; A: {C, B, A} -> 3.
  EXPECT_EQ(capacities_of("ABACBA"), (std::vector<std::int64_t>{kNever, kNever, 2, kNever, 3, 3}));
}

TEST(LruStackDistance, HitsAtCapacityOneTwoThree) {
  // Hits at capacity c = accesses with hit capacity <= c: 0, 1 (the second A) and 3.
  const std::vector<std::int64_t> caps = capacities_of("ABACBA");
  auto hits = [&](std::int64_t c) { return std::count_if(caps.begin(), caps.end(), [c](auto k) { return k <= c; }); };
  EXPECT_EQ(hits(1), 0);
  EXPECT_EQ(hits(2), 1);
  EXPECT_EQ(hits(3), 3);
  EXPECT_EQ(capacities_of("AA"), (std::vector<std::int64_t>{kNever, 1}));
}

TEST(LruStackDistance, AMissEndsTheHitRun) {
  // [a b], [c], [a b]: at the third request a's rank is 3 ({a, b, c}), b's 2 ({b, c}); b is
  // cached at capacity 2 but unreachable without a, so both need 3.
  LruStackDistance lru;
  std::vector<std::int64_t> caps;
  lru.lookup_then_use(prompt_blocks(request_of({1, 2}), 4, 4, true), &caps);
  EXPECT_EQ(caps, (std::vector<std::int64_t>{kNever, kNever}));
  lru.lookup_then_use(prompt_blocks(request_of({3}), 4, 4, true), &caps);
  lru.lookup_then_use(prompt_blocks(request_of({1, 2}), 4, 4, true), &caps);
  EXPECT_EQ(caps, (std::vector<std::int64_t>{3, 3}));
  EXPECT_EQ(lru.distinct_blocks(), 3);

  IdealBlockCache two(IdealPolicy::kLru, 2);
  two.lookup_then_use(prompt_blocks(request_of({1, 2}), 4, 4, true));
  two.lookup_then_use(prompt_blocks(request_of({3}), 4, 4, true));
  EXPECT_EQ(two.lookup_then_use(prompt_blocks(request_of({1, 2}), 4, 4, true)), 0u);
}

TEST(LruStackDistance, RanksAreTakenBeforeTheRequestUsesItsBlocks) {
  // [a b c] twice: every block was used 3 distinct blocks ago, so all hit at capacity 3 and
  // none at 2 (the request's own earlier blocks do not count against its later ones).
  LruStackDistance lru;
  std::vector<std::int64_t> caps;
  lru.lookup_then_use(prompt_blocks(request_of({1, 2, 3}), 4, 4, true), &caps);
  lru.lookup_then_use(prompt_blocks(request_of({1, 2, 3}), 4, 4, true), &caps);
  EXPECT_EQ(caps, (std::vector<std::int64_t>{3, 3, 3}));
}

TEST(LruStackDistance, AgreesWithDirectLruOnARandomTrace) {
  std::mt19937_64 rng(11);
  std::vector<std::vector<PromptBlock>> trace;
  for (int i = 0; i < 400; ++i) {
    // Prompts share prefixes: a few roots, a few continuations each.
    std::vector<std::uint64_t> ids = {rng() % 6};
    const int len = 1 + static_cast<int>(rng() % 5);
    for (int j = 1; j < len; ++j) ids.push_back(ids.back() * 7 + rng() % 3);
    trace.push_back(prompt_blocks(request_of(ids), 4, 4, true));
  }
  LruStackDistance lru;
  std::vector<std::vector<std::int64_t>> caps(trace.size());
  for (std::size_t i = 0; i < trace.size(); ++i) lru.lookup_then_use(trace[i], &caps[i]);
  for (const std::int64_t c : {0, 1, 2, 3, 5, 8, 13, 40, 1000}) {
    IdealBlockCache cache(IdealPolicy::kLru, c);
    for (std::size_t i = 0; i < trace.size(); ++i) {
      const auto expected = static_cast<std::size_t>(
          std::count_if(caps[i].begin(), caps[i].end(), [c](std::int64_t k) { return k <= c; }));
      ASSERT_EQ(cache.lookup_then_use(trace[i]), expected) << "capacity " << c << ", request " << i;
    }
  }
}

}  // namespace
}  // namespace pagesim::sim
