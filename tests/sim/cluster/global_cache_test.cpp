// Global cache (global_cache_settings.h, docs/engine.md): hand-traced timelines of fetches from
// a peer replica and from the shared pool (exact first-token times: fetch + prefill), the
// leading-blocks rule (a fetch stops at the first block the global cache lacks), a local
// prefix followed by fetched blocks, and a cluster whose allocator cannot fetch. The
// randomized runs with a global cache are in cluster_simulation_test.cpp.
#include <gtest/gtest.h>

#include "cluster_harness.h"

namespace pagesim::sim {
namespace {

using testing::ClusterOutcome;
using testing::ReplicaShape;
using testing::simulate_cluster;
using testing::trace_req;

// 1,000 bytes of KV per token; blocks of 4 tokens = 4,000 bytes; 16,000 bytes/s and 0.25 s
// latency: fetching 4 blocks takes 0.25 + 16,000 / 16,000 = 1.25 s, 2 blocks 0.75 s.
// (simulate_cluster's kv_bytes_per_token: kKvBytes).
constexpr double kKvBytes = 1000;
GlobalCacheSettings network(GlobalCacheSource source, std::int64_t pool_blocks = 0) {
  GlobalCacheSettings g;
  g.enabled = true;
  g.source = source;
  g.bandwidth_gbps = 16000 * 8 / 1e9;  // 16,000 bytes/s
  g.latency_us = 0.25e6;
  g.shared_pool_gib = static_cast<double>(pool_blocks) * 4 * kKvBytes / 1073741824.0;  // pool_blocks blocks
  return g;
}

// Two replicas with prefix caches, blocks of 4, iterations of 1 s; round robin sends request
// 0 to replica 0 and request 1 to replica 1.
std::vector<ReplicaShape> two_cached() {
  std::vector<ReplicaShape> shapes(2);
  for (auto& s : shapes) s.prefix_cache = true;
  return shapes;
}

traces::TraceRequest with_hashes(traces::TraceRequest r, std::vector<std::uint64_t> ids) {
  r.hash_ids = std::move(ids);
  return r;
}

TEST(GlobalCache, FetchFromPeerTimeline) {
  // Request 0: prompt 16 (hash blocks 1 2 3 4), 2 tokens, on replica 0:
  //   0.00  prefill [0, 1]; 1.00 first token; decode [1, 2]; 2.00 finished (blocks stay cached)
  // Request 1: the same prompt, 1 token, arrives at 5.00 on replica 1, which holds nothing:
  //   its 4 blocks are on replica 0, so it hits 15 tokens (all but the last one, which is
  //   computed for its logits), fetches 4 blocks (1.25 s) and computes 1 token (1 s):
  //   5.00 + 1.25 + 1.00 = 7.25 first token and finish.
  RouterSettings rs;
  const std::vector<traces::TraceRequest> trace = {with_hashes(trace_req(0, 0.0, 16, 2), {1, 2, 3, 4}),
                                                   with_hashes(trace_req(1, 5.0, 16, 1), {1, 2, 3, 4})};
  // When replica 1 starts request 1's iteration, the source still holds its copy: request
  // 0's 4 prompt blocks cached and free (16 slots), and replica 1 holds them too now.
  int probed = 0;
  testing::IterationProbe probe = [&](std::int32_t replica, const IterationSample& s, const auto& pools) {
    if (replica != 1) return;
    EXPECT_DOUBLE_EQ(s.start_s, 5.0);
    EXPECT_DOUBLE_EQ(s.duration_s, 2.25);
    EXPECT_EQ(pools[0]->breakdown().cached_free, 16);
    EXPECT_EQ(s.memory.token_states, 16);
    ++probed;
  };
  const ClusterOutcome o =
      simulate_cluster(trace, two_cached(), rs, 4, {}, probe, network(GlobalCacheSource::kPeers), kKvBytes);
  EXPECT_EQ(probed, 1);
  EXPECT_EQ(o.placed.at(0).replica, 0);
  EXPECT_DOUBLE_EQ(o.placed.at(0).first_token_s, 1.0);
  EXPECT_DOUBLE_EQ(o.placed.at(0).finish_s, 2.0);
  EXPECT_EQ(o.placed.at(1).replica, 1);
  EXPECT_EQ(o.placed.at(1).cached_tokens, 15);
  EXPECT_DOUBLE_EQ(o.placed.at(1).first_token_s, 7.25);  // TTFT 2.25 = fetch 1.25 + prefill 1
  EXPECT_DOUBLE_EQ(o.placed.at(1).finish_s, 7.25);
  const GlobalFetchCounters& f = o.global_fetch[1];
  EXPECT_EQ(f.blocks, 4);
  EXPECT_EQ(f.hit_tokens, 15);
  EXPECT_DOUBLE_EQ(f.bytes, 16000);
  EXPECT_DOUBLE_EQ(f.seconds, 1.25);
  EXPECT_EQ(f.iterations, 1);
  EXPECT_EQ(o.global_fetch[0].blocks, 0);
  // The fetched blocks are replica 1's own cached blocks: its hit counters count them.
  EXPECT_EQ(o.prefix[1].hit_tokens, 15);
  EXPECT_EQ(o.prefix[1].hit_blocks, 4);
}

TEST(GlobalCache, WithoutItTheSameRunComputesThePrompt) {
  RouterSettings rs;
  const std::vector<traces::TraceRequest> trace = {with_hashes(trace_req(0, 0.0, 16, 2), {1, 2, 3, 4}),
                                                   with_hashes(trace_req(1, 5.0, 16, 1), {1, 2, 3, 4})};
  const ClusterOutcome o = simulate_cluster(trace, two_cached(), rs, 4);
  EXPECT_EQ(o.placed.at(1).cached_tokens, 0);
  EXPECT_DOUBLE_EQ(o.placed.at(1).first_token_s, 6.0);
  EXPECT_EQ(o.global_fetch[1].blocks, 0);
}

TEST(GlobalCache, LocalPrefixThenFetchedBlocks) {
  // Round robin alternates replicas 0 1 0 1.
  //   request 0 (blocks 1 2 3 4, prompt 16) at 0.00 on replica 0: computed, done at 1.00.
  //   request 1 (blocks 1 2, prompt 8) at 2.00 on replica 1: fetches blocks 1 2 from replica
  //     0 (0.25 + 8,000 / 16,000 = 0.75 s), hits 7 tokens (block 1: 4, block 2: 3, its last
  //     token computed), computes 1 (1 s): first token at 3.75; replica 1 caches blocks 1 2.
  //   request 2 (block 9) at 4.00 takes replica 0's turn.
  //   request 3 (blocks 1 2 3 4) at 10.00 on replica 1: blocks 1 2 local, 3 4 fetched (0.75 s),
  //     15 tokens hit (7 of them fetched), 1 computed: first token at 10.00 + 0.75 + 1 = 11.75.
  RouterSettings rs;
  const std::vector<traces::TraceRequest> trace = {
      with_hashes(trace_req(0, 0.0, 16, 1), {1, 2, 3, 4}), with_hashes(trace_req(1, 2.0, 8, 1), {1, 2}),
      with_hashes(trace_req(2, 4.0, 4, 1), {9}), with_hashes(trace_req(3, 10.0, 16, 1), {1, 2, 3, 4})};
  const ClusterOutcome o =
      simulate_cluster(trace, two_cached(), rs, 4, {}, {}, network(GlobalCacheSource::kPeers), kKvBytes);
  ASSERT_EQ(o.placed.at(1).replica, 1);
  EXPECT_EQ(o.placed.at(1).cached_tokens, 7);
  EXPECT_DOUBLE_EQ(o.placed.at(1).first_token_s, 3.75);
  ASSERT_EQ(o.placed.at(3).replica, 1);
  EXPECT_EQ(o.placed.at(3).cached_tokens, 15);
  EXPECT_DOUBLE_EQ(o.placed.at(3).first_token_s, 11.75);
  const GlobalFetchCounters& f = o.global_fetch[1];
  EXPECT_EQ(f.blocks, 4);
  EXPECT_EQ(f.hit_tokens, 7 + 7);  // request 3: block 3 serves 4 tokens, block 4 3
  EXPECT_DOUBLE_EQ(f.seconds, 0.75 + 0.75);
  EXPECT_EQ(f.iterations, 2);
  EXPECT_EQ(o.prefix[1].hit_tokens, 7 + 15);  // local + remote
}

TEST(GlobalCache, SharedPoolTimelineAndLeadingBlocksOnly) {
  // Source shared_pool: request 0's prefill completes at 1.00 and writes its 4 blocks into
  // the pool. With room for 4 blocks, request 1 on replica 1 fetches all 4 (as from a peer):
  // first token at 7.25. With room for 2, the pool keeps the last 2 written (blocks 3 4):
  // block 1 is missing, so nothing after it can be this prefix: no fetch, first token 6.00.
  RouterSettings rs;
  const std::vector<traces::TraceRequest> trace = {with_hashes(trace_req(0, 0.0, 16, 2), {1, 2, 3, 4}),
                                                   with_hashes(trace_req(1, 5.0, 16, 1), {1, 2, 3, 4})};
  const ClusterOutcome roomy =
      simulate_cluster(trace, two_cached(), rs, 4, {}, {}, network(GlobalCacheSource::kSharedPool, 4), kKvBytes);
  EXPECT_DOUBLE_EQ(roomy.placed.at(1).first_token_s, 7.25);
  EXPECT_EQ(roomy.global_fetch[1].blocks, 4);
  EXPECT_GT(roomy.pool_checks, 0);
  const ClusterOutcome small =
      simulate_cluster(trace, two_cached(), rs, 4, {}, {}, network(GlobalCacheSource::kSharedPool, 2), kKvBytes);
  EXPECT_DOUBLE_EQ(small.placed.at(1).first_token_s, 6.0);
  EXPECT_EQ(small.placed.at(1).cached_tokens, 0);
  EXPECT_EQ(small.global_fetch[1].blocks, 0);
}

TEST(GlobalCache, SharedPoolEvictsTheLeastRecentlyWritten) {
  SharedPrefixPool pool(3);
  const std::vector<alloc::BlockHash> a = {1, 2, 3}, b = {1, 4};
  pool.write(a);
  pool.write(b);  // 1 rewritten (most recent), 4 pushes out 2, the least recently written
  EXPECT_TRUE(pool.holds(1));
  EXPECT_FALSE(pool.holds(2));
  EXPECT_TRUE(pool.holds(3));
  EXPECT_TRUE(pool.holds(4));
  EXPECT_EQ(pool.size(), 3);
  EXPECT_EQ(pool.written_blocks(), 5);
  EXPECT_EQ(pool.evicted_blocks(), 1);
  pool.validate();
}

TEST(GlobalCache, EveryServingReplicaNeedsAPrefixCache) {
  std::vector<ReplicaShape> shapes = two_cached();
  shapes[1].prefix_cache = false;
  RouterSettings rs;
  EXPECT_THROW(simulate_cluster({trace_req(0, 0.0, 4, 1)}, shapes, rs, 4, {}, {}, network(GlobalCacheSource::kPeers), kKvBytes),
               SimulationError);
}

}  // namespace
}  // namespace pagesim::sim
