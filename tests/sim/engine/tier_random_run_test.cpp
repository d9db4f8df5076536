// Randomized runs through the engine with offload tiers: seeded traces of requests sharing
// prefix families on a small GPU pool, swap preemption competing with the CPU tier for the
// CPU budget. The scheduler's and allocator's invariants (tiers included: nothing lost or
// duplicated, capacities, the shared CPU pool) are checked after every iteration; the same
// seed gives the same bytes.
#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "allocator/paged/paged_allocator.h"
#include "sim/cost/constant_cost_model.h"
#include "sim/engine/simulation.h"
#include "sim/metrics/metrics.h"
#include "sim/scheduler/scheduler.h"
#include "sim_harness.h"
#include "traces/vector_source.h"

namespace pagesim::sim {
namespace {

struct RandomRun {
  std::string iterations_csv;
  Summary summary;
  std::int64_t checks = 0;
};

RandomRun run(std::uint64_t seed, alloc::TierWritePolicy policy, SchedulerKind kind) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  std::vector<traces::TraceRequest> trace;
  double t = 0;
  for (std::uint64_t id = 0; id < 400; ++id) {
    t += static_cast<double>(pick(0, 400)) / 1000.0;
    const std::int64_t prompt = pick(4, 60), family = pick(0, 15);
    traces::TraceRequest r = testing::trace_req(id, t, prompt, pick(1, 24), pick(0, 5) == 0 ? 2 : 1);
    for (std::int64_t b = 0; b * 4 < prompt; ++b)
      r.hash_ids.push_back(static_cast<std::uint64_t>(family * 100 + (b < 8 ? b : 50 + pick(0, 2) * 10 + b)));
    trace.push_back(std::move(r));
  }
  alloc::PagedAllocatorSettings as;
  as.num_blocks = 40;
  as.block_size = 4;
  as.num_cpu_blocks = 24;
  as.prefix_cache = true;
  as.offload.write_policy = policy;
  as.offload.bytes_per_block = 1e6;
  as.offload.tiers.push_back({alloc::TierKind::kCpu, 20, 1e9, 5e8, 1e-4, alloc::EvictionKind::kLru});
  as.offload.tiers.push_back({alloc::TierKind::kDisk, 60, 1e8, 5e7, 1e-3, alloc::EvictionKind::kLfu});
  alloc::PagedAllocator allocator(as);
  SchedulerSettings ss;
  ss.kind = kind;
  ss.preemption = PreemptionMode::kSwap;
  ss.chunk_tokens = 16;
  auto scheduler = make_scheduler(ss, allocator);
  traces::VectorSource source(std::move(trace), 4);
  ConstantCostModel cost(0.01, 0.001, 0.0005);
  std::ostringstream it_csv;
  MetricsSettings ms;
  ms.kv_bytes_per_token = 1e6 / 4;
  ms.block_size = 4;
  Metrics metrics(ms, nullptr, &it_csv, {&allocator});
  EngineSettings es;
  es.seed = seed;
  Simulation sim(source, *scheduler, cost, es);
  testing::InvariantChecker checker(*scheduler);
  sim.add_observer(metrics);
  sim.add_observer(checker);
  sim.run();
  RandomRun out;
  out.summary = metrics.finish(sim.now(), 0);
  out.iterations_csv = it_csv.str();
  out.checks = checker.checks();
  return out;
}

class TierRandomRun : public ::testing::TestWithParam<std::tuple<alloc::TierWritePolicy, SchedulerKind>> {};

TEST_P(TierRandomRun, InvariantsHoldAfterEveryIterationAndRunsRepeat) {
  const auto [policy, kind] = GetParam();
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const RandomRun a = run(seed, policy, kind);
    EXPECT_EQ(a.summary.requests_finished, 400);
    EXPECT_GT(a.checks, 100);
    ASSERT_TRUE(a.summary.tiers.has_value());
    const TierSummary& t = *a.summary.tiers;
    // Swapping took CPU blocks the tier held, and both tiers served hits.
    EXPECT_GT(a.summary.swap_preemptions, 0) << "seed " << seed;
    EXPECT_GT(t.cpu.loaded_blocks, 0) << "seed " << seed;
    EXPECT_GT(t.disk.loaded_blocks, 0) << "seed " << seed;
    EXPECT_EQ(t.gpu_hit_tokens + t.cpu.hit_tokens + t.disk.hit_tokens, a.summary.prefix_cache->hit_tokens);
    EXPECT_EQ(a.iterations_csv, run(seed, policy, kind).iterations_csv) << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, TierRandomRun,
                         ::testing::Combine(::testing::Values(alloc::TierWritePolicy::kWriteBack,
                                                              alloc::TierWritePolicy::kWriteThrough),
                                            ::testing::Values(SchedulerKind::kVllm, SchedulerKind::kSarathi)));

}  // namespace
}  // namespace pagesim::sim
