// EvictionPolicy on its own: hand-computed victim orders for every policy (ties included),
// and a model-based random test that drives each policy through the prefix cache's calls
// (cache, release, reuse, hit, protect, evict) and compares every victim with a plain
// reference that scans all blocks for the rule's minimum.
#include "allocator/pool/eviction_policy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace pagesim::alloc {
namespace {

// Pops every evictable block, in order.
std::vector<BlockId> drain(EvictionPolicy& p) {
  std::vector<BlockId> out;
  while (p.size() > 0) out.push_back(p.pop_victim());
  return out;
}

// Caches blocks [0, n) in id order and releases them in `order`.
std::unique_ptr<EvictionPolicy> released(EvictionKind kind, std::int64_t n, const std::vector<BlockId>& order) {
  auto p = make_eviction_policy(kind, n);
  for (BlockId b = 0; b < n; ++b) p->on_cached(b);
  for (BlockId b : order) p->insert(b);
  return p;
}

using V = std::vector<BlockId>;

TEST(EvictionPolicy, LruIsReleaseOrderAndReuseRefreshes) {
  auto p = released(EvictionKind::kLru, 4, {3, 1, 2});
  p->erase(1);   // reused ...
  p->insert(1);  // ... and released again: now the most recent
  EXPECT_EQ(drain(*p), (V{3, 2, 1}));
}

TEST(EvictionPolicy, FifoIsCachingOrderWhateverTheReleases) {
  auto p = released(EvictionKind::kFifo, 4, {3, 1, 2, 0});
  p->erase(0);
  p->on_hit(0);
  p->insert(0);  // reuse does not refresh a FIFO block
  EXPECT_EQ(drain(*p), (V{0, 1, 2, 3}));
}

TEST(EvictionPolicy, LfuFewestHitsFirstTiesByRelease) {
  auto p = make_eviction_policy(EvictionKind::kLfu, 5);
  for (BlockId b = 0; b < 5; ++b) p->on_cached(b);
  // Hits (taken while referenced): 0:2, 1:0, 2:1, 3:0, 4:1.
  p->on_hit(0);
  p->on_hit(0);
  p->on_hit(2);
  p->on_hit(4);
  // Released 4, 0, 1, 2, 3 (release times 1..5). Keys (hits, release): 4:(1,1) 0:(2,2)
  // 1:(0,3) 2:(1,4) 3:(0,5). Ties at 0 hits: 1 before 3; at 1 hit: 4 before 2.
  for (BlockId b : {4, 0, 1, 2, 3}) p->insert(b);
  EXPECT_EQ(drain(*p), (V{1, 3, 4, 2, 0}));
}

TEST(EvictionPolicy, LfuCountsReusesAndForgetsThemWhenRecached) {
  auto p = released(EvictionKind::kLfu, 3, {0, 1, 2});  // all 0 hits: release order
  p->erase(0);  // block 0 reused by a prompt: one hit, released again last
  p->on_hit(0);
  p->insert(0);
  // (0 hits: 1, 2) then 0.
  EXPECT_EQ(p->pop_victim(), 1);
  // Block 1 is handed out and cached again under a new prefix: its count restarts at 0.
  p->on_cached(1);
  p->insert(1);  // released after 0
  EXPECT_EQ(drain(*p), (V{2, 1, 0}));
}

TEST(EvictionPolicy, ProtectWaitingEvictsUnprotectedFirstThenLru) {
  auto p = released(EvictionKind::kLruProtectWaiting, 5, {0, 1, 2, 3, 4});
  ASSERT_TRUE(p->protects_pending());
  p->set_protected(0, true);
  p->set_protected(2, true);
  // Unprotected in LRU order 1, 3, 4; then the protected ones in LRU order 0, 2.
  EXPECT_EQ(drain(*p), (V{1, 3, 4, 0, 2}));
}

TEST(EvictionPolicy, ProtectWaitingKeepsReleaseOrderAcrossTierChanges) {
  auto p = released(EvictionKind::kLruProtectWaiting, 4, {0, 1, 2, 3});
  p->set_protected(0, true);
  p->set_protected(1, true);
  p->set_protected(0, false);  // back among the unprotected, at its release time (oldest)
  EXPECT_TRUE(p->is_protected(1));
  EXPECT_FALSE(p->is_protected(0));
  EXPECT_EQ(drain(*p), (V{0, 2, 3, 1}));
}

TEST(EvictionPolicy, ProtectWaitingAppliesToReferencedBlocksAndResetsOnCaching) {
  auto p = make_eviction_policy(EvictionKind::kLruProtectWaiting, 3);
  for (BlockId b = 0; b < 3; ++b) p->on_cached(b);
  p->set_protected(0, true);  // referenced when the waiting request arrives
  for (BlockId b : {0, 1, 2}) p->insert(b);
  EXPECT_EQ(p->pop_victim(), 1);
  // Block 1 is cached again under another hash: unprotected whatever it was.
  p->set_protected(1, true);
  p->on_cached(1);
  EXPECT_FALSE(p->is_protected(1));
  p->insert(1);
  EXPECT_EQ(drain(*p), (V{2, 1, 0}));
}

TEST(EvictionPolicy, OthersIgnoreProtection) {
  for (EvictionKind k : {EvictionKind::kLru, EvictionKind::kFifo, EvictionKind::kLfu}) {
    auto p = released(k, 3, {0, 1, 2});
    EXPECT_FALSE(p->protects_pending()) << to_string(k);
    p->set_protected(0, true);
    EXPECT_FALSE(p->is_protected(0)) << to_string(k);
    EXPECT_EQ(drain(*p), (V{0, 1, 2})) << to_string(k);
  }
}

// The reference: per block, the facts each rule reads; the victim is the evictable block
// with the least key, found by a scan.
struct ModelBlock {
  bool cached = false, evictable = false, prot = false;
  std::uint64_t cached_at = 0, released_at = 0, hits = 0;
};

std::tuple<std::uint64_t, std::uint64_t, BlockId> model_key(EvictionKind k, const ModelBlock& m, BlockId b) {
  switch (k) {
    case EvictionKind::kLru: return {0, m.released_at, b};
    case EvictionKind::kFifo: return {0, m.cached_at, b};
    case EvictionKind::kLfu: return {m.hits, m.released_at, b};
    case EvictionKind::kLruProtectWaiting: return {m.prot ? 1 : 0, m.released_at, b};
  }
  return {};
}

void run_model(EvictionKind kind, std::uint64_t seed) {
  constexpr BlockId kBlocks = 24;
  auto p = make_eviction_policy(kind, kBlocks);
  std::vector<ModelBlock> m(kBlocks);
  std::uint64_t clock = 0;
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::int64_t victims = 0, tier_moves = 0, protected_victims = 0;
  for (int op = 0; op < 100000; ++op) {
    const auto b = static_cast<BlockId>(pick(0, kBlocks - 1));
    ModelBlock& x = m[static_cast<std::size_t>(b)];
    const int what = pick(0, 9);
    if (what <= 1 && !x.cached) {  // a fresh block is cached (referenced by its request)
      p->on_cached(b);
      x = ModelBlock{};
      x.cached = true;
      x.cached_at = ++clock;
    } else if (what <= 3 && x.cached && !x.evictable) {  // last reference dropped
      p->insert(b);
      x.evictable = true;
      x.released_at = ++clock;
    } else if (what == 4 && x.evictable) {  // a prompt reuses it
      p->erase(b);
      p->on_hit(b);
      x.evictable = false;
      ++x.hits;
    } else if (what == 5 && x.cached && !x.evictable) {  // a prompt hits it while referenced
      p->on_hit(b);
      ++x.hits;
    } else if ((what == 6 || what == 7) && x.cached) {  // the waiting queue starts or stops holding its hash
      const bool on = pick(0, 1) == 1;
      p->set_protected(b, on);
      if (kind == EvictionKind::kLruProtectWaiting) {
        tier_moves += x.evictable && x.prot != on;
        x.prot = on;
      }
    } else if (what >= 8 && p->size() > 0) {  // the free list is empty: evict
      std::tuple<std::uint64_t, std::uint64_t, BlockId> best{~0ull, ~0ull, kNoBlock};
      for (BlockId i = 0; i < kBlocks; ++i)
        if (m[static_cast<std::size_t>(i)].evictable) best = std::min(best, model_key(kind, m[static_cast<std::size_t>(i)], i));
      const BlockId peeked = p->peek_victim();
      const BlockId v = p->pop_victim();
      ASSERT_EQ(v, std::get<2>(best)) << to_string(kind) << " op " << op;
      ASSERT_EQ(peeked, v) << to_string(kind) << " op " << op;  // peek names the victim, moves nothing
      protected_victims += m[static_cast<std::size_t>(v)].prot;
      m[static_cast<std::size_t>(v)] = ModelBlock{};
      ++victims;
    }
    std::int64_t n = 0;
    for (BlockId i = 0; i < kBlocks; ++i) {
      const ModelBlock& y = m[static_cast<std::size_t>(i)];
      n += y.evictable;
      ASSERT_EQ(p->contains(i), y.evictable) << to_string(kind) << " op " << op << " block " << i;
      if (y.cached) {
        ASSERT_EQ(p->is_protected(i), y.prot) << to_string(kind) << " op " << op << " block " << i;
      }
    }
    ASSERT_EQ(p->size(), n) << to_string(kind) << " op " << op;
  }
  EXPECT_GT(victims, 10000) << to_string(kind);
  std::printf("%s: %lld victims (%lld protected), %lld tier moves\n", std::string(to_string(kind)).c_str(),
              (long long)victims, (long long)protected_victims, (long long)tier_moves);
  if (kind == EvictionKind::kLruProtectWaiting) {  // both tiers and moves between them were exercised
    EXPECT_GT(tier_moves, 300);
    EXPECT_GT(protected_victims, 1000);
    EXPECT_LT(protected_victims, victims - 1000);
  }
}

TEST(EvictionPolicyRandom, EveryPolicyMatchesItsRuleByScan) {
  std::uint64_t seed = 11;
  for (const auto& [kind, name] : kEvictionKindNames) {
    SCOPED_TRACE(std::string(name));
    run_model(kind, seed++);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace pagesim::alloc
