// The scheduler tells the allocator which prompt block hashes its waiting queue holds
// (KvAllocator::hold_pending_prefix / release_pending_prefix), so that the
// `lru_protect_waiting` eviction policy can keep them. Checked after every iteration of
// random runs of every scheduler over a paged pool with that policy, under preemption
// (recompute and swap): the hashes the allocator counts as pending are exactly the distinct
// prompt hashes of the requests in the waiting state, and none is left at the end.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <sstream>
#include <string>

#include "allocator/paged/paged_allocator.h"
#include "sim_harness.h"

namespace pagesim::sim {
namespace {

constexpr std::int64_t kHashTokens = 8;  // tokens one trace hash id covers

// Three families of prompts share their first two hash ids; the rest are unique.
std::vector<traces::TraceRequest> workload(std::uint64_t seed, bool sharing) {
  std::mt19937_64 rng(seed);
  std::vector<traces::TraceRequest> out;
  double t = 0;
  for (std::uint64_t id = 0; id < 80; ++id) {
    t += std::uniform_real_distribution<double>(0, 0.2)(rng);
    const std::int64_t prompt = std::uniform_int_distribution<std::int64_t>(1, 60)(rng);
    const std::int64_t output = std::uniform_int_distribution<std::int64_t>(1, 40)(rng);
    const std::int32_t n = sharing && id % 4 == 1 ? 2 : 1;
    auto r = testing::trace_req(id, t, prompt, output, n);
    const std::uint64_t doc = id % 3;
    for (std::int64_t i = 0; i * kHashTokens < prompt; ++i)
      r.hash_ids.push_back(i < 2 ? doc * 100 + static_cast<std::uint64_t>(i)
                                 : 10'000 + id * 100 + static_cast<std::uint64_t>(i));
    out.push_back(std::move(r));
  }
  return out;
}

// After every iteration: the allocator's pending hashes are the waiting requests' hashes.
class PendingChecker final : public IterationObserver {
 public:
  explicit PendingChecker(const alloc::PagedAllocator& a) : a_(a) {}
  void on_arrival(const Request& r) override { live_.insert(&r); }
  void on_request_finished(const Request& r) override { live_.erase(&r); }
  void on_iteration(const IterationSample&, const IterationPlan&) override {
    std::set<alloc::BlockHash> waiting;
    for (const Request* r : live_)
      if (r->state == RequestState::kWaiting) waiting.insert(r->block_hashes.begin(), r->block_hashes.end());
    if (a_.num_pending_prefix_hashes() != static_cast<std::int64_t>(waiting.size())) ++mismatches_;
    nonempty_ += !waiting.empty();
  }
  std::int64_t mismatches() const { return mismatches_; }
  std::int64_t nonempty() const { return nonempty_; }

 private:
  const alloc::PagedAllocator& a_;
  std::set<const Request*> live_;
  std::int64_t mismatches_ = 0, nonempty_ = 0;
};

struct Case {
  std::string name;
  SchedulerKind kind;
  PreemptionMode preemption = PreemptionMode::kAuto;
  bool sharing = false;
};

class WaitingPrefixTest : public ::testing::TestWithParam<Case> {};

TEST_P(WaitingPrefixTest, PendingHashesAreTheWaitingQueues) {
  const Case& c = GetParam();
  std::int64_t preempted = 0, hits = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    alloc::PagedAllocatorSettings as;
    as.num_blocks = 64;
    as.block_size = 4;
    as.num_cpu_blocks = 24;
    as.prefix_cache = true;
    as.eviction = alloc::EvictionKind::kLruProtectWaiting;
    auto owned = std::make_unique<alloc::PagedAllocator>(as);
    alloc::PagedAllocator& a = *owned;
    SchedulerSettings ss;
    ss.kind = c.kind;
    ss.max_num_batched_tokens = 256;
    ss.max_num_seqs = 16;
    ss.watermark = 0.01;
    ss.preemption = c.preemption;
    ss.chunk_tokens = 48;
    testing::Stack stack = testing::make_stack(std::move(owned), ss);
    const auto trace = workload(seed, c.sharing);
    traces::VectorSource source(trace, kHashTokens);
    ConstantCostModel cost(0.05);
    std::ostringstream req_csv;
    Metrics metrics(MetricsSettings{}, &req_csv, nullptr);
    Simulation sim(source, *stack.scheduler, cost, EngineSettings{});
    testing::InvariantChecker invariants(*stack.scheduler);
    PendingChecker pending(a);
    sim.add_observer(metrics);
    sim.add_observer(invariants);
    sim.add_observer(pending);
    ASSERT_NO_THROW(sim.run()) << c.name << " seed " << seed;
    EXPECT_EQ(pending.mismatches(), 0) << c.name << " seed " << seed;
    EXPECT_GT(pending.nonempty(), 0) << c.name << " seed " << seed;
    EXPECT_TRUE(stack.scheduler->idle());
    EXPECT_EQ(a.num_pending_prefix_hashes(), 0) << c.name << " seed " << seed;
    const Summary s = metrics.finish(sim.now(), 0);
    EXPECT_EQ(s.requests_finished, static_cast<std::int64_t>(trace.size()));
    preempted += stack.scheduler->preemptions_total() > 0;
    hits += a.stats().prefix.hit_blocks;
  }
  EXPECT_GT(preempted, 0) << "the pool is meant to be small enough to preempt";
  EXPECT_GT(hits, 0);
}

INSTANTIATE_TEST_SUITE_P(
    AllPolicies, WaitingPrefixTest,
    ::testing::Values(Case{"vllm_recompute", SchedulerKind::kVllm, PreemptionMode::kRecompute},
                      Case{"vllm_swap_sharing", SchedulerKind::kVllm, PreemptionMode::kSwap, true},
                      Case{"sarathi", SchedulerKind::kSarathi},
                      Case{"orca", SchedulerKind::kOrca},
                      Case{"static", SchedulerKind::kStatic}),
    [](const ::testing::TestParamInfo<Case>& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace pagesim::sim
