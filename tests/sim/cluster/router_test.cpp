// Routing decisions on hand-traced timelines: two replicas, each a vllm scheduler over a
// paged pool of 64 slots (16 blocks of 4) whose every iteration takes exactly 1 s, so each
// request's replica and finishing time follow from the router's rule by hand.
#include "sim/cluster/router.h"

#include <gtest/gtest.h>

#include <random>

#include "cluster_harness.h"

namespace pagesim::sim {
namespace {

using testing::ClusterOutcome;
using testing::ReplicaShape;
using testing::simulate_cluster;
using testing::trace_req;

// Trace B: r1 decodes 5 tokens on whichever replica gets it; r2..r4 arrive while it runs,
// r5 after r2..r4 are done.
std::vector<traces::TraceRequest> trace_b() {
  return {trace_req(1, 0.0, 4, 5), trace_req(2, 0.1, 4, 1), trace_req(3, 0.2, 4, 1), trace_req(4, 0.3, 4, 1),
          trace_req(5, 3.5, 4, 1)};
}

RouterSettings router(RouterKind kind) {
  RouterSettings s;
  s.kind = kind;
  return s;
}

void expect_placed(const ClusterOutcome& o, std::uint64_t id, std::int32_t replica, double finish_s) {
  ASSERT_TRUE(o.placed.count(id)) << "request " << id << " never finished";
  EXPECT_EQ(o.placed.at(id).replica, replica) << "request " << id;
  EXPECT_DOUBLE_EQ(o.placed.at(id).finish_s, finish_s) << "request " << id;
}

TEST(RouterTimeline, RoundRobinAlternates) {
  const ClusterOutcome o = simulate_cluster(trace_b(), {ReplicaShape{}, ReplicaShape{}}, router(RouterKind::kRoundRobin));
  // Replica 0: [0,1) prefill r1; [1,2) r1 decodes + r3 prefills (r3 done at 2); r1's tokens
  // come at 1, 2, 3, 4, 5; r5 (arrived 3.5) prefills in [4,5) beside r1's last decode.
  // Replica 1: r2 in [0.1,1.1); r4 (arrived 0.3) in [1.1,2.1).
  expect_placed(o, 1, 0, 5.0);
  expect_placed(o, 2, 1, 1.1);
  expect_placed(o, 3, 0, 2.0);
  expect_placed(o, 4, 1, 2.1);
  expect_placed(o, 5, 0, 5.0);
  EXPECT_EQ(o.routed_requests, (std::vector<std::int64_t>{3, 2}));
}

TEST(RouterTimeline, LeastOutstandingPicksTheIdleReplica) {
  const ClusterOutcome o =
      simulate_cluster(trace_b(), {ReplicaShape{}, ReplicaShape{}}, router(RouterKind::kLeastOutstanding));
  // r1 -> 0 (tie: lowest index); r2 -> 1 (0 has r1); r3 -> 0 (1 each: tie); r4 -> 1 (0 has
  // r1, r3; 1 has r2); r5 at 3.5 -> 1: replica 0 still runs r1, replica 1 is empty, where
  // round robin would send it to 0. It prefills at once: [3.5, 4.5).
  expect_placed(o, 1, 0, 5.0);
  expect_placed(o, 2, 1, 1.1);
  expect_placed(o, 3, 0, 2.0);
  expect_placed(o, 4, 1, 2.1);
  expect_placed(o, 5, 1, 4.5);
  // r1's tokens at 1, 2, 3, 4, 5: its longest gap (the SLO's max TBT) is one iteration.
  EXPECT_DOUBLE_EQ(o.placed.at(1).max_token_gap_s, 1.0);
  EXPECT_DOUBLE_EQ(o.placed.at(2).max_token_gap_s, 0.0);
}

TEST(RouterTimeline, LeastKvCountsAdmittedBlocksNotQueuedRequests) {
  const ClusterOutcome o = simulate_cluster(trace_b(), {ReplicaShape{}, ReplicaShape{}}, router(RouterKind::kLeastKv));
  // r1 -> 0 (64 free each). r2 at 0.1 -> 1: r1's prompt holds a block of replica 0 (60 vs
  // 64 free). r3 at 0.2 -> 0 (60 each, tie). r4 at 0.3 -> 0: r3 only waits, holding no
  // block, so both still show 60 free. Replica 0's [1,2) runs r1's decode and both
  // prefills: r3 and r4 finish at 2. r5 at 3.5 -> 1 (replica 1 is empty again).
  expect_placed(o, 1, 0, 5.0);
  expect_placed(o, 2, 1, 1.1);
  expect_placed(o, 3, 0, 2.0);
  expect_placed(o, 4, 0, 2.0);
  expect_placed(o, 5, 1, 4.5);
}

TEST(RouterTimeline, RandomFollowsItsSeed) {
  RouterSettings s = router(RouterKind::kRandom);
  s.seed = 7;
  const ClusterOutcome o = simulate_cluster(trace_b(), {ReplicaShape{}, ReplicaShape{}, ReplicaShape{}}, s);
  // The documented draw: mt19937_64 seeded by seed ^ "router", one draw per request, mod N.
  std::mt19937_64 rng(7 ^ 0x726f75746572ULL);
  for (std::uint64_t id = 1; id <= 5; ++id) EXPECT_EQ(o.placed.at(id).replica, static_cast<std::int32_t>(rng() % 3)) << id;
  // Same seed, same file; another seed routes otherwise.
  EXPECT_EQ(simulate_cluster(trace_b(), {ReplicaShape{}, ReplicaShape{}, ReplicaShape{}}, s).iterations_csv,
            o.iterations_csv);
  RouterSettings other = s;
  other.seed = 8;
  EXPECT_NE(simulate_cluster(trace_b(), {ReplicaShape{}, ReplicaShape{}, ReplicaShape{}}, other).iterations_csv,
            o.iterations_csv);
}

// Trace C: prompts of 8 tokens (two blocks of 4, one hash id per block). r3 repeats r2's
// prompt after both replicas have emptied.
std::vector<traces::TraceRequest> trace_c() {
  auto with = [](traces::TraceRequest r, std::vector<std::uint64_t> ids) {
    r.hash_ids = std::move(ids);
    return r;
  };
  return {with(trace_req(1, 0.0, 8, 1), {1, 2}), with(trace_req(2, 0.1, 8, 1), {3, 4}),
          with(trace_req(3, 2.0, 8, 1), {3, 4}), with(trace_req(4, 2.05, 8, 1), {3, 4})};
}

std::vector<ReplicaShape> cached_pair() {
  ReplicaShape s;
  s.prefix_cache = true;
  return {s, s};
}

TEST(RouterTimeline, PrefixAwareFollowsTheCachedPrefix) {
  const ClusterOutcome o = simulate_cluster(trace_c(), cached_pair(), router(RouterKind::kPrefixAware), 4);
  // r1: nothing cached anywhere -> most free KV, a tie -> 0. r2: its prefix is cached
  // nowhere -> most free KV: 1 (r1 holds 8 slots of 0). r3 at 2.0: both pools are empty
  // (every block free or cached), replica 1 caches all 8 of its prompt tokens -> 1, and
  // reuses 7 of them (the last token is always computed). r4 at 2.05: replica 1 has 1
  // outstanding, 0 has none: within the default guard (32 requests) -> 1 for its cache; it
  // waits for [3,4) since r3's prefill holds [2,3).
  expect_placed(o, 1, 0, 1.0);
  expect_placed(o, 2, 1, 1.1);
  expect_placed(o, 3, 1, 3.0);
  EXPECT_EQ(o.placed.at(3).cached_tokens, 7);
  expect_placed(o, 4, 1, 4.0);
}

TEST(RouterTimeline, PrefixAwareBalanceGuardOverridesTheCache) {
  RouterSettings s = router(RouterKind::kPrefixAware);
  s.balance_abs_threshold = 0;  // any difference in load is an imbalance ...
  s.balance_rel_threshold = 1;  // ... at any ratio
  const ClusterOutcome o = simulate_cluster(trace_c(), cached_pair(), s, 4);
  // As above up to r3; r4 at 2.05 finds replica 1 with r3 (1 outstanding) and 0 empty:
  // imbalanced, so the least-loaded replica 0 takes it, cache or not: [2.05, 3.05).
  expect_placed(o, 3, 1, 3.0);
  expect_placed(o, 4, 0, 3.05);
  EXPECT_EQ(o.placed.at(4).cached_tokens, 0);
}

TEST(RouterTimeline, PrefixAwareBelowTheCacheThresholdTakesTheFreestReplica) {
  RouterSettings s = router(RouterKind::kPrefixAware);
  s.cache_threshold = 1.0;  // a match must exceed the whole prompt: never
  const ClusterOutcome o = simulate_cluster(trace_c(), cached_pair(), s, 4);
  // r3 at 2.0: both pools fully free (cached blocks count as free) -> tie -> 0.
  expect_placed(o, 3, 0, 3.0);
  EXPECT_EQ(o.placed.at(3).cached_tokens, 0);
}

TEST(RouterTimeline, IterationsCsvNamesTheReplica) {
  const ClusterOutcome o = simulate_cluster(trace_b(), {ReplicaShape{}, ReplicaShape{}}, router(RouterKind::kRoundRobin));
  const auto rows = testing::parse_csv(o.iterations_csv);
  ASSERT_FALSE(rows.empty());
  // In scheduling order: replica 0 at 0, replica 1 at 0.1, replica 0 at 1, replica 1 at 1.1.
  EXPECT_EQ(rows[0].at("replica"), "0");
  EXPECT_EQ(rows[0].at("start_s"), "0");
  EXPECT_EQ(rows[1].at("replica"), "1");
  EXPECT_EQ(rows[1].at("start_s"), "0.1");
  EXPECT_EQ(rows[1].at("index"), "0");  // each replica counts its own iterations
  EXPECT_EQ(rows[2].at("replica"), "0");
  EXPECT_EQ(rows[2].at("index"), "1");
}

}  // namespace
}  // namespace pagesim::sim
