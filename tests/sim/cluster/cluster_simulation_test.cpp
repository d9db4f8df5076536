// Randomized multi-replica runs: every replica's scheduler and allocator invariants hold
// after every one of its iterations, under every router, on heterogeneous replicas (pool
// sizes, block sizes without a prefix cache, iteration times), with and without a global
// cache (peers, shared pool: fetched blocks become the fetching replica's cached blocks, so
// its allocator's identities account for them; the shared pool's are checked after every
// iteration too); every request is routed once and finishes; the same seed gives
// byte-identical iterations and requests.
#include <gtest/gtest.h>

#include <random>

#include "cluster_harness.h"

namespace pagesim::sim {
namespace {

using testing::ClusterOutcome;
using testing::ReplicaShape;
using testing::simulate_cluster;

// Bursty arrivals, prompts sharing a few prefixes (hash ids from a small alphabet), mixed
// output lengths and parallel sampling, from `seed`.
std::vector<traces::TraceRequest> random_trace(std::uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<traces::TraceRequest> trace;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += (rng() % 4 == 0) ? 0.0 : static_cast<double>(rng() % 1000) / 2000.0;
    const std::int64_t blocks = 1 + static_cast<std::int64_t>(rng() % 6);
    traces::TraceRequest r = testing::trace_req(static_cast<std::uint64_t>(i), t, blocks * 4 - static_cast<std::int64_t>(rng() % 3),
                                                1 + static_cast<std::int64_t>(rng() % 12),
                                                rng() % 5 == 0 ? 2 : 1);
    const std::uint64_t family = rng() % 3;
    for (std::int64_t b = 0; b < blocks; ++b) r.hash_ids.push_back(family * 100 + static_cast<std::uint64_t>(b));
    trace.push_back(std::move(r));
  }
  return trace;
}

std::vector<ReplicaShape> heterogeneous(bool prefix_cache) {
  std::vector<ReplicaShape> shapes(3);
  shapes[0].slots = 96;
  shapes[1].slots = 160;
  shapes[1].seconds_per_iteration = 0.5;
  shapes[2].slots = 128;
  shapes[2].seconds_per_iteration = 0.75;
  if (!prefix_cache) shapes[2].block_size = 8;
  for (auto& s : shapes) s.prefix_cache = prefix_cache;
  return shapes;
}

// With prefix caches, seeds cycle through: local caches only, a global cache of peers, a
// shared pool of 24 blocks (a third of what the trace's prefixes need).
constexpr double kKvBytes = 1000;  // KV bytes per token
GlobalCacheSettings global_cache_of(std::uint64_t seed, bool cached) {
  GlobalCacheSettings g;
  if (!cached || seed % 3 == 0) return g;
  g.enabled = true;
  g.source = seed % 3 == 1 ? GlobalCacheSource::kPeers : GlobalCacheSource::kSharedPool;
  g.bandwidth_gbps = 64000 * 8 / 1e9;  // 64,000 bytes/s, of kKvBytes per token
  g.latency_us = 0.01e6;
  g.shared_pool_gib = 24 * 4 * kKvBytes / 1073741824.0;  // 24 blocks of 4 tokens
  return g;
}

class ClusterRandomized : public ::testing::TestWithParam<RouterKind> {};

TEST_P(ClusterRandomized, InvariantsAfterEveryIterationAndEveryRequestFinishes) {
  std::int64_t preemptions = 0;  // the pools are small enough that some replica preempts
  std::int64_t fetched = 0, pool_checks = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    RouterSettings rs;
    rs.kind = GetParam();
    rs.seed = seed;
    rs.balance_abs_threshold = 2;  // let the guard fire now and then
    const bool cached = GetParam() == RouterKind::kPrefixAware || seed % 2 == 0;
    const int n = 150;
    const GlobalCacheSettings global = global_cache_of(seed, cached);
    const ClusterOutcome o =
        simulate_cluster(random_trace(seed, n), heterogeneous(cached), rs, cached ? 4 : 0, {}, {}, global, kKvBytes);
    pool_checks += o.pool_checks;
    for (std::size_t i = 0; i < o.global_fetch.size(); ++i) {
      const GlobalFetchCounters& f = o.global_fetch[i];
      fetched += f.blocks;
      if (!global.enabled) {
        EXPECT_EQ(f.blocks, 0);
      }
      // Fetched hits are a part of the replica's hits; each fetch is priced exactly.
      EXPECT_LE(f.hit_tokens, o.prefix[i].hit_tokens) << "seed " << seed << " replica " << i;
      EXPECT_LE(f.hit_tokens + f.readmission_hit_tokens, f.blocks * 4);
      if (global.enabled) {
        EXPECT_NEAR(f.seconds, static_cast<double>(f.iterations) * global.latency_us * 1e-6 + f.bytes / (global.bandwidth_gbps * 1e9 / 8),
                    1e-9);
      }
    }
    EXPECT_EQ(static_cast<int>(o.placed.size()), n) << "seed " << seed;
    std::int64_t routed = 0;
    for (std::int64_t r : o.routed_requests) routed += r;
    EXPECT_EQ(routed, n);
    EXPECT_GT(o.invariant_checks, 0);
    for (const auto& [id, p] : o.placed) {
      EXPECT_GE(p.replica, 0);
      EXPECT_LT(p.replica, 3);
      EXPECT_GE(p.finish_s, p.first_token_s);
    }
    // Determinism: the same seed, byte for byte.
    const ClusterOutcome again =
        simulate_cluster(random_trace(seed, n), heterogeneous(cached), rs, cached ? 4 : 0, {}, {}, global, kKvBytes);
    EXPECT_EQ(again.iterations_csv, o.iterations_csv) << "seed " << seed;
    EXPECT_EQ(again.requests_csv, o.requests_csv) << "seed " << seed;
    for (const auto& row : testing::parse_csv(o.iterations_csv)) preemptions += std::stoll(row.at("preemptions"));
  }
  EXPECT_GT(preemptions, 0);
  if (GetParam() == RouterKind::kPrefixAware) {  // caches on every seed: both sources ran
    EXPECT_GT(fetched, 0);
    EXPECT_GT(pool_checks, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryRouter, ClusterRandomized,
                         ::testing::Values(RouterKind::kRoundRobin, RouterKind::kLeastOutstanding, RouterKind::kLeastKv,
                                           RouterKind::kPrefixAware, RouterKind::kRandom));

TEST(ClusterSimulation, ReplicasWithPrefixCachesMustShareABlockSize) {
  std::vector<ReplicaShape> shapes = heterogeneous(true);
  shapes[2].block_size = 8;
  RouterSettings rs;
  EXPECT_THROW(simulate_cluster(random_trace(1, 4), shapes, rs, 4), SimulationError);
}

}  // namespace
}  // namespace pagesim::sim
